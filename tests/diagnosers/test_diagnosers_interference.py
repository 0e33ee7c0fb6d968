"""Interference rules: every kind of interruption is found (with its bounds, its
buttons and a role for each), the app's own screens and dialogs are not, nor the
bars, the keyboard or the shade the agent pulled down itself."""

from __future__ import annotations

import textwrap

import pytest
from PIL import Image, ImageDraw

from diagnosers import InterferenceDiagnoser
from ttir.core.diagnosis import DiagnosisContext
from tests.support.diagnosers_support import BROCCOLI, FakeJudge, ctx, dump, element, judgment, rec, screenshot_only, tap
from ttir.core.config import InterferenceConfig
from ttir.core.types import Action, Observation

GOAL = "Delete the recipes Zucchini Soup and Garlic Bread in Broccoli."

# fixture -> (kind, the button a dismissal should press)
INTERRUPTIONS = {
    "permission_dialog": ("permission", "Don’t allow"),
    "anr_dialog": ("anr", "Wait"),
    "security_popup_systemui": ("systemui", "Cancel"),
    "security_popup_app": ("dialog", "Cancel"),
    "consent_sheet": ("dialog", "Reject all"),
    "interstitial_ad": ("takeover", "Close ad"),
    "trial_offer": ("window", "No thanks"),
    "rate_dialog": ("dialog", "Not now"),
    "heads_up_message": ("heads_up", None),
    "heads_up_delivery": ("heads_up", None),
    "app_update_sheet": ("app_update", "Not now"),
    "system_update": ("system_dialog", "Later"),
}
FOREGROUND = {"interstitial_ad": f"{BROCCOLI}/com.google.android.gms.ads.AdActivity"}

ORDINARY = ["recipe_list", "recipe_detail", "contacts_list", "contact_form", "home_screen", "keyboard_form",
            "landscape_settings", "settings_security_list", "loading_spinner", "sms_thread"]


@pytest.mark.parametrize("name", sorted(INTERRUPTIONS))
def test_interruptions_greeting_the_agent_on_launch_are_found(name):
    kind, dismiss = INTERRUPTIONS[name]
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump(name, foreground=FOREGROUND.get(name))))
    assert f.problem and f.verdict == "true", f.evidence
    d = f.details
    assert d["kind"] == kind
    x1, y1, x2, y2 = d["bounds"]
    assert x2 > x1 and y2 > y1
    roles = {b["label"]: b["role"] for b in d["buttons"]}
    if dismiss is not None:
        assert roles[dismiss] == "dismiss", roles
        assert d["buttons"][0]["label"] == dismiss  # dismiss buttons first
        assert all(x1 <= b["center"][0] <= x2 and y1 <= b["center"][1] <= y2 for b in d["buttons"])
    else:
        assert d["dismiss_hint"] == "swipe_up" and y1 < 600  # a banner at the top


def test_engage_buttons_are_marked():
    roles = lambda name: {b["label"]: b["role"] for b in InterferenceDiagnoser().diagnose(
        ctx(GOAL, dump(name, foreground=FOREGROUND.get(name)))).details["buttons"]}
    assert roles("permission_dialog")["While using the app"] == "engage"
    assert roles("security_popup_systemui")["Continue"] == "engage"
    assert roles("consent_sheet")["Accept all"] == "engage"
    assert roles("consent_sheet")["Manage options"] == "neutral"
    assert roles("anr_dialog")["Close app"] == "destructive"  # it would kill the task's app
    assert roles("trial_offer")["Start free trial"] == "engage"


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_screens_are_not_interference(name):
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump(name)))
    assert f.verdict == "false" and not f.problem, f.evidence


def test_status_bar_navigation_bar_and_keyboard_are_ignored():
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump("keyboard_form")))
    assert f.details.get("candidates") == []
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump("recipe_list")))
    assert f.details.get("candidates") == []


def test_the_apps_own_dialog_opened_by_the_agents_tap_is_not_interference():
    det = dump("recipe_detail")
    delete = element(det, desc="Delete")
    hist = [rec(det, tap(*delete.center), 'Tap "Delete"', "Delete this recipe from the toolbar.")]
    for goal in (GOAL, "Show me the ingredients of Zucchini Soup."):
        f = InterferenceDiagnoser().diagnose(ctx(goal, dump("recipe_delete_dialog"), hist))
        assert f.verdict == "false" and not f.problem, f.evidence


def test_the_same_confirmation_shape_with_interruption_wording_is_interference():
    det = dump("recipe_detail")
    hist = [rec(det, tap(*element(det, desc="Delete").center), 'Tap "Delete"')]
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump("security_popup_app"), hist))
    assert f.problem


