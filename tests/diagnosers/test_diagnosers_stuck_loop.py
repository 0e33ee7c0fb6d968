"""Stuck-loop rules: the hard rule (N identical steps, unchanged screen), the
same-target retry, A-B-A-B oscillation, and the hard rule winning over the model."""

from __future__ import annotations

import pytest

from diagnosers import StuckLoopDiagnoser
from tests.support.diagnosers_support import (
    FakeJudge,
    ctx,
    dump,
    element,
    judgment,
    rec,
    retext,
    screenshot_only,
    tap,
    with_screenshot,
)
from ttir.core.config import StuckLoopConfig
from ttir.core.types import Action

GOAL = "Open the recipe Garlic Bread in Broccoli."
SUMMARY = 'Tap "Garlic Bread"'
THOUGHT = "The Garlic Bread card is the second one; tap it to open the recipe."


def garlic_tap(obs, dx: int = 0):
    x, y = element(obs, text="Garlic Bread").center
    return tap(x + dx, y)


def repeated(n: int, *, screens=None, thoughts=None, dx=None):
    """n identical taps on the Garlic Bread card of fresh copies of the same screen."""
    screens = screens or [dump("recipe_list") for _ in range(n + 1)]
    hist = []
    for i in range(n):
        th = thoughts[i] if thoughts else THOUGHT
        hist.append(rec(screens[i], garlic_tap(screens[i], dx[i] if dx else 0), SUMMARY, th))
    return hist, screens[n]


def test_empty_history_is_not_a_loop():
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, dump("recipe_list")))
    assert f.verdict == "false" and not f.problem


def test_three_identical_steps_on_unchanged_screen_fire_the_hard_rule():
    hist, now = repeated(3)
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist))
    assert f.problem and f.verdict == "true"
    d = f.details
    assert d["hard_rule"] is True and d["streak"] == 3 and d["kind"] == "identical_steps"
    assert d["repeated_action"]["action_type"] == "click"
    assert d["target_element"]["resource_id"].endswith("recipe_card")  # the card the tap hit earlier
    assert "garlic bread" in d["intended_targets"]
    assert len(d["failed_points"]) == 3


def test_two_identical_steps_are_not_enough_for_n3():
    hist, now = repeated(2)
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).problem


def test_window_is_configurable():
    hist, now = repeated(3)
    five = StuckLoopDiagnoser(StuckLoopConfig(window=5))
    assert not five.diagnose(ctx(GOAL, now, hist)).problem
    hist, now = repeated(5)
    assert five.diagnose(ctx(GOAL, now, hist)).details["hard_rule"] is True


def swipes(ends: list[tuple[int, int]]):
    """Swipes from one point of the recipe list to each of ``ends``; the screen never changes."""
    screens = [dump("recipe_list") for _ in range(len(ends) + 1)]
    hist = [rec(screens[i], Action(action_type="swipe", x=540, y=1500, x2=x2, y2=y2, duration_ms=400),
                "Scroll the list", f"Swipe up, attempt {i}") for i, (x2, y2) in enumerate(ends)]
    return hist, screens[-1]


def test_swipes_from_one_point_the_same_way_are_one_action_whatever_their_length():
    # the labeller's definition (experiments.tune.labels): an agent swiping "farther" each time is retrying
    hist, now = swipes([(540, 1100), (540, 800), (560, 300)])
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist))
    assert f.problem and f.details["kind"] == "same_action_no_effect"
    hist, now = swipes([(540, 1100), (540, 1900), (540, 1100)])  # up, down, up: not one gesture repeated
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).problem
    hist, now = swipes([(540, 1100), (900, 1500), (540, 1100)])  # up, right, up
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).problem


def test_coordinates_within_tolerance_count_as_the_same_action():
    hist, now = repeated(3, dx=[0, 10, -12])
    assert StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).problem
    hist, now = repeated(3, dx=[0, 200, -200])
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).problem


def test_identical_steps_that_change_the_screen_are_progress():
    # a "+" button pressed three times: the counter changes every time
    screens = [retext(dump("recipe_list"), "4 servings", f"{k} servings") for k in range(4, 8)]
    hist, now = repeated(3, screens=screens)
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist))
    assert not f.problem and f.verdict == "false"


def test_same_target_with_reworded_thoughts_is_a_loop_but_not_the_hard_rule():
    hist, now = repeated(3, thoughts=["Tap the card.", "The tap did not work, tap it again.", "Try the card once more."])
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist))
    assert f.problem and f.details["hard_rule"] is False and f.details["kind"] == "same_action_no_effect"


def test_screenshot_only_history():
    base = [with_screenshot(dump("recipe_list")) for _ in range(4)]
    shots = [screenshot_only(o) for o in base]
    hist = [rec(shots[i], garlic_tap(base[i]), SUMMARY, THOUGHT) for i in range(3)]
    assert StuckLoopDiagnoser().diagnose(ctx(GOAL, shots[3], hist)).details.get("hard_rule") is True
    # the same taps, but the screen moves on each time: no loop
    moving = [screenshot_only(with_screenshot(retext(dump("recipe_list"), "Garlic Bread", f"Garlic Bread {k}")))
              for k in range(4)]
    hist = [rec(moving[i], garlic_tap(base[i]), SUMMARY, THOUGHT) for i in range(3)]
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, moving[3], hist)).problem


