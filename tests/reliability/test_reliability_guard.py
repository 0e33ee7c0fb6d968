"""Issue 14, items 4 and 14: the wrapped agent's own exceptions are its own, and a plain
``async def`` callable is guarded like any async agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import ttir
from benchmark import SimDevice, make_task
from ttir import Action, AgentStep, TTIRConfig

pytestmark = pytest.mark.reliability

TASK = "SystemWifiTurnOn"


def _obs() -> Any:
    return SimDevice().reset(make_task(TASK))


class AgentBug(Exception):
    pass


class Buggy:
    """Raises on its first step, exactly as a user's agent with a bug would."""

    def __init__(self) -> None:
        self.calls = 0
        self.raised: list[BaseException] = []

    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: Any) -> AgentStep:
        self.calls += 1
        exc = AgentBug(f"bug in the agent, call {self.calls}")
        self.raised.append(exc)
        raise exc


class AsyncBuggy(Buggy):
    async def step(self, obs: Any) -> AgentStep:  # type: ignore[override]
        return Buggy.step(self, obs)


CONFIGS = {"guard-rules": TTIRConfig.with_mode("rules"), "guard-off": TTIRConfig(enabled=False),
           "guard-cascade-no-model": TTIRConfig.with_mode("cascade")}


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_agents_exception_propagates_unchanged_after_one_call(config, kind):
    inner = Buggy() if kind == "sync" else AsyncBuggy()
    agent = ttir.guard(inner, config=config)
    agent.reset("Turn on Wi-Fi")
    obs = _obs()
    with pytest.raises(AgentBug) as info:
        if kind == "sync":
            agent.step(obs)
        else:
            asyncio.run(agent.step(obs))
    assert inner.calls == 1  # not called again by a fail-open path
    assert info.value is inner.raised[0] and info.value.__traceback__ is not None
    assert agent.report.errors == []  # the user's bug, not a guard failure
    assert not [e for e in agent.events if e["event"] == "guard_error"]


def test_an_agent_returning_garbage_is_its_own_error():
    agent = ttir.guard(lambda obs: 42)
    agent.reset("Turn on Wi-Fi")
    with pytest.raises(TypeError, match="an agent step must return"):
        agent.step(_obs())
    assert agent.report.errors == []


def test_the_guard_still_fails_open_on_its_own_errors():
    class Boom:
        name = "interference"
        mode = "rules"

        def diagnose(self, ctx: Any) -> Any:
            raise RuntimeError("guard bug")

        rules = diagnose

    calls = []

    def agent_fn(obs: Any) -> Action:
        calls.append(1)
        return Action(action_type="wait", seconds=0)

    agent = ttir.guard(agent_fn)
    agent._core.check("interference").diagnoser = Boom()
    agent.reset("Turn on Wi-Fi")
    step = agent.step(_obs())
    assert step.action.action_type == "wait" and len(calls) == 1
    assert agent.report.errors and "guard bug" in agent.report.errors[0]["error"]  # the guard's own failure: recorded


# ------------------------------------------------------------------ item 14: async fn


def test_a_plain_async_function_is_guarded():
    seen: list[Any] = []

    async def my_agent(obs: Any) -> Action:
        seen.append(obs)
        await asyncio.sleep(0)
        return Action(action_type="wait", seconds=1)

    agent = ttir.guard(my_agent)
    assert isinstance(agent, ttir.AsyncGuardedAgent)
    agent.reset("Turn on Wi-Fi")
    obs = _obs()

    async def two_steps() -> list[AgentStep]:
        return [await agent.step(obs), await agent.step(obs)]

    steps = asyncio.run(two_steps())
    assert [s.action.action_type for s in steps] == ["wait", "wait"] and len(seen) == 2
    assert agent.report.errors == [] and agent.report.steps == 2


def test_an_async_callable_object_is_guarded():
    class Callable_:
        async def __call__(self, obs: Any) -> AgentStep:
            return AgentStep(action=Action(action_type="navigate_back"), summary="back")

    agent = ttir.guard(Callable_())
    assert isinstance(agent, ttir.AsyncGuardedAgent)
    agent.reset("Turn on Wi-Fi")
    step = asyncio.run(agent.step(_obs()))
    assert step.action.action_type == "navigate_back" and agent.report.errors == []
