"""Fail open, bounded, no ping-pong — against the real openai client over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

import ttir
from benchmark import SimDevice, make_task
from benchmark.agents import ReferenceAgent
from diagnosers import InterferenceDiagnoser
from ttir.core.diagnosis import Finding
from ttir import Action, AgentStep, TTIRConfig
from ttir.testing import Reply
from ttir.model.client import VLMClient
from tests.support.diagnosers_support import dump

GOOD = {"repeat_failure_detected": False, "previous_intended_effect_satisfied": "yes",
        "interference_present": False, "task_alignment": "on_track", "reason": "fine"}


def _first_step(agent: Any) -> tuple[AgentStep, AgentStep]:
    task = make_task("SystemWifiTurnOn")
    obs = SimDevice().reset(task)
    expected = ReferenceAgent(task.reference_solution())
    expected.reset(task.goal)
    agent.reset(task.goal)
    return agent.step(obs), expected.step(obs)


def _vlm_guard(server, **cfg: Any):
    config = TTIRConfig.with_mode("vlm")
    vlm_cfg = server.config(timeout_s=cfg.pop("timeout_s", 2.0), max_retries=cfg.pop("max_retries", 1), backoff_s=0.01, backoff_max_s=0.05)
    task = make_task("SystemWifiTurnOn")
    return ttir.guard(ReferenceAgent(task.reference_solution()), config=config, vlm=VLMClient(vlm_cfg))


@pytest.mark.parametrize("replies", [
    [Reply.garbage(), Reply.garbage()],
    [Reply.empty(), Reply.empty()],
    [Reply.json({"interference_present": "maybe"}), Reply.json({"nope": 1})],
    [Reply.error(500), Reply.error(500)],
    Reply.storm(4, retry_after=0.01),
    [Reply.slow(1.0), Reply.slow(1.0)],
], ids=["garbage", "empty", "schema-invalid", "500", "429-storm", "timeout"])
def test_model_failures_fail_open(vlm_server, replies):
    vlm_server.enqueue(*replies)
    agent = _vlm_guard(vlm_server, timeout_s=0.3)
    got, expected = _first_step(agent)
    assert got.action == expected.action  # the wrapped agent's own step
    assert agent.report.errors and not agent.report.sessions
    assert len(vlm_server.completions()) >= 1  # the model really was asked, over HTTP


def test_500_then_200_is_retried_and_used(vlm_server):
    vlm_server.enqueue(Reply.error(500), Reply.fenced(GOOD))
    agent = _vlm_guard(vlm_server, max_retries=2)
    got, expected = _first_step(agent)
    assert got.action == expected.action and not agent.report.errors
    assert agent.report.usage[0].model_calls == 1  # one judgment shared by four diagnosers
    assert vlm_server.completions()[-1].images  # the screenshot went as a data URL


def test_model_judgment_opens_a_session(vlm_server):
    vlm_server.enqueue(Reply.json({**GOOD, "interference_present": True, "reason": "a pop-up"}))
    agent = _vlm_guard(vlm_server)
    agent.reset("Open Broccoli.")
    step = agent.step(dump("permission_dialog"))
    assert agent.report.sessions and agent.report.sessions[0].diagnoser == "interference"
    assert agent.report.usage[-1].source == "recovery" and step.action.action_type == "click"


def test_model_interference_where_the_rules_locate_no_overlay_is_logged_not_backed_out_of(vlm_server):
    # a plain settings page that the model calls a pop-up: Back would leave the page the task is on
    vlm_server.enqueue(Reply.json({**GOOD, "interference_present": True, "reason": "a pop-up"}))
    agent = _vlm_guard(vlm_server)
    got, expected = _first_step(agent)
    assert got.action == expected.action and not agent.report.sessions
    assert any(e["event"] == "recovery_unavailable" and e["diagnoser"] == "interference" for e in agent.events)


class Boom(InterferenceDiagnoser):
    def diagnose(self, ctx):
        raise RuntimeError("diagnoser bug")

    def rules(self, ctx):
        raise RuntimeError("diagnoser bug")


def test_exceptions_in_diagnosers_fail_open():
    task = make_task("SystemWifiTurnOn")
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=TTIRConfig.with_mode("rules"))
    agent._core.check("interference").diagnoser = Boom()
    got, expected = _first_step(agent)
    assert got.action == expected.action
    assert any("diagnoser bug" in e["error"] for e in agent.report.errors)


class AlwaysInterference(InterferenceDiagnoser):
    def diagnose(self, ctx):
        return Finding(diagnoser="interference", problem=True, verdict="true", evidence=["forced"])


class BrokenRecovery:
    name, cost = "dismiss_interference", None

    def next_step(self, ctx):
        raise ValueError("recovery bug")


def test_exceptions_in_recoveries_fail_open():
    task = make_task("SystemWifiTurnOn")
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=TTIRConfig.with_mode("rules"))
    agent._core.check("interference").diagnoser = AlwaysInterference()
    agent._core.check("interference").recovery = BrokenRecovery()
    got, expected = _first_step(agent)
    assert got.action == expected.action
    assert any("recovery bug" in e["error"] for e in agent.report.errors)


class Stubborn:
    """A recovery that never resolves anything."""

    name = "dismiss_interference"

    def __init__(self):
        from ttir.core.diagnosis import Cost

        self.cost = Cost()

    def next_step(self, ctx):
        return AgentStep(action=Action(action_type="wait", seconds=0.5), summary="try again")


def _drive(agent, steps: int) -> list[str]:
    task = make_task("SystemWifiTurnOn")
    device = SimDevice()
    obs = device.reset(task)
    agent.reset(task.goal)
    sources = []
    for _ in range(steps):
        step = agent.step(obs)
        sources.append(step.summary)
        if step.action.action_type == "status":
            break
        device.execute(step.action)
        obs = device.observe()
    return sources


def test_sessions_are_bounded_by_budget_and_cap():
    cfg = TTIRConfig.with_mode("rules")
    cfg.recovery.budget, cfg.recovery.max_sessions, cfg.recovery.cooldown = 2, 3, 0
    task = make_task("SystemWifiTurnOn")
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=cfg)
    agent._core.check("interference").diagnoser = AlwaysInterference()
    agent._core.check("interference").recovery = Stubborn()
    _drive(agent, 30)
    sessions = agent.report.sessions
    assert len(sessions) <= 3
    assert all(len(s.actions) <= 2 for s in sessions)
    assert all(s.outcome in ("budget_spent", "episode_end", "exhausted", "resolved") for s in sessions)


def test_no_ping_pong_on_a_screen_a_session_failed_on():
    cfg = TTIRConfig.with_mode("rules")
    cfg.recovery.budget, cfg.recovery.cooldown, cfg.recovery.max_sessions = 1, 0, 50
    task = make_task("SystemWifiTurnOn")
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=cfg)
    agent._core.check("interference").diagnoser = AlwaysInterference()
    agent._core.check("interference").recovery = Stubborn()
    _drive(agent, 12)
    sessions = agent.report.sessions
    usage = agent.report.usage
    # a failed session is never re-opened on the screen it failed on: the wrapped agent acts in between
    for prev, nxt in zip(sessions, sessions[1:]):
        assert nxt.opened_at > prev.closed_at
        assert any(u.source == "agent" for u in usage[prev.closed_at:nxt.opened_at])