def test_the_shade_the_agent_pulled_down_is_not_interference():
    pull = Action(action_type="swipe", x=540, y=5, x2=540, y2=1400, duration_ms=300)
    hist = [rec(dump("home_screen"), pull, "Pull down the notification shade")]
    assert InterferenceDiagnoser().diagnose(ctx("Turn brightness to the max value.", dump("shade_open"), hist)).verdict == "false"
    # it stays the agent's while it stays open
    slide = Action(action_type="swipe", x=600, y=900, x2=1000, y2=900, duration_ms=400)
    hist2 = hist + [rec(dump("shade_open"), slide, "Drag the brightness slider")]
    assert InterferenceDiagnoser().diagnose(ctx("Turn brightness to the max value.", dump("shade_open"), hist2)).verdict == "false"
    # a shade nobody pulled down is suspicious
    hist3 = [rec(dump("home_screen"), tap(540, 1600), "Tap the search bar")]
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, dump("shade_open"), hist3)).verdict != "false"


def test_another_apps_window_over_the_task_app():
    hist = [rec(dump("recipe_list"), Action(action_type="wait", seconds=1.0))]
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump("foreign_promo"), hist))
    assert f.problem and f.details["features"].get("foreign_package")
    assert {b["label"]: b["role"] for b in f.details["buttons"]}["Close"] == "dismiss"


def test_permission_dialog_as_the_foreground_activity():
    obs = dump("permission_dialog", foreground="com.android.permissioncontroller/.permission.ui.GrantPermissionsActivity")
    hist = [rec(dump("recipe_list"), Action(action_type="open_app", app_name="Broccoli"))]
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, obs, hist)).problem


def test_next_page_of_a_consent_flow_after_engaging_is_still_interference():
    sheet = dump("consent_sheet")
    manage = element(sheet, text="Manage options")
    hist = [rec(sheet, tap(*manage.center), 'Tap "Manage options"')]
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, dump("consent_preferences"), hist))
    assert f.problem and f.details["kind"] == "flow", f.evidence
    # declining closes it: the recipe list underneath is not interference
    reject = element(sheet, text="Reject all")
    hist = [rec(sheet, tap(*reject.center), 'Tap "Reject all"')]
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, dump("recipe_list"), hist)).verdict == "false"


def test_a_loading_spinner_is_only_suspicious_when_it_never_goes():
    spin = [dump("loading_spinner") for _ in range(3)]
    wait = Action(action_type="wait", seconds=2.0)
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, spin[0])).verdict == "false"
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, spin[2], [rec(spin[0], wait), rec(spin[1], wait)]))
    assert f.verdict == "uncertain" and f.details["kind"] == "loading" and not f.problem


def _scrim_pair() -> tuple[Observation, Observation]:
    before = Image.new("RGB", (1080, 2400), (245, 245, 245))
    after = Image.new("RGB", (1080, 2400), (98, 98, 98))
    ImageDraw.Draw(after).rectangle((63, 900, 1017, 1500), fill=(255, 255, 255))
    mk = lambda img: screenshot_only(Observation.model_construct(screenshot=img, elements=[], screen_size=(1080, 2400),
                                                                 orientation="portrait", xml=None, foreground=None,
                                                                 step=0, time=0.0))
    return mk(before), mk(after)


def test_screenshot_only():
    before, after = _scrim_pair()
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, after)).verdict == "uncertain"  # nothing to compare with
    f = InterferenceDiagnoser().diagnose(ctx(GOAL, after, [rec(before, tap(540, 300))]))
    assert f.verdict == "uncertain" and f.details["kind"] == "scrim"
    same = _scrim_pair()[0]
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, same, [rec(before, tap(540, 300))])).verdict == "false"


def test_thresholds_come_from_the_config():
    # the rules' own thresholds (the screen model off: it has its own, chosen on dev)
    obs = dump("rate_dialog")
    assert InterferenceDiagnoser().diagnose(ctx(GOAL, obs)).problem
    strict = InterferenceDiagnoser(InterferenceConfig(min_score=0.95, uncertain_score=0.5, screen_model=False))
    assert strict.diagnose(ctx(GOAL, dump("rate_dialog"))).verdict == "uncertain"


