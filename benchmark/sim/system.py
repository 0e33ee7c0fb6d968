"""System UI of the simulated phone: the system bars (where they go for the
orientation and navigation mode), the status bar, the navigation bar, recents and
the notification shade with quick settings. The home screen is
:mod:`benchmark.sim.launcher`, the soft keyboard :mod:`benchmark.sim.keyboard`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from benchmark.sim.keyboard import IME
from benchmark.ui import tokens
from benchmark.ui.layout import Box
from benchmark.ui.metrics import Metrics
from benchmark.ui.widgets import (
    Widget,
    button,
    column,
    icon_button,
    image,
    row,
    scroll,
    spacer,
    text,
)

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

SYSTEMUI = "com.android.systemui"
LAUNCHER = "com.google.android.apps.nexuslauncher"
CARRIER = "T-Mobile"  # the emulator's network operator name
BATTERY_PERCENT = 100  # the emulator's battery: always full and charging-free

__all__ = ["IME", "LAUNCHER", "SYSTEMUI", "Bars", "Notification", "SystemState", "bars", "nav_bar", "recents",
           "shade", "status_bar"]


@dataclass
class Notification:
    """A posted notification; ``target`` is the package tapping it opens."""

    title: str
    body: str
    app_label: str
    target: str = ""
    time: str = ""


@dataclass
class SystemState:
    """Quick-settings toggles and posted notifications."""

    wifi: bool = True
    bluetooth: bool = False
    airplane: bool = False
    dnd: bool = False
    flashlight: bool = False
    notifications: list[Notification] = field(default_factory=list)


@dataclass(frozen=True)
class Bars:
    """Where the system bars are for one screen configuration (pixels)."""

    size: tuple[int, int]
    status: Box
    nav: Box
    side: bool  # three-button navigation on the right edge (a phone in landscape)
    gesture: bool  # gesture navigation: a thin strip with the pill, no buttons

    @property
    def app(self) -> Box:
        """The window area between the bars."""
        w, h = self.size
        if self.side:
            return (0, self.status[3], self.nav[0], h)
        return (0, self.status[3], w, self.nav[1])


def bars(m: Metrics, orientation: str, navigation_mode: str) -> Bars:
    """Android's system-bar geometry: the status bar on top; three-button navigation at
    the bottom in portrait and on the right side in landscape (phones keep it at the
    device's physical bottom); gesture navigation a thin strip at the bottom in both."""
    w, h = m.width, m.height
    sb = m.dp(tokens.STATUS_BAR)
    if navigation_mode == "gesture":
        return Bars((w, h), (0, 0, w, sb), (0, h - m.dp(tokens.NAV_BAR_GESTURE), w, h), side=False, gesture=True)
    if orientation == "landscape":
        nw = m.dp(tokens.NAV_BAR_SIDE)
        return Bars((w, h), (0, 0, w - nw, sb), (w - nw, 0, w, h), side=True, gesture=False)
    return Bars((w, h), (0, 0, w, sb), (0, h - m.dp(tokens.NAV_BAR), w, h), side=False, gesture=False)


def status_bar(dev: "SimDevice") -> Widget:
    """Clock on the left; signal, Wi-Fi and battery on the right (ids and descriptions as
    SystemUI reports them). Transparent: the window beneath shows through."""
    now = dev.clock.now()
    s = dev.system
    size = tokens.STATUS_ICON
    icons: list[Widget] = []
    if s.airplane:
        icons.append(image("plane", desc="Airplane mode.", size=size, color="text", id="airplane"))
    else:
        icons.append(Widget("row", id="mobile_combo", cls="android.widget.FrameLayout", desc=f"{CARRIER}, signal full.",
                            children=[image("signal", size=size, color="text", id="mobile_signal")], style={"gap": 0}))
    if s.wifi and not s.airplane:
        icons.append(Widget("row", id="wifi_combo", cls="android.widget.FrameLayout",
                            children=[image("wifi_filled", desc="Wifi signal full.", size=size, color="text", id="wifi_signal")],
                            style={"gap": 0}))
    if s.bluetooth:
        icons.append(image("bluetooth", desc="Bluetooth on.", size=size, color="text", id="bluetooth"))
    if s.dnd:
        icons.append(image("dnd", desc="Do Not Disturb.", size=size, color="text", id="dnd"))
    return row(
        text(dev.clock.fmt_time(now, suffix=False), id="clock", size=14, color="text"),
        column(weight=1),
        row(*icons, id="statusIcons", gap=6),
        image("battery", desc=f"Battery {BATTERY_PERCENT} percent.", size=size, color="text", id="battery",
              cls="android.view.View"),
        id="status_bar", gap=6, hpad=tokens.STATUS_BAR_PAD, min_h=tokens.STATUS_BAR, cls="android.widget.FrameLayout",
    )


def nav_bar(dev: "SimDevice", b: Bars, m: Metrics, ime_shown: bool) -> Widget:
    """The navigation bar: three buttons (Back turns into a down arrow while the keyboard
    is up, and the input-method switcher appears), or the gesture pill."""
    if b.gesture:
        handle = Widget("column", id="home_handle", cls="android.view.View",
                        style={"w": tokens.GESTURE_HANDLE_W, "min_h": tokens.GESTURE_HANDLE_H, "bg": "handle",
                               "radius": tokens.GESTURE_HANDLE_H / 2, "emit": True})
        return row(handle, id="navigation_bar_frame", justify="center", min_h=tokens.NAV_BAR_GESTURE,
                   cls="android.widget.FrameLayout")
    back = icon_button("nav_back_ime" if ime_shown else "nav_back", "Back", dev.press_back, id="back",
                       cls="android.widget.ImageView")
    home = icon_button("home", "Home", dev.go_home, id="home", cls="android.widget.ImageView")
    overview = icon_button("recents", "Overview", dev.open_recents, id="recent_apps", cls="android.widget.ImageView")
    switcher = icon_button("keyboard", "Switch input method", lambda: None, id="ime_switcher",
                           cls="android.widget.ImageView", box=36) if ime_shown else None
    if b.side:
        # on the right edge the buttons keep their physical order: Back nearest the bottom
        h_dp = (b.nav[3] - b.nav[1]) / m.px_per_dp
        gap = tokens.NAV_BUTTON_GAP * 0.75
        top = max(0.0, (h_dp - 3 * tokens.TOUCH - 2 * gap) / 2)
        return column(spacer(top), overview, spacer(gap), home, spacer(gap), back, id="navigation_bar_frame",
                      align="center", cls="android.widget.FrameLayout", min_h=h_dp)
    # the three buttons stay centred; the switcher takes the end of the bar
    return row(
        column(weight=1),
        row(back, home, overview, id="nav_buttons", gap=tokens.NAV_BUTTON_GAP),
        row(switcher, weight=1, justify="end") if switcher is not None else column(weight=1),
        id="navigation_bar_frame", gap=0, min_h=tokens.NAV_BAR, cls="android.widget.FrameLayout",
    )


def recents(dev: "SimDevice") -> Widget:
    cards: list[Widget] = []
    for pkg in dev.recents:
        app = dev.apps[pkg]
        cards.append(
            column(
                row(image(app.icon, size=28, circle=True, bg=app.accent, color=(255, 255, 255), a11y=False),
                    text(app.label, size=16, a11y=False), gap=12, a11y=False),
                Widget("skeleton", style={"h": 180, "frac": 1.0, "a11y": False}),
                id="snapshot", desc=app.label, on_click=(lambda p=pkg: dev.switch_to(p)),
                pad=16, gap=12, bg="surface", radius=16,
            )
        )
    if not cards:
        cards.append(text("No recent items", id="empty", size=16, color="muted", text_align="center"))
    actions = row(button("Clear all", dev.clear_recents, id="clear_all", variant="tonal"), justify="center")
    return column(
        scroll(*cards, id="overview_panel", state_key="scroll", pad=24, gap=24),
        actions,
        id="overview", bg="launcher_bg",
    )


def _tile(label: str, on: bool, icon: str, toggle: Callable[[], Any], tid: str) -> Widget:
    return Widget(
        "row",
        cls="android.widget.Switch",
        id=tid,
        text=label,
        desc="",
        on_click=toggle,
        children=[image(icon, size=22, color="on_accent" if on else "text", a11y=False),
                  text(label, size=14, color="on_accent" if on else "text", weight=1, a11y=False, max_lines=1)],
        style={"pad": 14, "gap": 10, "bg": "tile_on" if on else "tile_off", "radius": 24, "weight": 1, "min_h": 64},
        state={"checked": on},
    )


def shade(dev: "SimDevice") -> Widget:
    s = dev.system

    def flip(attr: str) -> Callable[[], None]:
        return lambda: dev.toggle_system(attr)

    tiles = [
        ("Internet", s.wifi and not s.airplane, "wifi", flip("wifi"), "internet_tile"),
        ("Bluetooth", s.bluetooth, "bluetooth", flip("bluetooth"), "bluetooth_tile"),
        ("Do Not Disturb", s.dnd, "dnd", flip("dnd"), "dnd_tile"),
        ("Flashlight", s.flashlight, "flashlight", flip("flashlight"), "flashlight_tile"),
        ("Dark theme", dev.settings.dark_theme, "dark_theme", lambda: dev.configure(dark_theme=not dev.settings.dark_theme), "dark_tile"),
        ("Airplane mode", s.airplane, "plane", flip("airplane"), "airplane_tile"),
    ]
    rows = [row(*[_tile(*t) for t in tiles[i:i + 2]], gap=8) for i in range(0, len(tiles), 2)]
    now = dev.clock.now()
    notes: list[Widget] = []
    for i, n in enumerate(s.notifications):
        notes.append(
            column(
                text(n.app_label, size=12, color="muted", a11y=False),
                text(n.title, id="title", size=16),
                text(n.body, id="text", size=14, color="muted", max_lines=2),
                id="expandableNotificationRow", desc=f"{n.app_label} notification: {n.title}",
                on_click=(lambda k=i: dev.open_notification(k)), pad=16, gap=4, bg="surface", radius=20,
            )
        )
    if notes:
        notes.append(row(button("Clear all", dev.clear_notifications, id="dismiss_text", variant="text"), justify="end"))
    else:
        notes.append(text("No notifications", id="no_notifications", size=14, color="muted", text_align="center"))
    return column(
        scroll(
            row(text(dev.clock.fmt_time(now, suffix=False), id="clock", size=28),
                text(dev.clock.fmt_weekday(now.date()), id="date", size=14, color="muted", weight=1), gap=16),
            *rows,
            row(image("sun", size=24, color="text", a11y=False),
                Widget("slider", id="slider", desc="Display brightness", on_change=dev.set_brightness_fraction,
                       state={"value": dev.settings.brightness / 255.0, "lo": 0.0, "hi": 1.0}, style={"weight": 1}),
                id="brightness_slider_row", gap=8, emit=True),
            spacer(8),
            *notes,
            id="notification_stack_scroller", state_key="shade_scroll", pad=16, gap=12,
        ),
        id="notification_panel", bg="shade_bg",
    )
