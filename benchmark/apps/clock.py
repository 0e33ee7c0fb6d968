"""Clock (com.google.android.deskclock): Alarm, Clock, Timer and Stopwatch tabs.

The stopwatch and timers run on the device's simulated clock (``device.clock``,
2 s per action plus waits), so what they show follows the agent's actions only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable, Literal, Optional

from pydantic import BaseModel, Field

from benchmark.apps.base import App, UI
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    card,
    column,
    dialog,
    field_,
    icon_button,
    image,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

Tab = Literal["alarm", "clock", "timer", "stopwatch"]
TABS: tuple[tuple[Tab, str, str], ...] = (
    ("alarm", "Alarm", "bell"),
    ("clock", "Clock", "clock"),
    ("timer", "Timer", "timer"),
    ("stopwatch", "Stopwatch", "timer"),
)
TIMER_DIGITS = 6  # hh mm ss
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


# ------------------------------------------------------------------ data


class Alarm(BaseModel):
    id: int
    hour: int = Field(ge=0, le=23)
    minute: int = Field(ge=0, le=59)
    enabled: bool = True
    label: str = ""
    days: list[int] = Field(default_factory=list)  # 0 = Monday; empty = one-off


class Stopwatch(BaseModel):
    """Times are seconds on the device clock (``device.clock.elapsed``)."""

    running: bool = False
    accumulated: float = 0.0
    started_at: float = 0.0
    laps: list[float] = Field(default_factory=list)  # total time at each lap press

    def elapsed(self, now: float) -> float:
        return self.accumulated + (max(0.0, now - self.started_at) if self.running else 0.0)

    def start(self, now: float) -> None:
        if not self.running:
            self.running, self.started_at = True, now

    def pause(self, now: float) -> None:
        if self.running:
            self.accumulated = self.elapsed(now)
            self.running = False

    def lap(self, now: float) -> None:
        if self.running:
            self.laps.append(self.elapsed(now))

    def reset(self) -> None:
        self.running, self.accumulated, self.started_at, self.laps = False, 0.0, 0.0, []


class Timer(BaseModel):
    id: int
    length: int  # seconds, as entered
    remaining: float  # seconds left when last paused / started
    started_at: Optional[float] = None  # None while paused
    label: str = ""

    @property
    def running(self) -> bool:
        return self.started_at is not None

    def left(self, now: float) -> float:
        if self.started_at is None:
            return self.remaining
        return max(0.0, self.remaining - (now - self.started_at))


def split_timer_input(digits: str) -> tuple[int, int, int]:
    """Keypad digits (filled from the right, like the real app) as (hours, minutes, seconds)."""
    padded = digits.rjust(TIMER_DIGITS, "0")[-TIMER_DIGITS:]
    return int(padded[0:2]), int(padded[2:4]), int(padded[4:6])


def timer_digits_for(hours: int, minutes: int, seconds: int) -> str:
    """The keys to press for a duration (leading zeros need no key press)."""
    return f"{hours:02d}{minutes:02d}{seconds:02d}".lstrip("0")


class ClockData(BaseModel):
    tab: Tab = "alarm"
    alarms: list[Alarm] = Field(default_factory=list)
    next_alarm_id: int = 1
    stopwatch: Stopwatch = Field(default_factory=Stopwatch)
    timers: list[Timer] = Field(default_factory=list)
    next_timer_id: int = 1
    timer_input: str = ""

    def add_alarm(self, hour: int, minute: int, enabled: bool = True, label: str = "",
                  days: Optional[list[int]] = None) -> Alarm:
        a = Alarm(id=self.next_alarm_id, hour=hour, minute=minute, enabled=enabled, label=label, days=list(days or []))
        self.next_alarm_id += 1
        self.alarms.append(a)
        return a

    def alarms_at(self, hour: int, minute: int) -> list[Alarm]:
        return [a for a in self.alarms if a.hour == hour and a.minute == minute]

    def add_timer(self, seconds: int, now: float, start: bool = True) -> Timer:
        t = Timer(id=self.next_timer_id, length=seconds, remaining=float(seconds), started_at=now if start else None)
        self.next_timer_id += 1
        self.timers.append(t)
        return t

    @property
    def timer_setup(self) -> tuple[int, int, int]:
        return split_timer_input(self.timer_input)


@dataclass
class TabContent:
    """What a tab adds to the screen: a scrolling body, and optionally a fixed header
    below the toolbar, a FAB and a dialog."""

    body: Widget
    fab: Optional[Widget] = None
    dialog: Optional[Widget] = None
    header: Optional[Widget] = None


# ------------------------------------------------------------------ formatting


def fmt_stopwatch(seconds: float) -> str:
    """``MM:SS.hh`` (``H:MM:SS.hh`` past an hour), as the deskclock stopwatch shows it."""
    cs = int(round(seconds * 100))
    h, rem = divmod(cs, 360000)
    m, rem = divmod(rem, 6000)
    s, hundredths = divmod(rem, 100)
    if h:
        return f"{h}:{m:02d}:{s:02d}.{hundredths:02d}"
    return f"{m:02d}:{s:02d}.{hundredths:02d}"


def fmt_countdown(seconds: float) -> str:
    total = int(-(-seconds // 1))  # a countdown shows the second it is in (ceil)
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _clickable(w: Widget, fn: Callable[[], object]) -> Widget:
    w.on_click = fn
    return w


class ClockApp(App):
    package = "com.google.android.deskclock"
    label = "Clock"
    icon = "clock"
    accent = (26, 115, 232)
    order = 30
    data_model = ClockData
    data: ClockData

    @property
    def now_s(self) -> float:
        return self.device.clock.elapsed

    def _at(self, ui: UI, hour: int, minute: int) -> str:
        return ui.fmt_time(dt.datetime(2000, 1, 1, hour, minute))

    # -- the one screen: a tab body above a bottom navigation bar ---------------------------
    def screen_main(self, ui: UI) -> Screen:
        tab = self.data.tab
        title = next(lbl for key, lbl, _ in TABS if key == tab)
        content: TabContent = getattr(self, f"_tab_{tab}")(ui)
        bar = top_bar(title, actions=[icon_button("more", "More options", lambda: None, id="more_options")])
        return Screen(
            top=column(bar, content.header) if content.header is not None else bar,
            body=content.body,
            bottom=self._navigation(ui),
            fab=content.fab,
            dialog=content.dialog,
            activity=".DeskClock",
        )

    def _navigation(self, ui: UI) -> Widget:
        items = []
        for key, lbl, icon in TABS:
            on = key == self.data.tab
            item = column(
                image(icon, size=32, circle=on, bg="tonal", color="on_tonal" if on else "muted", a11y=False),
                text(lbl, id="navigation_bar_item_large_label_view" if on else "navigation_bar_item_small_label_view",
                     size=12, bold=on, text_align="center", max_lines=1),
                id=f"tab_menu_{key}", desc=lbl, on_click=(lambda k=key: self._select_tab(ui, k)),
                align="center", gap=4, pad=6, weight=1,
            )
            item.state["selected"] = on
            items.append(item)
        return row(*items, id="bottom_navigation", pad=4, gap=0, bg="surface")

    def _select_tab(self, ui: UI, tab: Tab) -> None:
        self.data.tab = tab
        ui.close_dialog()
        ui.set("scroll", 0)

    # -- Alarm ---------------------------------------------------------------------------
    def _tab_alarm(self, ui: UI) -> TabContent:
        now = ui.now()
        cards: list[Widget] = []
        expanded = ui.get("expanded", None)
        for a in sorted(self.data.alarms, key=lambda x: (x.hour, x.minute, x.id)):
            if a.days:
                summary = ", ".join(DAY_NAMES[d] for d in sorted(a.days))
            elif not a.enabled:
                summary = "Not scheduled"
            else:
                summary = "Today" if (a.hour, a.minute) > (now.hour, now.minute) else "Tomorrow"
            open_ = expanded == a.id
            extra: list[Widget] = []
            if open_:
                extra = [
                    _clickable(text(a.label or "Add label", id="edit_label", size=15, color="muted", vpad=6),
                               lambda: None),
                    row(button("Delete", lambda aid=a.id: self._delete_alarm(ui, aid), id="delete", variant="text",
                               desc="Delete"), justify="start"),
                ]
            cards.append(card(
                text(a.label, id="label", size=14, color="muted") if a.label else None,
                row(
                    _clickable(text(self._at(ui, a.hour, a.minute), id="digital_clock", size=40,
                                    color="text" if a.enabled else "muted"),
                               lambda aid=a.id: self._open_picker(ui, aid)),
                    column(weight=1),
                    Widget("switch", id="onoff", on_click=(lambda x=a: self._toggle(x)), state={"checked": a.enabled}),
                    gap=8,
                ),
                row(
                    text(summary, id="upcoming_instance_label", size=14, color="muted", weight=1),
                    icon_button("chevron_down", "Collapse alarm" if open_ else "Expand alarm",
                                lambda aid=a.id, o=open_: ui.set("expanded", None if o else aid), id="arrow"),
                    gap=8,
                ),
                *extra,
                id="alarm_card", pad=16, gap=4,
            ))
        if not cards:
            cards.append(column(spacer(40), text("No alarms", id="alarms_empty_view", size=18, color="muted",
                                                 text_align="center"), pad=16))
        cards.append(spacer(88))  # room above the FAB
        fab = Widget("icon_button", id="fab", desc="Add alarm", on_click=lambda: self._open_picker(ui, None),
                     style={"icon": "add"})
        dlg = self._picker(ui) if (ui.dialog_info or {}).get("kind") == "picker" else None
        return TabContent(scroll(*cards, id="alarm_recycler_view", pad=12, gap=12), fab=fab, dialog=dlg)

    def _toggle(self, alarm: Alarm) -> None:
        alarm.enabled = not alarm.enabled
        if alarm.enabled:
            self.device.toast(self._until_message(alarm))

    def _delete_alarm(self, ui: UI, alarm_id: int) -> None:
        self.data.alarms = [a for a in self.data.alarms if a.id != alarm_id]
        ui.set("expanded", None)
        ui.toast("Alarm deleted")

    def _until_message(self, alarm: Alarm) -> str:
        now = self.device.clock.now()
        at = now.replace(hour=alarm.hour, minute=alarm.minute, second=0, microsecond=0)
        if at <= now:
            at += dt.timedelta(days=1)
        mins = int((at - now).total_seconds() // 60)
        h, m = divmod(mins, 60)
        parts = []
        if h:
            parts.append(f"{h} hour{'s' if h != 1 else ''}")
        if m or not h:
            parts.append(f"{m} minute{'s' if m != 1 else ''}")
        return f"Alarm set for {' and '.join(parts)} from now."

    # the Material time picker in keyboard input mode (short enough for landscape)
    def _open_picker(self, ui: UI, alarm_id: Optional[int]) -> None:
        a = next((x for x in self.data.alarms if x.id == alarm_id), None)
        now = ui.now()
        hour, minute = (a.hour, a.minute) if a is not None else (now.hour, now.minute)
        h12 = self.device.settings.time_format == 12
        ui.set("picker_hour", str(hour % 12 or 12) if h12 else f"{hour:02d}")
        ui.set("picker_minute", f"{minute:02d}")
        ui.set("picker_pm", hour >= 12)
        ui.open_dialog("picker", alarm_id=alarm_id)

    def _picker(self, ui: UI) -> Widget:
        h12 = self.device.settings.time_format == 12
        pm = bool(ui.get("picker_pm", False))
        info = ui.dialog_info or {}

        def period(label: str, is_pm: bool) -> Widget:
            on = pm == is_pm
            b = button(label, lambda: ui.set("picker_pm", is_pm), id=f"material_clock_period_{label.lower()}_button",
                       variant="tonal" if on else "outlined", weight=1)
            b.state["checked"] = on
            return b

        def ok() -> None:
            hour = _parse_int(ui.get("picker_hour", ""))
            minute = _parse_int(ui.get("picker_minute", ""))
            lo, hi = (1, 12) if h12 else (0, 23)
            if hour is None or not lo <= hour <= hi or minute is None or not 0 <= minute <= 59:
                ui.toast("Enter a valid time")
                return
            if h12:
                hour = hour % 12 + (12 if pm else 0)
            alarm = next((x for x in self.data.alarms if x.id == info.get("alarm_id")), None)
            if alarm is None:
                alarm = self.data.add_alarm(hour, minute)
            else:
                alarm.hour, alarm.minute, alarm.enabled = hour, minute, True
            ui.close_dialog()
            ui.toast(self._until_message(alarm))

        body: list[Widget] = [
            text("Enter time", id="header_title", size=14, color="muted"),
            row(
                field_("picker_hour", "Hour", id="material_hour_text_input", size=28, weight=1, input_type="number"),
                text(":", size=28),
                field_("picker_minute", "Minute", id="material_minute_text_input", size=28, weight=1,
                       input_type="number"),
                gap=8,
            ),
        ]
        if h12:
            body.append(row(period("AM", False), period("PM", True), id="material_clock_period_toggle", gap=8))
        return dialog("", "", [
            button("Cancel", ui.close_dialog, id="material_timepicker_cancel_button", variant="text"),
            button("OK", ok, id="material_timepicker_ok_button", variant="text"),
        ], body=body, cls="android.widget.FrameLayout")

    # -- Clock ---------------------------------------------------------------------------
    def _tab_clock(self, ui: UI) -> TabContent:
        now = ui.now()
        return TabContent(scroll(
            spacer(24),
            text(ui.fmt_time(now), id="digital_clock", size=64, text_align="center"),
            text(self.device.clock.fmt_weekday(now.date()), id="date", size=18, color="muted", text_align="center"),
            spacer(16),
            text("No cities selected", id="cities_empty_view", size=15, color="muted", text_align="center"),
            id="cities", pad=16, gap=8,
        ))

    # -- Timer ---------------------------------------------------------------------------
    def _tab_timer(self, ui: UI) -> TabContent:
        if self.data.timers and not ui.get("adding_timer", False):
            return TabContent(self._timers_view(ui))
        return self._timer_setup(ui)

    def _timer_setup(self, ui: UI) -> TabContent:
        h, m, s = self.data.timer_setup
        entered = bool(self.data.timer_input)

        def press(d: str) -> None:
            cur = self.data.timer_input
            if not cur and d.strip("0") == "":
                return  # leading zeros do nothing
            self.data.timer_input = (cur + d)[:TIMER_DIGITS] if len(cur) < TIMER_DIGITS else cur

        def delete() -> None:
            self.data.timer_input = self.data.timer_input[:-1]

        def start() -> None:
            total = h * 3600 + m * 60 + s
            if total <= 0:
                return
            self.data.add_timer(total, self.now_s)
            self.data.timer_input = ""
            ui.set("adding_timer", False)

        def key(label: str) -> Widget:
            return button(label, lambda: press(label), id=f"timer_setup_digit_{label}", variant="tonal", weight=1, size=22)

        keys: list[Widget] = [key(str(d)) for d in range(1, 10)] + [key("00"), key("0")]
        keys.append(column(icon_button("backspace", "Delete", delete, id="timer_setup_delete"), align="center", weight=1))
        display = text(f"{h:02d}h {m:02d}m {s:02d}s", id="timer_setup_time", size=40, text_align="center",
                       color="accent" if entered else "muted")
        display.desc = f"{h} hours, {m} minutes, {s} seconds"
        controls = row(
            icon_button("play", "Start", start, id="fab", bg="tonal") if entered else None,
            justify="center", min_h=56,
        )
        if self.device.orientation == "landscape":
            # like the real app: the time beside a wide keypad, so every key fits the short screen
            keypad = column(*[row(*keys[i:i + 6], gap=8) for i in (0, 6)], gap=8, weight=2)
            return TabContent(scroll(row(column(display, controls, gap=8, weight=1), keypad, gap=24, align="start"),
                                     id="timer_setup", pad=16))
        keypad_rows = [row(*keys[i:i + 3], gap=12) for i in range(0, 12, 3)]
        # the entered time stays in view above the keypad (which scrolls on short screens)
        return TabContent(scroll(*keypad_rows, controls, id="timer_setup", pad=24, gap=12),
                          header=column(display, pad=12, id="timer_setup_header"))

    def _timers_view(self, ui: UI) -> Widget:
        now = self.now_s
        cards: list[Widget] = []
        for t in self.data.timers:
            left = t.left(now)
            done = left <= 0

            def toggle(x: Timer = t) -> None:
                if x.running:
                    x.remaining, x.started_at = x.left(self.now_s), None
                elif x.remaining > 0:
                    x.started_at = self.now_s

            def add_minute(x: Timer = t) -> None:
                x.remaining = x.left(self.now_s) + 60
                if x.running:
                    x.started_at = self.now_s

            def reset(x: Timer = t) -> None:
                x.remaining, x.started_at = float(x.length), None

            def remove(x: Timer = t) -> None:
                self.data.timers = [y for y in self.data.timers if y.id != x.id]

            cards.append(card(
                row(text(t.label or "Timer", id="timer_label", size=15, color="muted", weight=1),
                    icon_button("close", "Delete", remove, id="delete_timer")),
                text("Time's up" if done else fmt_countdown(left), id="timer_time_text", size=48, text_align="center"),
                row(
                    button("Reset", reset, id="reset", variant="outlined") if not t.running else
                    button("+1:00", add_minute, id="timer_add_time", variant="outlined"),
                    icon_button("stop", "Stop", reset, id="fab", bg="tonal") if done and t.running else
                    icon_button("pause" if t.running else "play", "Pause" if t.running else "Start", toggle,
                                id="fab", bg="tonal"),
                    justify="center", gap=24,
                ),
                id="timer_item", pad=16, gap=8,
            ))
        cards.append(row(button("Add timer", lambda: ui.set("adding_timer", True), id="timer_add", variant="tonal",
                                desc="Add timer"), justify="center"))
        return scroll(*cards, id="timer_view", pad=16, gap=12)

    # -- Stopwatch -----------------------------------------------------------------------
    def _tab_stopwatch(self, ui: UI) -> TabContent:
        sw = self.data.stopwatch
        now = self.now_s
        elapsed = sw.elapsed(now)
        laps: list[Widget] = []
        prev = 0.0
        for i, total in enumerate(sw.laps, start=1):
            laps.append(row(text(f"# {i}", size=15, color="muted", weight=1),
                            text(fmt_stopwatch(total - prev), id="lap_time", size=15, weight=1),
                            text(fmt_stopwatch(total), id="lap_total", size=15, color="muted"),
                            id="lap_item", pad=8))
            prev = total
        laps.reverse()  # newest lap first, like the app
        if sw.running:
            left = button("Lap", lambda: sw.lap(self.now_s), id="left_button", variant="outlined", desc="Lap")
            right = None
        elif elapsed > 0:
            left = button("Reset", sw.reset, id="left_button", variant="outlined", desc="Reset")
            right = button("Share", lambda: None, id="right_button", variant="outlined", desc="Share")
        else:
            left = right = None
        fab = icon_button("pause" if sw.running else "play", "Pause" if sw.running else "Start",
                          (lambda: sw.pause(self.now_s)) if sw.running else (lambda: sw.start(self.now_s)),
                          id="fab", bg="tonal")
        time_text = text(fmt_stopwatch(elapsed), id="stopwatch_time_text", size=56, text_align="center")
        return TabContent(scroll(
            spacer(16),
            time_text,
            row(left, fab, right, justify="center", gap=24, min_h=64, id="stopwatch_controls"),
            *laps,
            id="stopwatch", pad=16, gap=12,
        ))


def _parse_int(value: object) -> Optional[int]:
    s = str(value).strip()
    return int(s) if s.isdigit() else None