def test_a_user_lexicon_replaces_the_builtin_one(tmp_path):
    path = tmp_path / "lexicon.yaml"
    path.write_text(textwrap.dedent("""
        terms:
          merge: 0.5
    """), encoding="utf-8")
    d = InterferenceDiagnoser(InterferenceConfig(lexicon_file=str(path)))
    f = d.diagnose(ctx(GOAL, dump("rate_dialog")))
    assert not f.problem  # "Enjoying", "rate" are no longer interruption words
    bad = tmp_path / "bad.yaml"
    bad.write_text("terms: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="terms"):
        InterferenceDiagnoser(InterferenceConfig(lexicon_file=str(bad)))
    roles = tmp_path / "roles.yaml"
    roles.write_text("terms: {merge: 0.5}\nbutton_roles: {dismiss: [nope]}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="ttir/core/data/roles"):  # one role vocabulary, not one per lexicon
        InterferenceDiagnoser(InterferenceConfig(lexicon_file=str(roles)))


def test_cascade_asks_the_model_only_when_uncertain_and_keeps_the_overlay_details():
    judge = FakeJudge(judgment(interference_present=True, reason="a pop-up"))
    d = InterferenceDiagnoser(InterferenceConfig(min_score=0.95, uncertain_score=0.5, screen_model=False), judge=judge)
    f = d.diagnose(ctx(GOAL, dump("rate_dialog")))
    assert f.problem and f.tier == "cascade" and judge.calls == 1
    assert f.details["buttons"] and f.details["kind"] == "dialog"
    f = d.diagnose(ctx(GOAL, dump("recipe_list")))
    assert not f.problem and judge.calls == 1


# --- goal-aware: what a dialog asks for, not the words a task's goal happens to share with it


def _first_screen_of(task_name: str, perturbation: str, seed: int, app: str):
    from benchmark import SimDevice, make_task
    from perturb import PerturbedDevice, make

    task = make_task(task_name, seed=0, i=0)
    env = PerturbedDevice(SimDevice(), [make(perturbation, trigger_step=1)], seed=seed, budget=60)
    env.reset(task)
    env.execute(Action(action_type="open_app", app_name=app))
    return task.goal, env.observe()


def test_an_ad_consent_in_the_task_app_is_interference_though_it_names_the_app():
    """"Allow SMS Messenger to show you ads" shares "SMS Messenger" with a goal about sending an SMS:
    the app's name asks for nothing (the planner once declined it, then claimed the task done)."""
    goal, obs = _first_screen_of("SimpleSmsSendToContact", "bottom_sheet_consent", 220666417, "Simple SMS Messenger")
    assert any("ads" in (e.text or "").lower() for e in obs.elements), "the consent sheet is on screen"
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=obs))
    assert f.problem and "goal_needs_it" not in f.evidence[0]


def test_a_permission_request_is_judged_by_what_it_asks_not_by_the_app_asking():
    """"Allow Files to record audio?" asks nothing of a goal about a file in the Pictures folder."""
    from diagnosers.signals.intents import intents_for, shared_intents

    goal = "Rename the file family_dinner.jpg in the Pictures folder of the Pixel 6 storage to dinner.jpg"
    texts = ["Allow Files to record audio?", "Allow", "Don't allow"]
    assert not shared_intents(goal, texts, "com.android.permissioncontroller")
    recipe = "Add the following recipe into the Broccoli app: Title: Soup, Directions: simmer for an hour"
    assert not shared_intents(recipe, ["Allow Broccoli to access this device's location?"], "com.android.permissioncontroller")
    # ... while a permission the goal's own action needs stays the task's own, and only a permission
    scan = shared_intents("Scan the QR code on the poster", ["Allow Scanner to take pictures and record video?"],
                          "com.android.permissioncontroller")
    assert scan == {"camera"} and intents_for("permission", scan) == {"camera"} and not intents_for("dialog", scan)
    sign_in = frozenset({"sign_in"})
    assert intents_for("dialog", sign_in) == sign_in  # an account chooser is the sign-in itself
    assert not intents_for("permission", sign_in)  # a permission request is no account chooser
    # a password manager's offer to save the password comes after the sign-in: no way to sign in
    assert not shared_intents("Sign in to Morakaba", ["Save password?", "Save your password to Google"], "com.google.android.gms")
    assert shared_intents("Sign in to Morakaba", ["Choose an account", "Use another account"], "com.google.android.gms")


def test_a_full_page_paywall_is_a_gate_its_free_version_the_way_past_it():
    """The ad_trial_offer paywall (Close, Start free trial, Continue with ads) had no candidate at all once
    gates needed a wide way on: "Continue with ads" is a paywall's dismiss."""
    from ttir.core.lexicon import vocabulary

    assert vocabulary().phrase_role("Continue with ads") == "dismiss"
    shown = (_first_screen_of("AudioRecorderDeleteRecording", "ad_trial_offer", seed, "Audio Recorder")
             for seed in range(40))  # the variant is a seeded draw: the first seed that shows this paywall
    goal, obs = next((g, o) for g, o in shown if any((e.text or "") == "Continue with ads" for e in o.elements))
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal=goal, observation=obs))
    assert f.problem, f.evidence


def test_a_full_screen_prompt_with_a_close_in_the_corner_is_no_page_navigated_into():
    """popup_security's Security Center review (the simulator's screen, kept as a fixture) is drawn
    full screen by the permission controller with a Close (×) where a page has its up arrow: the
    'navigated page' exemption for Safety-Center-like pages had dropped its tuning-set recall to 0.87."""
    obs = dump("sim_security_center_review",
               foreground="com.android.permissioncontroller/com.android.permissioncontroller.safetycenter.ui.SafetyCenterActivity")
    f = InterferenceDiagnoser().diagnose(DiagnosisContext(goal="Start the stopwatch in the Clock app", observation=obs))
    assert f.problem, f.evidence


def test_a_star_in_a_goal_term_stands_for_one_word():
    from diagnosers.signals.intents import goal_intents
    from ttir.core.lexicon import term_pattern

    rx = term_pattern("create a * account")
    assert rx.search("create a bookmyjuice account with a phone number")
    assert not rx.search("create a account") and not rx.search("create a new shared account")
    assert not term_pattern("ad").search("add a recipe")  # still whole words
    assert "sign_in" in goal_intents("Create a BookMyJuice account with a phone number")
    assert "sign_in" not in goal_intents("Open my account settings and change the photo")
