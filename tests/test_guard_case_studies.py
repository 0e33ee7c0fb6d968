"""The paper's four TTIR case studies (AndroidReality App. D.2): each fails without the
guard and succeeds with the rule tier."""

from __future__ import annotations

import pytest

import perturb
import ttir
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import PlannerAgent, PlannerParams, ReplayAgent

RULES = ttir.TTIRConfig.with_mode("rules")


def _run(task, agent, perturbation, *, guard: bool, seed: int = 0):
    if guard:
        agent = ttir.guard(agent, config=RULES)
    env = perturb.PerturbedDevice(SimDevice(), [perturbation], seed=seed)
    with env:
        result = run_episode(env, task, agent)
        events = env.event_log()
    return result, (agent.report if guard else None), events


@pytest.mark.parametrize("seed", [0, 1])
def test_case_1_stale_coordinate_stuck_on_the_maze(seed):
    """Figure 9: the Right button moved under a display change; the replayed tap misses."""
    task = make_task("BrowserMaze", seed=seed)
    pert = lambda: perturb.make("display_size_dpi_zoomed_out", trigger_step=3)  # noqa: E731 - after task.html opens
    plain, _, _ = _run(task, ReplayAgent.from_task(task), pert(), guard=False)
    assert not plain.success and plain.termination == "budget"
    actions = [s.agent_step["action"] for s in plain.trajectory]
    assert max(actions.count(a) for a in actions) > 10  # the same stale tap, again and again
    guarded, report, _ = _run(task, ReplayAgent.from_task(task), pert(), guard=True)
    assert guarded.success
    assert {s.diagnoser for s in report.sessions} <= {"stuck_loop", "action_effect"}
    assert all(s.strategy == "alternative_action" for s in report.sessions)


def test_case_2_phone_number_typed_into_company():
    """Figure 10: under font_size_small the replayed phone tap lands in Company."""
    task = make_task("ContactsAddContact")
    plain, _, _ = _run(task, ReplayAgent.from_task(task), perturb.make("font_size_small"), guard=False)
    assert not plain.success
    guarded, report, _ = _run(task, ReplayAgent.from_task(task), perturb.make("font_size_small"), guard=True)
    assert guarded.success
    retyped = [a for s in report.sessions for a in s.actions if a["action_type"] == "input_text"]
    assert any(a.get("text") == task.params["number"] for a in retyped)  # re-entered into Phone
    assert any(a.get("text") == "" and a.get("clear_text") for a in retyped)  # and cleared from Company
