"""Error attribution: each rule hit by a constructed failing trajectory, and their order."""

from __future__ import annotations

import pytest

from experiments.metrics.attribution import attribute, attribute_run
from tests.support.metrics_support import LAUNCHER, action, click, ev, rec, recovery, run_of, step, traj

OPEN = action("open_app", app_name="Notes")
DONE = action("status", goal_status="complete")


def _rec(**kw):
    kw.setdefault("success", False)
    kw.setdefault("perturbation", "font_size_large")
    return rec(**kw)


def test_stale_coordinate_stuck():
    steps = [step(0, OPEN, fg=LAUNCHER)] + [step(i, click(540, 1200), 'Tap "Save"') for i in range(1, 6)]
    a = attribute(_rec(termination="budget"), traj(steps, [ev(0, "applied", settings={"font_scale": 1.35})]))
    assert a.category == "stale_coordinate_stuck" and a.step == 1
    assert "5 times" in a.reason


def test_stuck_ignores_waits_between_attempts_but_not_a_changing_screen():
    waits = [step(0, click(540, 1200)), step(1, action("wait", seconds=1.0)), step(2, click(540, 1200)),
             step(3, action("wait", seconds=1.0)), step(4, click(540, 1200))]
    assert attribute(_rec(), traj(waits)).category == "stale_coordinate_stuck"
    changing = [step(i, click(540, 1200), n_elements=10 + i) for i in range(5)]
    assert attribute(_rec(), traj(changing)).category == "other"


def test_a_guard_recovery_step_breaks_a_run():
    steps = [step(0, click(540, 1200)), step(1, click(540, 1200)), step(2, click(540, 1200), guard_events=[recovery()]),
             step(3, click(540, 1200)), step(4, click(540, 1200))]
    assert attribute(_rec(), traj(steps)).category == "other"


def test_silent_action_failure_when_the_agent_moves_on():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(900, 2100), 'Tap "New"'),
             step(2, action("input_text", x=540, y=600, text="milk"), 'Type "milk"'), step(3, DONE)]
    events = [ev(1, "dropped", "action_drop_random", action=click(900, 2100))]
    a = attribute(_rec(perturbation="action_drop_random", component="action"), traj(steps, events))
    assert a.category == "silent_action_failure" and a.step == 1 and "dropped" in a.reason


def test_retrying_the_dropped_action_is_noticing_it():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(900, 2100)), step(2, click(900, 2100), n_elements=12),
             step(3, DONE, n_elements=13)]
    events = [ev(1, "dropped", "action_drop_random")]
    assert attribute(_rec(perturbation="action_drop_random"), traj(steps, events)).category == "other"


def test_a_visible_dialog_blocking_a_tap_is_not_silent_but_a_frozen_screen_is():
    steps = [step(0, click(900, 2100)), step(1, click(100, 300), n_elements=12), step(2, DONE, n_elements=13)]
    visible = [ev(0, "blocked_action", "popup_security", where="outside")]
    frozen = [ev(0, "blocked_action", "execution_delay_frozen", where="screen")]
    assert attribute(_rec(), traj(steps, visible)).category == "other"
    assert attribute(_rec(), traj(steps, frozen)).category == "silent_action_failure"


def test_a_tap_swallowed_by_an_overlay_button_it_did_not_aim_at_is_silent():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(613, 312), 'Tap "Network & internet"'),
             step(2, click(540, 337), 'Tap "Wi-Fi"', n_elements=12), step(3, DONE, n_elements=13)]
    events = [ev(1, "overlay_shown", "notification_message", style="banner"),
              ev(1, "overlay_dismissed", "notification_message", via="button", label="Mark as read", role="dismiss")]
    a = attribute(_rec(perturbation="notification_message", component="transition"), traj(steps, events))
    assert a.category == "silent_action_failure" and "Mark as read" in a.reason


def test_off_task_engagement():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(810, 1393), 'Tap "Continue"')] + \
            [step(i, click(540, 2000), 'Tap "Next"', n_elements=20 + i) for i in range(2, 6)]
    events = [ev(1, "overlay_shown", "popup_security", style="dialog"),
              ev(1, "overlay_engaged", "popup_security", label="Continue", role="engage", title="Protect your account"),
              ev(1, "page_advanced", "popup_security", auto=False, to_page="risk_summary")]
    a = attribute(_rec(perturbation="popup_security", component="transition", termination="budget"), traj(steps, events))
    assert a.category == "off_task_engagement" and a.step == 1 and "Continue" in a.reason


