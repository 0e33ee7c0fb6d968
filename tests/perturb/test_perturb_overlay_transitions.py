"""The ten transition perturbations on the simulated phone: each appears at its
step in both the pixels and the UI dump, and its buttons, back key, blocking and
auto-dismiss behave as described; engaging is a real detour."""

from __future__ import annotations

import pytest

import perturb
from tests.support.overlay_helpers import (
    TRANSITIONS,
    act,
    advance_to,
    differs_in,
    events,
    find,
    foreign,
    last,
    make_env,
    open_contacts,
    raw,
    tap,
)

# when each one first shows in ContactsAddContact after "open Contacts" at step 1 and waits
SHOWN_AT = {
    "popup_permission": 1, "popup_security": 1, "bottom_sheet_consent": 1, "interstitial_ad": 2, "ad_trial_offer": 1,
    "rate_dialog": 3, "notification_message": 1, "notification_delivery": 2, "update_app_sheet": 1, "update_system": 2,
    "whats_new_dialog": 1, "first_run_gate": 1,
}


def _shown(name: str, seed: int = 0, **overrides):
    env, _ = make_env(name, seed=seed, **overrides)
    open_contacts(env)
    obs = advance_to(env, SHOWN_AT[name])
    return env, obs


def _overlay(env):
    live = env.overlays.of(env.perturbations[0].name)
    assert len(live) == 1
    return live[0]


def _button(env, role: str):
    ov = _overlay(env)
    page = ov.page
    for b in [*page.buttons, *([page.close_button] if page.close_button else [])]:
        if b.role == role:
            return b.label or b.desc
    return None