def test_tree_and_screenshot_together():
    screens = [with_screenshot(dump("recipe_list")) for _ in range(4)]
    hist, now = repeated(3, screens=screens)
    assert StuckLoopDiagnoser().diagnose(ctx(GOAL, now, hist)).details["hard_rule"] is True


def test_oscillation_between_two_screens():
    lst, det = dump("recipe_list"), dump("recipe_detail")
    lst2, det2 = dump("recipe_list"), dump("recipe_detail")
    back = Action(action_type="navigate_back")
    hist = [rec(lst, garlic_tap(lst), SUMMARY, "open it"), rec(det, back, "Go back", "wrong recipe"),
            rec(lst2, garlic_tap(lst2), SUMMARY, "open it again")]
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, det2, hist))
    assert f.problem and f.details["kind"] == "oscillation" and f.details["period"] == 2
    assert not f.details["spans_apps"]


def test_oscillation_spanning_an_app_switch():
    a, b, a2, b2 = dump("contacts_list"), dump("recipe_list"), dump("contacts_list"), dump("recipe_list")
    to_b, to_a = Action(action_type="open_app", app_name="Broccoli"), Action(action_type="open_app", app_name="Contacts")
    hist = [rec(a, to_b, "Open Broccoli"), rec(b, to_a, "Open Contacts"), rec(a2, to_b, "Open Broccoli")]
    f = StuckLoopDiagnoser().diagnose(ctx(GOAL, b2, hist))
    assert f.problem and f.details["kind"] == "oscillation" and f.details["spans_apps"]


def test_visiting_different_screens_is_not_an_oscillation():
    lst, det, lst2 = dump("recipe_list"), dump("recipe_detail"), dump("recipe_list")
    other = retext(dump("recipe_detail"), "Zucchini Soup", "Tomato Salad")
    back = Action(action_type="navigate_back")
    hist = [rec(lst, garlic_tap(lst)), rec(det, back), rec(lst2, tap(540, 1000))]
    assert not StuckLoopDiagnoser().diagnose(ctx(GOAL, other, hist)).problem


@pytest.mark.parametrize("mode", ["vlm", "cascade"])
def test_hard_rule_wins_over_the_model(mode):
    judge = FakeJudge(judgment(repeat_failure_detected=False), scheduled=True)
    hist, now = repeated(3)
    f = StuckLoopDiagnoser(mode=mode, judge=judge).diagnose(ctx(GOAL, now, hist))
    assert f.problem and f.details["hard_rule"] and f.tier == mode


def test_model_decides_without_the_hard_rule_in_vlm_mode():
    judge = FakeJudge(judgment(repeat_failure_detected=True, reason="same tap twice"))
    hist, now = repeated(1)
    f = StuckLoopDiagnoser(mode="vlm", judge=judge).diagnose(ctx(GOAL, now, hist))
    assert f.problem and f.tier == "vlm" and judge.calls == 1 and f.cost.model_calls == 1


def test_cascade_keeps_a_rule_loop_when_the_scheduled_model_disagrees():
    lst, det = dump("recipe_list"), dump("recipe_detail")
    lst2, det2 = dump("recipe_list"), dump("recipe_detail")
    back = Action(action_type="navigate_back")
    hist = [rec(lst, garlic_tap(lst)), rec(det, back), rec(lst2, garlic_tap(lst2))]
    judge = FakeJudge(judgment(repeat_failure_detected=False), scheduled=True)
    f = StuckLoopDiagnoser(mode="cascade", judge=judge).diagnose(ctx(GOAL, det2, hist))
    assert f.problem and f.details["kind"] == "oscillation" and judge.calls == 1


def test_cascade_without_judge_falls_back_to_rules():
    d = StuckLoopDiagnoser()
    assert d.mode == "cascade" and d.judge is None
    hist, now = repeated(3)
    assert d.diagnose(ctx(GOAL, now, hist)).problem


def test_stale_coordinate_loop_on_the_simulator():
    """Figure 9's pattern with real screenshots and trees: the same tap on a spot that
    no longer holds the target, three times."""
    from benchmark import SimDevice, make_task

    task = make_task("ContactsDeleteContact", seed=0)
    device = SimDevice()
    obs = device.reset(task)
    device.execute(Action(action_type="open_app", app_name="Contacts"))
    history = []
    for _ in range(3):
        before = device.observe()
        step = tap(540, 2150)  # below the last contact: nothing there takes a tap
        device.execute(step)
        history.append(rec(before, step, f'Tap "{task.params["name"]}"', "Open the contact to delete it."))
    f = StuckLoopDiagnoser().diagnose(ctx(task.goal, device.observe(), history))
    assert f.problem and f.details["hard_rule"] and obs.screenshot is not None