def test_a_timer_advancing_a_page_is_not_engagement():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(10, 10), n_elements=11), step(2, DONE, n_elements=12)]
    events = [ev(1, "page_advanced", "loading", auto=True)]
    assert attribute(_rec(), traj(steps, events)).category == "other"


@pytest.mark.parametrize("termination, tail, expected", [
    ("complete", [step(3, DONE, n_elements=13)], "claimed completion"),
    ("budget", [step(3, action("navigate_home"), n_elements=13), step(4, OPEN, fg=LAUNCHER)], "restarted"),
    ("budget", [step(3, action("scroll", direction="down"), n_elements=14)], "wandered"),
])
def test_goal_drift_after_a_dismissed_interruption(termination, tail, expected):
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(521, 1393), 'Tap "Cancel" to dismiss the interruption'),
             step(2, click(100, 200), 'Tap "Settings"', n_elements=12)] + tail
    events = [ev(1, "overlay_shown", "popup_security", style="dialog"),
              ev(1, "overlay_dismissed", "popup_security", via="button", label="Cancel", role="dismiss")]
    a = attribute(_rec(perturbation="popup_security", termination=termination), traj(steps, events))
    assert a.category == "goal_drift" and a.step == 1 and expected in a.reason


def test_goal_drift_after_a_reset_to_home():
    steps = [step(0, OPEN, fg=LAUNCHER), step(1, click(100, 200), n_elements=12), step(2, DONE, fg=LAUNCHER)]
    a = attribute(_rec(perturbation="state_reset_home"), traj(steps, [ev(2, "reset_home", "state_reset_home")]))
    assert a.category == "goal_drift"


def test_the_earlier_of_stuck_and_silent_wins_and_engagement_comes_first():
    silent_first = [step(0, click(900, 2100)), step(1, click(100, 100), n_elements=11)] + \
                   [step(i, click(300, 300), n_elements=11) for i in range(2, 6)]
    events = [ev(0, "dropped", "action_drop_random")]
    a = attribute(_rec(), traj(silent_first, events))
    assert a.category == "silent_action_failure" and set(a.matches) == {"silent_action_failure", "stale_coordinate_stuck"}
    stuck_first = [step(i, click(300, 300)) for i in range(4)] + [step(4, click(900, 2100), n_elements=11),
                                                                  step(5, click(5, 5), n_elements=12)]
    b = attribute(_rec(), traj(stuck_first, [ev(4, "dropped", "action_drop_random")]))
    assert b.category == "stale_coordinate_stuck"
    engaged = traj(stuck_first, [ev(4, "overlay_engaged", "ad_trial_offer", label="Start trial")])
    assert attribute(_rec(), engaged).category == "off_task_engagement"


def test_other_for_plain_mistakes_and_errors_and_only_failures_are_attributed():
    plain = traj([step(0, OPEN, fg=LAUNCHER), step(1, click(1, 1), n_elements=11), step(2, DONE, n_elements=12)])
    assert attribute(_rec(perturbation="clean", component="clean"), plain).category == "other"
    assert attribute(_rec(status="error"), None).reason == "the episode raised"
    with pytest.raises(ValueError, match="success=True"):
        attribute(_rec(success=True), plain)
    records = [_rec(task="A"), _rec(task="B", success=True)]
    out = attribute_run(run_of(records, {records[0]["id"]: plain, records[1]["id"]: plain}))
    assert [a.id for a in out] == [records[0]["id"]]


def test_ground_truth_screen_keys_decide_whether_the_screen_changed():
    steps = [step(i, click(540, 1200), n_elements=10 + i) for i in range(4)]  # summaries differ ...
    for st in steps:
        st["truth"] = {"screen_key": "same"}  # ... but the harness saw the same screen each time
    assert attribute(_rec(), traj(steps)).category == "stale_coordinate_stuck"
    for i, st in enumerate(steps):
        st["truth"] = {"screen_key": f"k{i}"}
        st["observation"]["n_elements"] = 10
    assert attribute(_rec(), traj(steps)).category == "other"
