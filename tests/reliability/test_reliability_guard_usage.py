"""Issue 31, item 7: a caller's mistake with the guard raises a clear error (it is a bug to
fix, like the agent's own exceptions), where it used to be failed open and buried in
``report.errors`` so that a wrong integration looked like a working guard."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import ttir
from benchmark import SimDevice, make_task
from ttir import Action, AgentStep
from ttir.core.errors import GuardUsageError, ObservationTypeError

pytestmark = pytest.mark.reliability


def _obs() -> Any:
    return SimDevice().reset(make_task("SystemWifiTurnOn"))


class Waits:
    def __init__(self) -> None:
        self.calls = 0

    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: Any) -> AgentStep:
        self.calls += 1
        return AgentStep(action=Action(action_type="wait"))


@pytest.mark.parametrize("bad", ["<hierarchy/>", b"\x89PNG", {"xml": "s0.xml"}, None])
def test_a_step_with_no_observation_raises_and_names_what_was_expected(bad):
    agent = Waits()
    g = ttir.guard(agent)
    g.reset("Turn on Wi-Fi")
    with pytest.raises(ObservationTypeError, match=r"expected a ttir\.Observation, got .*Observation\.from_xml"):
        g.step(bad)
    assert agent.calls == 0 and g.report.errors == []  # nothing ran, nothing buried


def test_a_step_before_reset_raises():
    g = ttir.guard(Waits())
    with pytest.raises(GuardUsageError, match=r"before reset\(goal\)"):
        g.step(_obs())
    g.reset("Turn on Wi-Fi")
    assert g.step(_obs()).action.action_type == "wait"


def test_a_goal_that_is_not_text_raises():
    with pytest.raises(ValueError, match=r"reset\(goal=.*expected the task's goal as a str"):
        ttir.guard(Waits()).reset(["Turn on Wi-Fi"])  # type: ignore[arg-type]


def test_one_guard_stepped_from_two_threads_at_once_raises_instead_of_mixing_steps():
    inside, release = threading.Event(), threading.Event()

    class Slow(Waits):
        def step(self, obs: Any) -> AgentStep:
            inside.set()
            release.wait(30)
            return super().step(obs)

    g = ttir.guard(Slow())
    g.reset("Turn on Wi-Fi")
    obs = _obs()
    first = threading.Thread(target=g.step, args=(obs,))
    first.start()
    try:
        assert inside.wait(30)
        with pytest.raises(GuardUsageError, match="two threads"):
            g.step(obs)
    finally:
        release.set()
        first.join(30)
    assert [u.step for u in g.report.usage] == [0]  # one step recorded, numbered once
    assert g.step(obs).action.action_type == "wait"  # and the guard goes on afterwards
    assert [u.step for u in g.report.usage] == [0, 1]


def test_one_async_guard_stepped_by_two_tasks_at_once_raises():
    class SlowAsync:
        def reset(self, goal: str) -> None:
            pass

        async def step(self, obs: Any) -> AgentStep:
            await asyncio.sleep(0.2)
            return AgentStep(action=Action(action_type="wait"))

    g = ttir.guard(SlowAsync())
    g.reset("Turn on Wi-Fi")
    obs = _obs()

    async def both() -> list[Any]:
        return await asyncio.gather(g.step(obs), g.step(obs), return_exceptions=True)

    results = asyncio.run(both())
    assert sum(isinstance(r, GuardUsageError) for r in results) == 1
    assert sum(isinstance(r, AgentStep) for r in results) == 1


@pytest.mark.parametrize("shot, names", [
    (b"not a png", ["screenshot", "9 bytes", "PNG / JPEG bytes"]),
    ("shot.png", ["screenshot", "got str", "PIL.Image.open"]),
])
def test_a_screenshot_that_is_no_image_is_a_clear_error(shot, names):
    obs = _obs()
    with pytest.raises(ValueError) as err:
        ttir.Observation.from_xml(obs.to_xml(), screenshot=shot)
    for n in names:
        assert n in str(err.value)


def test_a_screenshot_larger_than_any_screen_is_refused_and_png_bytes_are_read():
    import io

    from PIL import Image

    obs = _obs()
    with pytest.raises(ValueError, match=r"20000x10 pixels; expected each side from 1 to 16384"):
        ttir.Observation.from_xml(obs.to_xml(), screenshot=Image.new("RGB", (20000, 10)))
    png = io.BytesIO()
    obs.screenshot.save(png, "PNG")
    assert ttir.Observation.from_xml(obs.to_xml(), screenshot=png.getvalue()).screen_size == obs.screen_size


def test_a_problem_with_nothing_to_try_is_counted_logged_and_told_to_the_agent():
    """An agent tapping empty space: the stuck loop is found, but its recovery had nothing to
    try; that used to leave no trace in summary() and never reach on_recovery."""
    from loguru import logger

    class TapsNothing(Waits):
        def __init__(self) -> None:
            super().__init__()
            self.told: list[dict[str, Any]] = []

        def step(self, obs: Any) -> AgentStep:
            return AgentStep(action=Action(action_type="click", x=540, y=1200))

        def on_recovery(self, info: dict[str, Any]) -> None:
            self.told.append(info)

    lines: list[str] = []
    logger.enable("ttir")  # a library is quiet until its application enables it
    sink = logger.add(lambda m: lines.append(str(m)), level="INFO")
    try:
        device = SimDevice()
        task = make_task("SystemWifiTurnOn")
        obs = device.reset(task)
        agent = TapsNothing()
        g = ttir.guard(agent)
        g.reset(task.goal)
        for _ in range(8):
            step = g.step(obs)
            device.execute(step.action)
            obs = device.observe()
    finally:
        logger.remove(sink)
        logger.disable("ttir")
    summary = g.report.summary()
    assert summary["unavailable"].get("stuck_loop", 0) >= 1
    assert any(u["diagnoser"] == "stuck_loop" and u["evidence"] for u in g.report.unavailable)
    told = [t for t in agent.told if t["outcome"] == "unavailable"]
    assert told and told[0]["diagnoser"] == "stuck_loop" and "nothing to try" in told[0]["message"]
    assert sum("stuck_loop found a problem" in line for line in lines) == 1  # logged once per episode


def test_the_guards_own_faults_fail_open_and_are_logged_once():
    from loguru import logger

    g = ttir.guard(Waits())
    g.reset("Turn on Wi-Fi")

    def broken(ctx: Any) -> Any:
        raise ZeroDivisionError("a bug inside a check")

    stuck = next(c for c in g.checks if c.name == "stuck_loop")
    stuck.diagnoser.diagnose = broken
    stuck.diagnoser.rules = broken
    warnings: list[str] = []
    logger.enable("ttir")
    sink = logger.add(lambda m: warnings.append(str(m)), level="WARNING")
    try:
        obs = _obs()
        for _ in range(5):
            assert g.step(obs).action.action_type == "wait"  # fail open: the agent's own step
    finally:
        logger.remove(sink)
        logger.disable("ttir")
    assert g.report.summary()["errors"] >= 5
    assert len([w for w in warnings if "ZeroDivisionError" in w]) <= 2  # once per kind and place, not per step
    assert any("ZeroDivisionError" in w for w in warnings)
