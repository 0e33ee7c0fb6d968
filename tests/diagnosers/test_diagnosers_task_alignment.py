"""Task-alignment rules: the apps of the task, the home screen after an
interruption, apps reached through an interruption, and completion claims on a
screen with no trace of the task (Figure 12)."""

from __future__ import annotations

from diagnosers import TaskAlignmentDiagnoser
from tests.support.diagnosers_support import BROCCOLI, FakeJudge, complete, ctx, dump, element, judgment, rec, screenshot_only, tap
from ttir.core.types import Action

RECIPE_GOAL = "Delete the recipe Zucchini Soup in Broccoli."
BRIGHT_GOAL = "Turn brightness to the max value."
PULL = Action(action_type="swipe", x=540, y=5, x2=540, y2=1400, duration_ms=300)
OPEN_BROCCOLI = Action(action_type="open_app", app_name="Broccoli")


def run(goal, obs, history=(), pending=None, **kw):
    return TaskAlignmentDiagnoser(**kw).diagnose(ctx(goal, obs, list(history), pending))


def test_first_step_on_the_home_screen_is_on_track():
    assert run(RECIPE_GOAL, dump("home_screen")).verdict == "on_track"


def test_the_app_the_goal_names_is_on_track():
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI, "Open Broccoli")]
    f = run(RECIPE_GOAL, dump("recipe_list"), hist)
    assert f.verdict == "on_track" and BROCCOLI in f.details["on_task_apps"]


def test_an_app_the_agent_opened_itself_is_on_track():
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI, "Open Broccoli"),
            rec(dump("recipe_list"), Action(action_type="open_app", app_name="Messages"), "Open Messages")]
    assert run("Share my Zucchini Soup recipe with Alex.", dump("sms_thread"), hist).verdict == "on_track"


def test_an_app_reached_by_tapping_a_notification_is_off_track():
    banner = dump("heads_up_message")
    row = element(banner, rid="expandableNotificationRow")
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(banner, tap(*row.center), "Tap the recipe list")]
    f = run(RECIPE_GOAL, dump("sms_thread"), hist)
    assert f.problem and f.verdict == "off_track"
    # …and stays off track while the agent wanders in it
    hist2 = hist + [rec(dump("sms_thread"), Action(action_type="scroll", direction="down")) for _ in range(5)]
    assert run(RECIPE_GOAL, dump("sms_thread"), hist2).verdict == "off_track"


def test_a_cross_app_flow_from_an_on_task_screen_is_not_off_track():
    det = dump("recipe_detail")
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(det, tap(*element(det, desc="Edit").center), 'Tap "Share"')]
    assert not run("Send the Zucchini Soup recipe to Alex.", dump("sms_thread"), hist).problem


def test_home_screen_after_an_interruption_is_off_track():
    banner = dump("heads_up_message")
    up = Action(action_type="swipe", x=540, y=250, x2=540, y2=20, duration_ms=200)
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(dump("recipe_list"), tap(540, 400)),
            rec(banner, up, "Dismiss the notification")]
    f = run(RECIPE_GOAL, dump("home_screen"), hist)
    assert f.problem and f.verdict == "off_track"


def test_home_screen_after_a_tap_in_an_app_is_off_track_but_after_home_is_not():
    base = [rec(dump("home_screen"), OPEN_BROCCOLI)]
    crash = base + [rec(dump("recipe_list"), tap(540, 400), 'Tap "Zucchini Soup"')]
    assert run(RECIPE_GOAL, dump("home_screen"), crash).verdict == "off_track"
    home = base + [rec(dump("recipe_list"), Action(action_type="navigate_home"), "Go home to open Messages")]
    assert run(RECIPE_GOAL, dump("home_screen"), home).verdict == "on_track"


def test_figure_12_done_on_the_home_screen_of_a_brightness_task():
    home, shade = dump("home_screen"), dump("shade_open")
    up = Action(action_type="swipe", x=540, y=2000, x2=540, y2=300, duration_ms=300)
    hist = [rec(home, PULL, "Pull down the quick settings"),
            rec(shade, up, "Close the shade to dismiss the message"),
            rec(dump("heads_up_message"), up, "Dismiss the notification")]
    f = run(BRIGHT_GOAL, dump("home_screen"), hist, pending=complete())
    assert f.problem and f.verdict == "off_track" and f.details["claim"]


def test_brightness_claim_on_the_shade_is_on_track():
    hist = [rec(dump("home_screen"), PULL, "Pull down the quick settings"),
            rec(dump("shade_open"), Action(action_type="swipe", x=600, y=900, x2=1037, y2=900), "Drag the slider")]
    f = run(BRIGHT_GOAL, dump("shade_open"), hist, pending=complete())
    assert f.verdict == "on_track" and "bright" in " ".join(f.details["shared_words"])
    assert run(BRIGHT_GOAL, dump("shade_open"), hist).verdict == "on_track"


def test_claim_on_a_screen_showing_the_task():
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI)]
    f = run(RECIPE_GOAL, dump("recipe_list"), hist, pending=complete())
    assert f.verdict == "on_track" and f.details["goal_overlap"] >= 0.15


def test_claim_in_an_unrelated_app_is_off_track():
    hist = [rec(dump("home_screen"), Action(action_type="open_app", app_name="Settings"))]
    f = run(RECIPE_GOAL, dump("settings_security_list"), hist, pending=complete())
    assert f.verdict == "off_track" and f.details["shared_words"] == []


def test_claim_check_can_be_turned_off():
    from ttir.core.config import TaskAlignmentConfig

    hist = [rec(dump("home_screen"), Action(action_type="open_app", app_name="Settings"))]
    cfg = TaskAlignmentConfig(check_completion_claims=False)
    assert not run(RECIPE_GOAL, dump("settings_security_list"), hist, pending=complete(), config=cfg).problem


def test_the_shade_pulled_by_the_agent_is_on_track():
    hist = [rec(dump("home_screen"), PULL, "Open quick settings")]
    assert run(BRIGHT_GOAL, dump("shade_open"), hist).verdict == "on_track"


def test_screenshot_only_cannot_tell():
    obs = screenshot_only(dump("recipe_list"))
    assert run(RECIPE_GOAL, obs).verdict == "uncertain"


def test_model_tier_and_cascade():
    judge = FakeJudge(judgment(task_alignment="off_track", reason="home screen"))
    f = run(RECIPE_GOAL, dump("home_screen"), mode="vlm", judge=judge)
    assert f.problem and f.tier == "vlm" and f.evidence[-1] == "model reason: home screen"
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI)]
    f = run(RECIPE_GOAL, dump("recipe_list"), hist, mode="cascade", judge=judge)
    assert f.verdict == "on_track" and judge.calls == 1  # the rules were sure
