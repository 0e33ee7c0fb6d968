"""Every trap preserves solvability: an agent that re-grounds each step by resource id,
waits when the screen does not say what it expects, and re-opens the app after a
disruption still finishes the task."""

from __future__ import annotations

from typing import Any

import pytest

from benchmark import SimDevice, run_episode
from benchmark.tasks import TASKS
from perturb import PerturbedDevice, make
from perturb.traps import TrapSchedule, extended_budget, trap_events
from ttir.core.types import Action, AgentStep, Observation

CONTACTS = "com.google.android.contacts"
# external interruption is the transition perturbations' pop-ups, whose solvability
# (dismiss, then go on) is the transition module's to prove
TRAPS = ["trap_visual_obscuration", "trap_temporal_conflict", "trap_visual_hallucination",
         "trap_grounding_error", "trap_type_mismatch", "trap_intent_deviation",
         "trap_state_deadlock", "trap_context_disruption", "trap_loop"]


class RobustContactAgent:
    """Creates a contact from whatever screen it is on, grounding by resource id."""

    def __init__(self, task: Any):
        p = task.params
        self.name, self.number = p["name"], p["number"]
        self.fields = [("first_name", p["first"]), ("last_name", p["last"]), ("phone", p["number"])]
        self.unsure = 0

    def reset(self, goal: str) -> None:
        self.unsure = 0

    def step(self, obs: Observation) -> AgentStep:
        if obs.package != CONTACTS:
            return AgentStep(action=Action(action_type="open_app", app_name="Contacts"), summary="re-open Contacts")
        by_id: dict[str, Any] = {}
        for e in obs.elements:
            by_id.setdefault(e.short_id, e)
        if "menu_save" in by_id:  # the editor
            for fid, value in self.fields:
                e = by_id.get(fid)
                if e is None:
                    keyboard = any("inputmethod" in x.package for x in obs.elements)
                    return AgentStep(action=Action(action_type="navigate_back" if keyboard else "scroll",
                                                   **({} if keyboard else {"direction": "down"})))
                if e.text != value:
                    x, y = e.center
                    return AgentStep(action=Action(action_type="input_text", text=value, x=x, y=y, clear_text=True))
            x, y = by_id["menu_save"].center
            return AgentStep(action=Action(action_type="click", x=x, y=y), summary="save")
        if "large_title" in by_id:  # a contact's page
            if by_id["large_title"].text == self.name and any(e.text == self.number for e in obs.elements):
                return AgentStep(action=Action(action_type="status", goal_status="complete"))
            self.unsure += 1
            if self.unsure <= 2:  # the screen may be stale or frozen: look again
                return AgentStep(action=Action(action_type="wait", seconds=1))
            self.unsure = 0
            return AgentStep(action=Action(action_type="navigate_back"))
        fab = by_id.get("floating_action_button")
        if fab is not None:
            x, y = fab.center
            return AgentStep(action=Action(action_type="click", x=x, y=y), summary="create a contact")
        return AgentStep(action=Action(action_type="navigate_back"))


def test_the_robust_agent_solves_the_clean_task():
    task = TASKS["ContactsAddContact"].create(seed=5)
    result = run_episode(PerturbedDevice(SimDevice(), [], seed=0), task, RobustContactAgent(task))
    assert result.success and result.steps <= 8


@pytest.mark.parametrize("name", TRAPS)
@pytest.mark.parametrize("step", [1, 4])
def test_every_trap_preserves_solvability(name, step):
    task = TASKS["ContactsAddContact"].create(seed=step)
    env = PerturbedDevice(SimDevice(), [make(name, trigger_step=step, probability=None)], seed=step)
    result = run_episode(env, task, RobustContactAgent(task), budget=extended_budget(task.budget))
    fired = trap_events(result.reset_events + [e for s in result.trajectory for e in s.perturbation_events])
    assert len(fired) == 1, f"{name} did not fire"
    assert result.success, f"{name} at step {step}: {result.termination} after {result.steps} steps"


def test_an_antrap_schedule_run_is_solvable_across_seeds():
    task = TASKS["ContactsAddContact"].create(seed=9)
    for seed in range(6):
        env = PerturbedDevice(SimDevice(), [TrapSchedule(TRAPS, overrides={"probability": 0.5})], seed=seed)
        result = run_episode(env, task, RobustContactAgent(task), budget=extended_budget(task.budget))
        assert result.success, f"seed {seed}: {result.termination}"
