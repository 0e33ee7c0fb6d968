"""Clock tasks (AndroidWorld: ClockStopWatchRunning, ClockStopWatchPausedVerify,
ClockTimerEntry; plus alarm creation). Verifiers read the Clock app's state."""

from __future__ import annotations

import random
from typing import Any, Optional

from benchmark.apps.clock import ClockApp, ClockData, timer_digits_for
from benchmark.plan import PlanStep, T, enter, open_app, tap, type_into
from benchmark.sim.clock import EPOCH
from benchmark.tasks.base import Task


def _clock(device: Any) -> ClockData:
    return device.app(ClockApp.package).data


def seed_alarms(data: ClockData, rng: random.Random, n: int, avoid: Optional[set[tuple[int, int]]] = None) -> None:
    """Existing alarms (up to ``n`` in all): one-off and weekday alarms, some switched off."""
    avoid = avoid or set()
    while len(data.alarms) < n:
        hour, minute = rng.randint(5, 22), rng.choice(range(0, 60, 5))
        if (hour, minute) in avoid or data.alarms_at(hour, minute):
            continue
        days = [0, 1, 2, 3, 4] if rng.random() < 0.3 else []
        data.add_alarm(hour, minute, enabled=rng.random() < 0.6, days=days)


def fmt_12h(hour: int, minute: int) -> str:
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


class _ClockTask(Task):
    abstract = True
    apps = (ClockApp.package,)

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        seed_alarms(_clock(device), rng, rng.randint(1, 3))


class ClockStopWatchRunning(_ClockTask):
    template = "Run the stopwatch."
    reference_steps = 3
    tags = ("clock",)

    def verify(self, device: Any) -> bool:
        return _clock(device).stopwatch.running

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Clock"), tap(T(desc="Stopwatch")), tap(T(desc="Start"))]


class ClockStopWatchPausedVerify(_ClockTask):
    template = "Pause the stopwatch."
    reference_steps = 3
    tags = ("clock",)

    def setup(self, device: Any) -> None:
        super().setup(device)
        rng = random.Random(self.seed + 1)
        sw = _clock(device).stopwatch
        # started a while ago (before the episode), still running
        sw.accumulated = round(rng.uniform(5, 600), 2)
        sw.start(device.clock.elapsed)
        if rng.random() < 0.5:
            sw.laps = [round(sw.accumulated * 0.4, 2)]

    def verify(self, device: Any) -> bool:
        sw = _clock(device).stopwatch
        return not sw.running and sw.elapsed(device.clock.elapsed) > 0

    def reference_solution(self) -> list[PlanStep]:
        return [open_app("Clock"), tap(T(desc="Stopwatch")), tap(T(desc="Pause"))]


class ClockTimerEntry(_ClockTask):
    template = "Create a timer with {hours} hours, {minutes} minutes, and {seconds} seconds. Do not start the timer."
    reference_steps = 8  # open, Timer tab, up to six digit keys
    tags = ("clock", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        while True:
            p = {"hours": rng.randint(0, 23), "minutes": rng.randint(0, 59), "seconds": rng.randint(0, 59)}
            if any(p.values()):
                return p

    def verify(self, device: Any) -> bool:
        c = _clock(device)
        wanted = (self.params["hours"], self.params["minutes"], self.params["seconds"])
        return c.timer_setup == wanted and not c.timers

    def reference_solution(self) -> list[PlanStep]:
        keys = timer_digits_for(self.params["hours"], self.params["minutes"], self.params["seconds"])
        return [open_app("Clock"), tap(T(desc="Timer")), *[tap(T(id=f"timer_setup_digit_{d}")) for d in keys]]


class ClockAlarmCreate(_ClockTask):
    template = "Create an alarm for {time}."
    reference_steps = 8
    tags = ("clock", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        # morning times read the same on 12- and 24-hour clocks, so one plan fits both settings
        hour, minute = rng.randint(1, 11), rng.randint(0, 59)
        return {"hour": hour, "minute": minute, "time": fmt_12h(hour, minute)}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        c = _clock(device)
        h, m = self.params["hour"], self.params["minute"]
        # a trap: the same clock time on the other half of the day
        c.add_alarm((h + 12) % 24, m, enabled=False)
        seed_alarms(c, rng, rng.randint(2, 4), avoid={(h, m)})
        c.tab = rng.choice(["clock", "timer", "stopwatch"])  # the app opens where the user left it

    def verify(self, device: Any) -> bool:
        return any(a.enabled for a in _clock(device).alarms_at(self.params["hour"], self.params["minute"]))

    def reference_solution(self) -> list[PlanStep]:
        # The picker opens on the current time (an afternoon); a 12-hour clock needs AM
        # tapped, a 24-hour clock shows no AM/PM toggle (the optional step is skipped).
        h, m = self.params["hour"], self.params["minute"]
        steps = [
            open_app("Clock"),
            tap(T(desc="Alarm")),
            tap(T(desc="Add alarm")),
            type_into(T(id="material_hour_text_input"), str(h)),
            type_into(T(id="material_minute_text_input"), f"{m:02d}"),
            enter(),  # Done: hides the keyboard
        ]
        if EPOCH.hour >= 12:
            steps.append(tap(T("AM", id="material_clock_period_am_button"), optional=True))
        return steps + [tap(T("OK", id="material_timepicker_ok_button"))]
