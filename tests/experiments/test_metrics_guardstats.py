"""Guard statistics: trigger precision against the perturbation event log, sessions, usage."""

from __future__ import annotations

import pytest

from experiments.metrics.guardstats import check_trigger, guard_stats
from tests.support.metrics_support import LAUNCHER, action, click, ev, finding, rec, run_of, step, traj


def _episode():
    steps = [step(0, action("open_app", app_name="Notes"), fg=LAUNCHER)]
    steps += [step(i, click(100 * i, 500), n_elements=10 + i) for i in range(1, 5)]
    steps += [step(5, click(700, 700), n_elements=30), step(6, click(700, 700), n_elements=30, error="not a text field"),
              step(7, click(700, 700), n_elements=30), step(8, click(10, 10), n_elements=31)]
    steps += [step(9, click(20, 20), n_elements=32), step(10, click(30, 30), fg=LAUNCHER, n_elements=33),
              step(11, action("open_app", app_name="Notes"), fg=LAUNCHER), step(12, action("status", goal_status="complete"))]
    events = [ev(1, "overlay_shown", "popup_permission", style="dialog", overlay="popup_permission"),
              ev(3, "overlay_dismissed", "popup_permission", via="button", label="Deny", overlay="popup_permission"),
              ev(3, "dropped", "action_drop_random"),
              ev(10, "reset_home", "state_reset_home")]
    findings = [finding(2, "interference"),   # overlay on screen (shown 1, dismissed by the action of step 3): TP
                finding(5, "interference"),   # gone: FP
                finding(4, "action_effect"),  # dropped at step 3: TP (perturbation)
                finding(9, "action_effect"),  # nothing in steps 7-9, step 8's tap changed the screen: FP
                finding(7, "action_effect"),  # step 6's action was refused by the device: TP (agent)
                finding(8, "stuck_loop"),     # identical taps at 5, 6, 7 on an unchanged screen: TP (agent)
                finding(11, "task_alignment"),  # reset_home at 10: TP (perturbation)
                finding(12, "task_alignment", claim=True)]  # reset_home at 10 is still within the window: TP
    guard = {"findings": findings + [{"step": 3, "diagnoser": "stuck_loop", "problem": False}],
             "sessions": [{"id": 1, "diagnoser": "interference", "strategy": "dismiss_interference", "outcome": "resolved",
                           "actions": [{}, {}]},
                          {"id": 2, "diagnoser": "action_effect", "strategy": "alternative_action",
                           "outcome": "budget_spent", "actions": [{}, {}, {}]}],
             "usage": [{"step": i, "model_calls": 1 if i < 4 else 0, "prompt_tokens": 100 if i < 4 else 0,
                        "completion_tokens": 20 if i < 4 else 0, "guard_ms": float(i)} for i in range(13)],
             "errors": [], "blocked_claims": 1}
    return rec(task="A", perturbation="mixed", component="action", guard="rules", success=False), traj(steps, events, guard=guard)


def test_each_trigger_is_checked_against_the_event_log():
    r, t = _episode()
    verdicts = {(f["diagnoser"], f["step"]): check_trigger(f["diagnoser"], f["step"], r, t, claim=bool(f.get("claim")))[0]
                for f in t["guard"]["findings"] if f["problem"]}
    assert verdicts == {
        ("interference", 2): "perturbation", ("interference", 5): "false_positive",
        ("action_effect", 4): "perturbation", ("action_effect", 9): "false_positive",
        ("action_effect", 7): "agent", ("stuck_loop", 8): "agent",
        ("task_alignment", 11): "perturbation", ("task_alignment", 12): "perturbation",
    }


def test_state_perturbation_and_context_not_restored_are_trouble():
    r, t = _episode()
    t["events"].append(ev(0, "applied", "font_size_large", settings={"font_scale": 1.35}))
    assert check_trigger("action_effect", 9, r, t)[0] == "perturbation"
    # an engaged detour 6 steps earlier after which the task's app never came back in front
    steps = [step(0, action("open_app", app_name="Notes"), fg=LAUNCHER), step(1, click(1, 1)),
             step(2, click(2, 2), fg="com.android.settings")] + \
            [step(i, click(3, i), fg="com.android.settings") for i in range(3, 9)]
    detour = traj(steps, [ev(2, "app_launched", "popup_permission", package="com.android.settings")])
    assert check_trigger("task_alignment", 8, r, detour)[0] == "perturbation"
    steps[6] = step(6, click(3, 6))  # the app was back at step 6: that trouble is over
    assert check_trigger("task_alignment", 8, r, traj(steps, detour["events"]))[0] == "false_positive"