@pytest.mark.parametrize("name", TRANSITIONS)
def test_appears_at_its_step_in_pixels_and_dump(name):
    env, obs = make_env(name)
    obs = open_contacts(env)
    while env.ctx.step < SHOWN_AT[name]:
        assert not foreign(obs, raw(env)) and obs.xml == raw(env).xml, "nothing is drawn before the trigger step"
        obs = act(env, "wait")
    shown = last(env, "overlay_shown")
    assert shown["step"] == SHOWN_AT[name]
    added = foreign(obs, raw(env))
    assert added, "the overlay's nodes are in the dump"
    title = shown["details"]["title"]
    assert title and title in obs.xml and title not in raw(env).xml
    roots = [e for e in added if e.parent is None or obs.elements[e.parent] not in added]
    box = max((e.bounds for e in roots), key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
    assert differs_in(obs, raw(env), box), "the overlay is drawn in the screenshot"
    assert raw(env).screenshot is not obs.screenshot  # composited into a copy


@pytest.mark.parametrize("name", TRANSITIONS)
def test_dismiss_closes_and_settings_are_untouched(name):
    env, obs = _shown(name)
    settings = env.settings
    label = _button(env, "dismiss")
    if label is None:  # a heads-up notification without a dismiss action: swipe it away
        row = next(e for e in obs.elements if e.resource_id.endswith("expandableNotificationRow"))
        obs = act(env, "swipe", x=row.center[0], y=row.center[1], x2=row.center[0] + 500, y2=row.center[1])
        assert last(env, "overlay_dismissed")["details"]["via"] == "swipe"
    else:
        obs = tap(env, label)
        ev = last(env, "overlay_dismissed")["details"]
        assert ev["via"] == "button" and ev["role"] == "dismiss" and ev["label"] == label
    assert not env.overlays.active
    assert obs.xml == raw(env).xml and obs.screenshot.tobytes() == raw(env).screenshot.tobytes()
    assert raw(env).package == "com.google.android.contacts"
    assert env.settings == settings
    env.close()
    assert env.inner.settings == env.inner._initial_settings


@pytest.mark.parametrize("name", TRANSITIONS)
def test_blocking_absorbs_outside_taps_and_non_blocking_lets_them_through(name):
    env, obs = _shown(name)
    ov = _overlay(env)
    box = ov._laid.box
    w, h = obs.screen_size
    # a point of the app area outside the overlay: the first contact row if free, else any free point
    target = next(e for e in raw(env).elements if e.resource_id.endswith("contact_row"))
    point = target.center
    full = ov.style == "fullscreen"
    if not full and box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]:
        point = (w // 2, box[3] + 20) if box[3] + 20 < h - 200 else (w // 2, box[1] - 20)
    before = raw(env).xml
    act(env, "click", x=point[0], y=point[1])
    if full:  # the page covers the app: the contact under it cannot be reached
        assert last(env, "blocked_action")["details"]["where"] == "overlay"
        assert raw(env).xml == before and env.overlays.active
    elif ov.blocking:
        assert last(env, "blocked_action")["details"]["where"] == "outside"
        assert raw(env).xml == before and env.overlays.active
    else:
        assert "blocked_action" not in events(env)
        assert raw(env).xml != before  # the tap reached the app (it opened the contact)


@pytest.mark.parametrize("name", TRANSITIONS)
def test_back_behaviour(name):
    env, obs = _shown(name)
    ov = _overlay(env)
    before = raw(env).xml
    act(env, "navigate_back")
    mode = ov.back_mode
    if mode == "dismiss":
        assert last(env, "overlay_dismissed")["details"]["via"] == "back" and not env.overlays.active
        assert raw(env).xml == before  # the app did not see the back key
    elif mode == "absorb":
        assert last(env, "blocked_action")["details"]["where"] == "back" and env.overlays.active
    else:  # heads-up notifications: back goes to the app underneath (Contacts' list -> home)
        assert env.overlays.active and "blocked_action" not in events(env)
        assert raw(env).package.endswith("launcher")


@pytest.mark.parametrize("name", ["notification_message", "notification_delivery"])
def test_heads_up_notifications_time_out(name):
    env, _ = _shown(name)
    shown = last(env, "overlay_shown")["step"]
    dur = perturb.make(name).persistence.duration_steps
    obs = advance_to(env, shown + dur - 1)
    assert foreign(obs, raw(env))
    obs = advance_to(env, shown + dur)
    assert not foreign(obs, raw(env)) and "overlay_auto_dismissed" in events(env)


@pytest.mark.parametrize("name", TRANSITIONS)
def test_single_button_mode_leaves_only_the_long_path(name):
    env, obs = _shown(name, single_button=True)
    ov = _overlay(env)
    assert _button(env, "dismiss") is None
    if ov.back_mode != "pass":
        act(env, "navigate_back")
        assert env.overlays.active, "back does not close it either"


def test_popup_security_continue_enters_the_security_center_wizard():
    env, obs = _shown("popup_security", profile_pool=["verify_action"])
    assert find(obs, "Verify this action") and find(obs, "Continue")
    obs = tap(env, "Continue")
    assert last(env, "overlay_engaged")["details"]["label"] == "Continue"
    assert obs.foreground.startswith("com.android.permissioncontroller/")
    assert find(obs, "Security Center") and find(obs, "Review this action") and find(obs, "Risk level: Medium")
    assert not [e for e in obs.elements if e.package == "com.google.android.contacts"], "the wizard covers the app"
    obs = tap(env, "Continue")
    pages = ["Confirm it's you", "Check your device", "Check your account"]
    for i, page in enumerate(pages):
        assert find(obs, page) and find(obs, f"Step {i + 1} of 3 · Verification")
        nxt = find(obs, "Next")
        assert not nxt.enabled
        obs = act(env, "click", x=nxt.center[0], y=nxt.center[1])
        assert last(env, "blocked_action")["details"]["where"] == "overlay" and find(obs, page)
        boxes = [e for e in obs.elements if e.class_name == "android.widget.CheckBox"]
        assert len(boxes) == 3
        for b in boxes:
            obs = act(env, "click", x=b.center[0], y=b.center[1])
        assert all(e.checked for e in obs.elements if e.class_name == "android.widget.CheckBox")
        if i == 1:  # back returns to the previous page; this page keeps its boxes checked
            obs = act(env, "navigate_back")
            assert find(obs, pages[0]) and "page_back" in events(env)
            obs = tap(env, "Next")
            assert find(obs, pages[1]) and all(e.checked for e in obs.elements if e.class_name == "android.widget.CheckBox")
        obs = tap(env, "Next")
    assert find(obs, "How long should this approval last?")
    assert not find(obs, "Approve").enabled
    tap(env, "Allow for 24 hours")
    obs = tap(env, "Approve")
    assert find(obs, "Action approved")
    obs = tap(env, "Done")
    assert not env.overlays.active and obs.package == "com.google.android.contacts"
    to_pages = [e["details"]["to_page"] for e in env.event_log() if e["event"] == "page_advanced"]
    assert to_pages == ["risk_summary", "verify_identity", "verify_device", "verify_device", "verify_account",
                        "approval_scope", "approved"]
    assert last(env, "overlay_closed")["details"]["reason"] == "completed"
    assert len([e for e in env.event_log() if e["event"] == "overlay_input"]) >= 10


def test_popup_permission_allow_and_settings_path():
    env, obs = _shown("popup_permission", profile_pool=["location"])
    assert find(obs, "Allow Contacts to access this device's location?")
    deny = find(obs, "Don’t allow")
    assert deny.resource_id == "com.android.permissioncontroller:id/permission_deny_button"
    tap(env, "While using the app")
    assert last(env, "overlay_engaged")["details"]["role"] == "engage" and not env.overlays.active
    env, obs = _shown("popup_permission", profile_pool=["all_files_rationale"])
    tap(env, "Go to Settings")
    assert raw(env).package == "com.android.settings" and "app_launched" in events(env)


def test_consent_manage_options_is_a_second_page():
    env, obs = _shown("bottom_sheet_consent", profile_pool=["cookies"])
    obs = tap(env, "Manage options")
    assert find(obs, "Manage your choices") and last(env, "page_advanced")["details"]["to_page"] == "manage_choices"
    obs = act(env, "navigate_back")
    assert find(obs, "We value your privacy")
    tap(env, "Manage options")
    tap(env, "Personalised advertising")
    obs = tap(env, "Confirm choices")
    assert not env.overlays.active and obs.package == "com.google.android.contacts"


def test_interstitial_ad_call_to_action_leaves_the_app():
    env, obs = _shown("interstitial_ad", profile_pool=["shopping"])
    assert obs.foreground.endswith("/com.google.android.gms.ads.AdActivity")
    assert find(obs, "Close ad").resource_id == "com.google.android.contacts:id/close_button"
    tap(env, "Shop now")
    assert "overlay_engaged" in events(env) and raw(env).package != "com.google.android.contacts"
    if env.inner.resolve_app("Chrome"):
        assert raw(env).package == "com.android.chrome"


def test_ad_trial_offer_sign_up_form_takes_typing():
    env, obs = _shown("ad_trial_offer", profile_pool=["premium_7day"])
    data_before = env.inner.app("Contacts").snapshot()
    obs = tap(env, "Start free trial")
    assert find(obs, "Create your account")
    cont = find(obs, "Continue")
    assert not cont.enabled
    for hint, value in (("Full name", "Dana Lee"), ("Email address", "dana@example.com"), ("Password", "hunter22")):
        field = find(obs, hint)
        assert field.editable
        obs = act(env, "input_text", text=value, x=field.center[0], y=field.center[1])
    assert find(obs, "Dana Lee") and find(obs, "dana@example.com") and "overlay_text_entered" in events(env)
    assert find(obs, "Continue").enabled
    obs = tap(env, "Continue")
    tap(env, "Yearly · $39.99/year after the trial (save 33%)")
    obs = tap(env, "Continue")
    assert find(obs, "Confirm your free trial")
    tap(env, "I agree to the Terms of Service and the subscription terms")
    obs = tap(env, "Start trial")
    assert find(obs, "You're all set!")
    tap(env, "Done")
    assert not env.overlays.active
    assert env.inner.app("Contacts").snapshot() == data_before  # typing went into the overlay, not the app


def test_rate_dialog_stars_and_review():
    env, obs = _shown("rate_dialog", profile_pool=["enjoying_stars"])
    assert not find(obs, "Submit").enabled
    obs = tap(env, "4 stars")
    assert find(obs, "Submit").enabled
    obs = tap(env, "Submit")
    field = find(obs, "Describe your experience (optional)")
    obs = act(env, "input_text", text="Great app", x=field.center[0], y=field.center[1])
    assert find(obs, "Great app")
    obs = tap(env, "Post")
    assert find(obs, "Thanks for your feedback!")
    tap(env, "OK")
    assert not env.overlays.active


def test_notification_tap_opens_the_messages_app():
    env, obs = _shown("notification_message", profile_pool=["photos"])
    row = next(e for e in obs.elements if e.resource_id == "com.android.systemui:id/expandableNotificationRow")
    assert row.content_desc == "Messages notification: Alex Chen" and row.clickable
    act(env, "click", x=row.bounds[0] + 40, y=row.bounds[1] + 30)
    assert last(env, "overlay_engaged")["details"]["role"] == "engage"
    if env.inner.resolve_app("Messages"):
        assert raw(env).package == env.inner.resolve_app("Messages")


def test_update_app_sheet_update_shows_progress_for_several_steps():
    env, obs = _shown("update_app_sheet", profile_pool=["play_flexible"])
    assert find(obs, "Update available").package == "com.android.vending"
    obs = tap(env, "Update")
    seen = []
    for _ in range(6):
        pct = next((e.content_desc for e in obs.elements if e.class_name == "android.widget.ProgressBar"), None)
        seen.append(pct or ("installing" if find(obs, "Installing Contacts…") else None))
        if not env.overlays.active:
            break
        before = raw(env).xml
        obs = act(env, "click", x=obs.screen_size[0] // 2, y=obs.screen_size[1] // 3)  # the app cannot be reached
        assert raw(env).xml == before
    assert seen[:4] == ["18%", "57%", "91%", "installing"]
    assert not env.overlays.active and last(env, "overlay_closed")["details"]["reason"] == "completed"
    assert [e["details"]["auto"] for e in env.event_log() if e["event"] == "page_advanced"][1:] == [True, True, True]


def test_update_system_install_and_details():
    env, obs = _shown("update_system", profile_pool=["security_update"])
    obs = tap(env, "Install now")
    assert obs.foreground == "com.google.android.gms/com.google.android.gms.update.SystemUpdateActivity"
    env, obs = _shown("update_system", profile_pool=["software_update_details"])
    tap(env, "Details")
    assert raw(env).package == "com.android.settings"


def test_popup_security_on_app_launch_and_explicit_trigger_step():
    # case study 3: the pop-up greets the agent when the task's app opens
    env, obs = make_env("popup_security")
    assert not env.overlays.active
    open_contacts(env)
    assert last(env, "overlay_shown")["step"] == 1
    # make(name, trigger_step=3): not before step 3, even with the app open
    env, obs = make_env("popup_security", trigger_step=3)
    open_contacts(env)
    advance_to(env, 2)
    assert not env.overlays.active
    advance_to(env, 3)
    assert last(env, "overlay_shown")["step"] == 3
    # with no app ever opened, the fallback step still brings it (a system prompt)
    env, obs = make_env("popup_security", task="SystemBrightnessMax")
    advance_to(env, 3)
    assert env.overlays.active


def test_content_overrides_and_actions():
    env, obs = _shown("popup_security", profile_pool=["verify_action"], title="Confirm payment",
                      message="Tap Continue to approve.", secondary_action="home")
    assert find(obs, "Confirm payment") and find(obs, "Tap Continue to approve.")
    tap(env, "Cancel")
    assert raw(env).package.endswith("launcher") and "went_home" in events(env)
    with pytest.raises(ValueError, match="primary_action"):
        perturb.make("popup_security", primary_action="explode")
    with pytest.raises(ValueError, match="profile_pool"):
        perturb.make("rate_dialog", profile_pool=["no_such_variant"])
