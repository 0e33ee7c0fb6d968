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
    assert all(s.recovery == "alternative_action" for s in report.sessions)


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


def test_case_3_security_popup_engaged_vs_dismissed():
    """Figure 11: engaging the fake security pop-up leads into the multi-page wizard; the
    guard declines it with Cancel and the task gets done."""
    task = make_task("RecipeDeleteMultipleRecipes")
    engager = PlannerParams(engage_probability=1.0, move_on_probability=0.0, drift_probability=0.0)
    plain, _, events = _run(task, PlannerAgent(task.reference_solution(), engager), perturb.make("popup_security"), guard=False)
    assert not plain.success
    kinds = [e["event"] for e in events]
    assert "overlay_engaged" in kinds and kinds.count("page_advanced") >= 4  # deep in the wizard
    guarded, report, events = _run(task, PlannerAgent(task.reference_solution(), engager), perturb.make("popup_security"), guard=True)
    assert guarded.success
    assert "overlay_engaged" not in [e["event"] for e in events]
    first = report.sessions[0]
    assert first.diagnoser == "interference" and first.recovery == "dismiss_interference" and first.outcome == "resolved"
    assert any(e["event"] == "overlay_dismissed" and e["details"].get("label") == "Cancel" for e in events)


def test_case_4_goal_drift_after_a_notification():
    """Figure 12: after dismissing a message notification the agent is on the home screen
    and claims success; with the guard the banner is swiped away (or the claim is blocked
    and the context restored) and brightness reaches the maximum."""
    task = make_task("SystemBrightnessMax")
    drifter = PlannerParams(engage_probability=0.0, move_on_probability=0.0, drift_probability=1.0)
    plain, _, _ = _run(task, PlannerAgent(task.reference_solution(), drifter), perturb.make("notification_message"), guard=False)
    assert not plain.success and plain.termination == "done"  # "done" without touching the slider
    assert "launcher" in plain.trajectory[-1].observation["foreground"]
    guarded, report, _ = _run(task, PlannerAgent(task.reference_solution(), drifter), perturb.make("notification_message"), guard=True)
    assert guarded.success and guarded.termination == "done"
    assert report.sessions and report.sessions[0].diagnoser == "interference"


def test_case_4_completion_claim_on_the_home_screen_is_blocked():
    """The claim check alone: an agent that says 'done' on the home screen is re-oriented."""
    from ttir import Action, AgentStep

    task = make_task("SystemBrightnessMax")
    script = iter([
        AgentStep(action=Action(action_type="swipe", x=540, y=5, x2=540, y2=1400), summary="Pull down quick settings"),
        AgentStep(action=Action(action_type="navigate_home"), summary="Dismiss the notification"),
    ])

    class Drifter:
        def reset(self, goal):
            self.resumed = self.dragged = False

        def on_recovery(self, event):
            self.resumed = True

        def step(self, obs):
            nxt = next(script, None)
            if nxt is not None:
                return nxt
            if self.resumed and not self.dragged and obs.find(content_desc="Display brightness"):
                self.dragged = True  # then it declares the task done: success is done-gated
                s = obs.find(content_desc="Display brightness")[0]
                return AgentStep(action=Action(action_type="swipe", x=s.center[0], y=s.center[1], x2=s.bounds[2] - 1,
                                               y2=s.center[1]), summary="Drag brightness to the max")
            return AgentStep(action=Action(action_type="status", goal_status="complete"), summary="Done")

    agent = ttir.guard(Drifter(), config=RULES)
    result = run_episode(SimDevice(), task, agent, budget=12)
    assert agent.report.blocked_claims >= 1
    assert any(s.recovery == "re_orientation" for s in agent.report.sessions)
    assert result.success