def test_clean_run_triggers_are_false_positives_unless_the_agent_failed():
    clean = rec(task="A", guard="rules", success=True)
    t = traj([step(0, click(1, 1)), step(1, click(2, 2), n_elements=11), step(2, click(3, 3), n_elements=12)])
    assert check_trigger("interference", 1, clean, t)[0] == "false_positive"
    assert check_trigger("stuck_loop", 2, clean, t)[0] == "false_positive"
    same = traj([step(0, click(1, 1)), step(1, click(2, 2)), step(2, click(3, 3))])  # a tap that changed nothing
    assert check_trigger("action_effect", 2, clean, same)[0] == "agent"
    # a completion claim: premature when the episode ended unsolved, a false alarm when it was solved
    failed = rec(task="A", guard="rules", success=False)
    assert check_trigger("task_alignment", 2, failed, t, claim=True)[0] == "agent"
    assert check_trigger("task_alignment", 2, clean, t, claim=True)[0] == "false_positive"
    home = traj([step(0, click(1, 1)), step(1, click(2, 2), fg=LAUNCHER)])
    assert check_trigger("task_alignment", 1, clean, home)[0] == "agent"  # home screen mid-task


def test_guard_stats_aggregate_precision_sessions_and_usage():
    r, t = _episode()
    clean = rec(task="A", guard="rules", success=True)
    ct = traj([step(0, click(1, 1)), step(1, click(2, 2), n_elements=11)],
              guard={"findings": [finding(1, "interference")], "sessions": [],
                     "usage": [{"step": 0, "guard_ms": 1.0}, {"step": 1, "guard_ms": 1.0}], "errors": []})
    off = rec(task="A", perturbation="mixed", component="action")
    run = run_of([r, clean, off], {r["id"]: t, clean["id"]: ct, off["id"]: traj([])})
    rows, checks = guard_stats(run)
    assert len(rows) == 1 and rows[0].guard == "rules" and rows[0].episodes == 2
    row = rows[0]
    d = {x.diagnoser: x for x in row.diagnosers}
    assert (d["interference"].triggers, d["interference"].true_positives, d["interference"].clean_triggers) == (3, 1, 1)
    assert d["interference"].precision == pytest.approx(1 / 3)
    assert (d["action_effect"].triggers, d["action_effect"].tp_perturbation, d["action_effect"].tp_agent) == (3, 1, 1)
    assert d["stuck_loop"].triggers == 1 and d["stuck_loop"].precision == 1.0  # the problem=False finding is no trigger
    assert d["task_alignment"].precision == 1.0
    assert d["interference"].outcomes == {"resolved": 1} and d["action_effect"].recovery_steps == 3
    assert (row.sessions, row.resolved, row.budget_spent, row.recovery_steps) == (2, 1, 1, 5)
    assert row.guarded_steps == 15 and row.model_calls == 4
    assert row.model_calls_per_step == pytest.approx(4 / 15) and row.tokens_per_step == pytest.approx(480 / 15)
    assert row.guard_ms_median == pytest.approx(5.0) and row.blocked_claims == 1
    assert len(checks) == 9


def test_without_trajectories_precision_is_not_claimed():
    r = rec(task="A", guard="rules", guard_summary={"triggers": {"interference": 2}, "model_calls": 3, "steps": 6,
                                                     "tokens": 30})
    rows, checks = guard_stats(run_of([r]))
    assert not rows[0].precision_available and checks == []
    d = {x.diagnoser: x for x in rows[0].diagnosers}
    assert d["interference"].sessions == 2 and d["interference"].precision is None
    assert rows[0].model_calls_per_step == pytest.approx(0.5)
