"""System UI of the simulated phone: status bar, navigation bar, launcher,
recents, notification shade with quick settings, and the soft keyboard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from benchmark.ui.widgets import (
    Widget,
    button,
    column,
    icon_button,
    image,
    row,
    scroll,
    slider,
    spacer,
    text,
)

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

SYSTEMUI = "com.android.systemui"
LAUNCHER = "com.google.android.apps.nexuslauncher"
IME = "com.google.android.inputmethod.latin"

STATUS_BAR_DP = 28
NAV_BAR_DP = 48


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


def status_bar(dev: "SimDevice") -> Widget:
    now = dev.clock.now()
    s = dev.system
    icons = []
    if s.wifi and not s.airplane:
        icons.append(image("wifi", desc="Wifi signal full.", size=16, color="text", id="wifi_signal"))
    if s.airplane:
        icons.append(image("plane", desc="Airplane mode.", size=16, color="text", id="airplane"))
    if s.bluetooth:
        icons.append(image("bluetooth", desc="Bluetooth on.", size=16, color="text", id="bluetooth"))
    return row(
        text(dev.clock.fmt_time(now, suffix=False), id="clock", size=14, color="text"),
        column(weight=1),
        *icons,
        text("100%", id="battery", size=13, color="text"),
        id="status_bar", pad=6, gap=6, bg="status_bg", min_h=STATUS_BAR_DP,
    )


def nav_bar(dev: "SimDevice") -> Widget:
    return row(
        icon_button("nav_back", "Back", dev.press_back, id="back"),
        icon_button("home", "Home", dev.go_home, id="home"),
        icon_button("recents", "Overview", dev.open_recents, id="recent_apps"),
        id="navigation_bar_frame", gap=96, justify="center", bg="nav_bg", min_h=NAV_BAR_DP,
    )


def launcher(dev: "SimDevice") -> Widget:
    cells = []
    for app in dev.launcher_apps():
        cells.append(
            Widget(
                "column",
                cls="android.widget.TextView",
                id="icon",
                text=app.label,
                desc=app.label,
                on_click=(lambda a=app: dev.launch(a.package)),
                children=[
                    image(app.icon, size=56, circle=True, bg=app.accent, color=(255, 255, 255), a11y=False),
                    text(app.label, size=12, text_align="center", max_lines=1, a11y=False),
                ],
                style={"gap": 6, "align": "center", "pad": 4},
            )
        )
    today = dev.clock.now().date()
    from benchmark.ui.widgets import grid

    return column(
        spacer(24),
        text(dev.clock.fmt_weekday(today), id="date", size=22, color="text", text_align="center"),
        spacer(24),
        grid(cells, columns=4 if dev.orientation == "portrait" else 7, id="workspace", cell_h=96, gap=8),
        spacer(16),
        row(
            image("search", size=24, color="muted", a11y=False),
            text("Search", size=16, color="muted", weight=1, a11y=False),
            id="search_container_hotseat", on_click=lambda: None, pad=12, gap=12, bg="surface", radius=28,
        ),
        id="launcher", pad=16, bg="launcher_bg",
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
        ("Do Not Disturb", s.dnd, "moon", flip("dnd"), "dnd_tile"),
        ("Flashlight", s.flashlight, "flashlight", flip("flashlight"), "flashlight_tile"),
        ("Dark theme", dev.settings.dark_theme, "moon", lambda: dev.configure(dark_theme=not dev.settings.dark_theme), "dark_tile"),
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


KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def keyboard(dev: "SimDevice") -> Widget:
    # landscape keyboards are flatter (Gboard keeps about half the screen height)
    key_h = 44 if dev.orientation == "portrait" else 30
    key_sp = 18 if dev.orientation == "portrait" else 14

    def key(ch: str, label: str = "", weight: float = 1, on_click: Callable[[], Any] | None = None) -> Widget:
        return Widget(
            "button", text=label or ch, on_click=on_click or (lambda c=ch: dev.type_text(c)),
            style={"variant": "filled", "bg": "key_bg", "color": "text", "weight": weight, "size": key_sp,
                   "a11y": False, "min_h": key_h, "vpad": 6},
        )

    rows: list[Widget] = [spacer(4)]
    for r in KEY_ROWS:
        rows.append(row(*[key(c) for c in r], gap=4, pad=0))
    def icon_key(icon: str, desc: str, on_click: Callable[[], Any]) -> Widget:
        return Widget("icon_button", desc=desc, on_click=on_click,
                      style={"icon": icon, "bg": "key_bg", "weight": 1.5, "a11y": False, "box": key_h})

    rows.append(row(icon_key("back", "Delete", dev.delete_char), key(" ", "space", 5),
                    icon_key("check", "Enter", dev.keyboard_enter), gap=4))
    return column(*rows, id="keyboard_holder", pad=6, gap=4 if dev.orientation == "portrait" else 2, bg="keyboard_bg")
