"""Rule-tier changes made while tuning on the labelled dataset (experiments/tune):
each case is one class of misses or false alarms found there."""

from __future__ import annotations

from diagnosers import ActionEffectDiagnoser, TaskAlignmentDiagnoser
from tests.support.diagnosers_support import ctx, dump, element, rec, tap
from ttir.core.types import Action

GOAL = "Delete the recipe Zucchini Soup in Broccoli."
OPEN_BROCCOLI = Action(action_type="open_app", app_name="Broccoli")
HOME = Action(action_type="navigate_home")
BACK = Action(action_type="navigate_back")


def align(obs, hist):
    return TaskAlignmentDiagnoser().diagnose(ctx(GOAL, obs, hist))


def effect(obs, hist):
    return ActionEffectDiagnoser().diagnose(ctx(GOAL, obs, hist))


# ----------------------------------------------------------------------- task alignment


def test_a_long_home_stay_after_the_agents_own_home_press_drifts_off_track():
    base = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(dump("recipe_list"), HOME, "Go home")]
    assert align(dump("home_screen"), base).verdict == "on_track"  # switching apps, perhaps
    stay = base + [rec(dump("home_screen"), BACK, "Go back") for _ in range(3)]
    assert align(dump("home_screen"), stay).verdict == "off_track"


def test_back_out_of_the_app_is_off_track():
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(dump("recipe_list"), BACK, "Go back")]
    assert align(dump("home_screen"), hist).verdict == "off_track"


def test_home_screen_beyond_the_remembered_history_is_off_track():
    home = dump("home_screen")
    old = [rec(home.replace(step=40 + i), BACK, "Go back") for i in range(5)]
    assert align(home.replace(step=45), old).verdict == "off_track"
    fresh = [rec(home.replace(step=i), BACK, "Go back") for i in range(5)]
    assert align(home.replace(step=5), fresh).verdict == "on_track"  # the episode really began here


def test_an_app_opened_from_a_home_screen_the_task_was_thrown_out_to_is_off_track():
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI),
            rec(dump("recipe_list"), tap(540, 400), 'Tap "Zucchini Soup"'),  # ... and the phone went home
            rec(dump("home_screen"), tap(412, 989), 'Tap "Settings"')]
    assert align(dump("settings_security_list"), hist).verdict == "off_track"
    own = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(dump("recipe_list"), HOME, "Go home"),
           rec(dump("home_screen"), tap(412, 989), 'Tap "Settings"')]
    assert align(dump("settings_security_list"), own).verdict != "off_track"  # the agent went home itself


def test_the_app_under_a_dialog_that_came_up_on_launch_stays_on_track():
    perm = dump("permission_dialog")
    deny = element(perm, text="Don’t allow")
    hist = [rec(dump("home_screen"), Action(action_type="open_app", app_name="Audio Recorder")),
            rec(perm, tap(*deny.center), 'Tap "Don’t allow"')]
    assert align(dump("recipe_list"), hist).verdict == "on_track"  # the app the agent opened


def test_pages_entered_by_engaging_an_interruption_are_off_track():
    popup = dump("security_popup_app")
    go = next(e for e in popup.elements if e.text in ("Continue", "Verify", "Review") and e.clickable)
    page = dump("permission_dialog")
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(popup, tap(*go.center), f'Tap "{go.text}"'),
            rec(page, tap(540, 1200), 'Tick "I started this action myself"')]
    assert align(page, hist).verdict == "off_track"


# ------------------------------------------------------------------------ action effect


def test_silent_controls_are_named_so_not_merely_containing_the_word():
    lst = dump("recipe_list")
    # a row's overflow named after a file called talk_copy is not a "Copy" button
    els = [e.model_copy(update={"content_desc": "More options for talk_copy", "clickable": True})
           if e.text == "Garlic Bread" else e for e in lst.elements]
    screen = lst.replace(elements=els)
    row = element(screen, desc="More options for talk_copy")
    f = effect(screen, [rec(screen, tap(*row.center), 'Tap "More options for talk_copy"')])
    assert f.verdict == "no"


def test_a_tap_at_a_target_that_is_not_on_screen_failed():
    home = dump("home_screen")
    f = effect(home, [rec(home, tap(860, 1311), 'Tap "Save"')])
    assert f.verdict == "no" and "nowhere on the screen" in f.evidence[0]


def test_enter_under_a_pop_up_did_nothing():
    sheet = dump("consent_sheet")
    f = effect(sheet, [rec(sheet, Action(action_type="keyboard_enter"), "Press enter")])
    assert f.verdict == "no"
    plain = dump("recipe_list")
    assert effect(plain, [rec(plain, Action(action_type="keyboard_enter"), "Press enter")]).verdict == "uncertain"


def test_typed_text_that_was_already_on_screen_is_no_sign_it_landed():
    lst = dump("recipe_list")
    typed = Action(action_type="input_text", text="Garlic Bread")
    assert effect(lst, [rec(lst, typed, 'Type "Garlic Bread" into "search"')]).verdict == "no"


def test_a_pop_up_that_appeared_is_not_the_taps_effect():
    lst = dump("recipe_list")
    row = element(lst, text="Garlic Bread")
    f = effect(dump("rate_dialog"), [rec(lst, tap(*row.center), 'Tap "Garlic Bread"')])
    assert f.verdict == "no" and "pop-up" in f.evidence[0]
    # a confirmation the tap asked for is its effect
    det = dump("recipe_detail")
    delete = element(det, desc="Delete")
    assert effect(dump("recipe_delete_dialog"), [rec(det, tap(*delete.center), 'Tap "Delete"')]).verdict == "yes"


def test_pages_of_a_consent_flow_inside_the_app_are_off_track():
    sheet, prefs = dump("consent_sheet"), dump("consent_preferences")
    manage = element(sheet, text="Manage options")
    hist = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(sheet, tap(*manage.center), 'Tap "Manage options"')]
    assert align(prefs, hist).verdict == "off_track"
    tick = element(prefs, text="Personalised advertising")
    assert align(prefs, hist + [rec(prefs, tap(*tick.center), 'Tick "Personalised advertising"')]).verdict == "off_track"
    # declining closes it: the recipe list is the app's own screen again
    reject = element(sheet, text="Reject all")
    back = [rec(dump("home_screen"), OPEN_BROCCOLI), rec(sheet, tap(*reject.center), 'Tap "Reject all"')]
    assert align(dump("recipe_list"), back).verdict == "on_track"
