"""A deterministic simulated clock with locale-aware formatting."""

from __future__ import annotations

import datetime as dt
from typing import Callable

from benchmark.device import DeviceSettings

# AndroidWorld pins the emulator date; so do we (a Sunday afternoon).
EPOCH = dt.datetime(2023, 10, 15, 15, 34, 0)

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


class SimClock:
    """Time advances only when the device acts (never from the wall clock)."""

    def __init__(self, settings: Callable[[], DeviceSettings], start: dt.datetime = EPOCH):
        self._settings = settings
        self.start = start
        self.elapsed = 0.0

    def reset(self) -> None:
        self.elapsed = 0.0

    def advance(self, seconds: float) -> None:
        self.elapsed += max(0.0, seconds)

    def now(self) -> dt.datetime:
        return self.start + dt.timedelta(seconds=self.elapsed)

    def fmt_time(self, t: dt.datetime, *, suffix: bool = True) -> str:
        if self._settings().time_format == 24:
            return f"{t.hour:02d}:{t.minute:02d}"
        h = t.hour % 12 or 12
        return f"{h}:{t.minute:02d}" + (f" {'AM' if t.hour < 12 else 'PM'}" if suffix else "")

    def fmt_date(self, d: dt.date, *, short: bool = False) -> str:
        us = self._settings().date_format == "US"
        if short:
            return f"{d.month:02d}/{d.day:02d}/{d.year}" if us else f"{d.day:02d}/{d.month:02d}/{d.year}"
        if us:
            return f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"
        return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"

    def fmt_weekday(self, d: dt.date) -> str:
        us = self._settings().date_format == "US"
        return f"{_DAYS[d.weekday()]}, {_MONTHS[d.month - 1]} {d.day}" if us else f"{_DAYS[d.weekday()]} {d.day} {_MONTHS[d.month - 1]}"
