"""Settings (com.android.settings): network, Bluetooth, display (brightness, dark
theme, font size), date & time. Writes go to the device's real settings."""

from __future__ import annotations

from benchmark.apps.base import App, UI
from benchmark.ui.widgets import Screen, Widget, column, icon_button, list_item, scroll, slider, switch, text, top_bar

FONT_SIZES = (("Small", 0.85), ("Default", 1.0), ("Large", 1.15), ("Largest", 1.3))


class SettingsApp(App):
    package = "com.android.settings"
    label = "Settings"
    icon = "settings"
    accent = (11, 87, 208)
    order = 90

    def _page(self, ui: UI, title: str, *items: Widget, activity: str = ".SubSettings") -> Screen:
        return Screen(
            top=top_bar(title, back=ui.pop if len(self.stack) > 1 else None),
            body=scroll(*items, id="recycler_view"),
            activity=activity,
        )

    def screen_main(self, ui: UI) -> Screen:
        s = self.device.system
        entries = [
            ("Network & internet", "Wi-Fi, mobile, data usage, hotspot" if s.wifi else "Wi-Fi off", "wifi", "network"),
            ("Connected devices", "Bluetooth, pairing", "bluetooth", "connected"),
            ("Apps", "Recent apps, default apps", "apps", None),
            ("Notifications", "Notification history, conversations", "bell", None),
            ("Battery", "100%", "flashlight", None),
            ("Display", "Dark theme, font size, brightness", "sun", "display"),
            ("Sound & vibration", "Volume, haptics, Do Not Disturb", "bell", None),
            ("Storage", "34% used - 84.3 GB free", "folder", None),
            ("Wallpaper & style", "Colors, themed icons, app grid", "star", None),
            ("Accessibility", "Display, interaction, audio", "person", None),
            ("Security & privacy", "App security, device lock", "shield", None),
            ("Location", "On - 3 apps have access to location", "globe", None),
            ("Safety & emergency", "Emergency SOS, medical info, alerts", "info", None),
            ("Passwords & accounts", "Saved passwords, autofill, synced accounts", "lock", None),
            ("Digital Wellbeing & parental controls", "Screen time, app timers, bedtime schedules", "clock", None),
            ("System", "Languages, gestures, time, backup", "info", "system"),
            ("About phone", "Pixel 6", "phone", "about"),
        ]
        items = [
            list_item(title, summary, icon=icon, id="dashboard_tile", title_id="android:id/title",
                      subtitle_id="android:id/summary",
                      on_click=(lambda r=route: ui.push(r)) if route else (lambda: None))
            for title, summary, icon, route in entries
        ]
        return Screen(
            top=top_bar("Settings", actions=[icon_button("search", "Search settings", lambda: None, id="search_action_bar")]),
            body=scroll(*items, id="recycler_view"),
            activity=".Settings",
        )

    def screen_network(self, ui: UI) -> Screen:
        s = self.device.system
        return self._page(
            ui, "Network & internet",
            switch("Wi-Fi", s.wifi and not s.airplane, lambda v: self._set("wifi", v), id="wifi_switch",
                   summary="AndroidWifi" if s.wifi and not s.airplane else "Off"),
            switch("Airplane mode", s.airplane, lambda v: self._set("airplane", v), id="airplane_switch"),
            list_item("Data Saver", "Off", id="data_saver", on_click=lambda: None),
        )

    def screen_connected(self, ui: UI) -> Screen:
        s = self.device.system
        return self._page(
            ui, "Connected devices",
            switch("Bluetooth", s.bluetooth, lambda v: self._set("bluetooth", v), id="bluetooth_switch",
                   summary="On" if s.bluetooth else "Off"),
            list_item("Pair new device", icon="add", id="pair_new", on_click=lambda: None),
        )

    def screen_display(self, ui: UI) -> Screen:
        st = self.device.settings
        pct = round(st.brightness / 255 * 100)
        return self._page(
            ui, "Display",
            list_item("Brightness level", f"{pct}%", id="brightness", on_click=lambda: ui.push("brightness"),
                      title_id="android:id/title", subtitle_id="android:id/summary"),
            switch("Dark theme", st.dark_theme, lambda v: self.device.configure(dark_theme=v), id="dark_ui_mode"),
            list_item("Font size", self._font_label(st.font_scale), id="font_size", on_click=lambda: ui.push("font"),
                      title_id="android:id/title", subtitle_id="android:id/summary"),
            list_item("Screen timeout", "After 30 seconds of inactivity", id="screen_timeout", on_click=lambda: None,
                      title_id="android:id/title", subtitle_id="android:id/summary"),
        )

    def screen_brightness(self, ui: UI) -> Screen:
        st = self.device.settings
        return self._page(
            ui, "Brightness level",
            text(f"{round(st.brightness / 255 * 100)}%", id="brightness_value", size=32, text_align="center", vpad=16),
            slider(st.brightness / 255.0, lambda v: self.device.configure(brightness=int(round(v * 255))),
                   id="seekbar", desc="Brightness level"),
            text("Drag the slider to adjust the screen brightness.", size=14, color="muted", vpad=16),
        )

    def screen_font(self, ui: UI) -> Screen:
        from benchmark.ui.widgets import radio

        cur = self.device.settings.font_scale
        return self._page(
            ui, "Font size",
            text("Preview: the quick brown fox jumps over the lazy dog.", id="preview", size=16, vpad=16),
            *[radio(name, abs(cur - v) < 0.01, (lambda v=v: self.device.configure(font_scale=v)), id=f"font_{name.lower()}")
              for name, v in FONT_SIZES],
        )

    def screen_system(self, ui: UI) -> Screen:
        return self._page(
            ui, "System",
            list_item("Languages", "English (United States)", id="languages", on_click=lambda: None),
            list_item("Date & time", "GMT+00:00", id="date_time", on_click=lambda: ui.push("datetime")),
            list_item("Backup", "Off", id="backup", on_click=lambda: None),
        )

    def screen_datetime(self, ui: UI) -> Screen:
        st = self.device.settings
        now = ui.now()
        return self._page(
            ui, "Date & time",
            list_item("Date", ui.fmt_date(now.date()), id="date"),
            list_item("Time", ui.fmt_time(now), id="time"),
            switch("Use 24-hour format", st.time_format == 24,
                   lambda v: self.device.configure(time_format=24 if v else 12), id="auto_24hour",
                   summary=f"{ui.fmt_time(now)}"),
        )

    def screen_about(self, ui: UI) -> Screen:
        return self._page(
            ui, "About phone",
            list_item("Device name", "Pixel 6", id="device_name"),
            list_item("Android version", "13", id="firmware_version"),
            list_item("Model", "Pixel 6", id="model"),
        )

    # -- helpers --------------------------------------------------------------------------
    def _set(self, attr: str, value: bool) -> None:
        setattr(self.device.system, attr, value)

    @staticmethod
    def _font_label(scale: float) -> str:
        best = min(FONT_SIZES, key=lambda fv: abs(fv[1] - scale))
        return best[0] if abs(best[1] - scale) < 0.01 else f"{scale:.2f}x"
