"""A deterministic simulated clock with locale-aware formatting (month and day
names, date orders and AM/PM words come from the UI language's table:
``benchmark/data/locale/<lang>.yaml``)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from benchmark.device import DeviceSettings
from benchmark.ui.i18n import DEFAULT_LANGUAGE, language_of, languages, table

# AndroidWorld pins the emulator date; so do we (a Sunday afternoon).
EPOCH = dt.datetime(2023, 10, 15, 15, 34, 0)


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

    # -- formatting ----------------------------------------------------------------------
    def _dates(self) -> dict[str, Any]:
        lang = language_of(self._settings().locale)
        own = table(lang if lang in languages() else DEFAULT_LANGUAGE).dates
        base = table(DEFAULT_LANGUAGE).dates
        return {**base, **own}

    def _fields(self, d: dt.date, dates: dict[str, Any]) -> dict[str, Any]:
        return {"weekday": dates["weekdays"][d.weekday()], "day": d.day, "day2": f"{d.day:02d}",
                "month": dates["months"][d.month - 1], "month_num": d.month, "month2": f"{d.month:02d}", "year": d.year}

    def _pattern(self, dates: dict[str, Any], key: str) -> str:
        p = dates[key]
        return p[self._settings().date_format] if isinstance(p, dict) else p

    def fmt_time(self, t: dt.datetime, *, suffix: bool = True) -> str:
        if self._settings().time_format == 24:
            return f"{t.hour:02d}:{t.minute:02d}"
        h = t.hour % 12 or 12
        if not suffix:
            return f"{h}:{t.minute:02d}"
        dates = self._dates()
        ampm = dates["am"] if t.hour < 12 else dates["pm"]
        return dates["time12"].format(hour=h, minute2=f"{t.minute:02d}", ampm=ampm)

    def fmt_date(self, d: dt.date, *, short: bool = False) -> str:
        dates = self._dates()
        return self._pattern(dates, "short" if short else "long").format(**self._fields(d, dates))

    def fmt_weekday(self, d: dt.date) -> str:
        dates = self._dates()
        return self._pattern(dates, "weekday").format(**self._fields(d, dates))
