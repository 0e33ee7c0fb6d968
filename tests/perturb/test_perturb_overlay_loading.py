"""Loading screen, frozen screen, skeleton placeholders and the app hang, on the
simulated phone: visible in pixels and dump at their step, blocking and logging
input, ending after N steps — and the hang only clears after close + relaunch."""

from __future__ import annotations

import pytest

from tests.support.overlay_helpers import act, differs_in, events, find, img_hash, last, make_env, open_contacts, raw, tap

CONTACTS = "com.google.android.contacts"


def _fab(env):
    return tap(env, "Create contact")


def test_loading_screen_after_the_action_blocks_then_ends():
    env, _ = make_env("execution_delay_loading", profile_pool=["loading"])
    open_contacts(env)
    obs = _fab(env)  # action 2: the editor opens behind a loading screen
    assert last(env, "overlay_shown")["step"] == 2
    bar = [e for e in obs.elements if e.class_name == "android.widget.ProgressBar"]
    assert bar and bar[0].package == CONTACTS and find(obs, "Loading…")
    assert not find(obs, "First name") and find(raw(env), "First name"), "the content is hidden, not gone"
    assert differs_in(obs, raw(env), (0, 300, 1080, 2000))
    field = find(raw(env), "First name")
    obs = act(env, "click", x=field.center[0], y=field.center[1])
    assert last(env, "blocked_action")["details"]["where"] == "screen"
    assert raw(env).find(resource_id="first_name")[0].focused is False
    assert find(obs, "Loading…")  # step 3: still loading
    obs = act(env, "wait")  # step 4 = 2 + duration
    assert "loading_finished" in events(env) and find(obs, "First name") and obs.xml == raw(env).xml


def test_loading_without_blocking_lets_input_reach_the_app():
    env, _ = make_env("execution_delay_loading", block_actions=False, surface="dialog")
    open_contacts(env)
    obs = _fab(env)
    assert find(obs, "First name"), "a progress dialog keeps the screen visible"
    assert [e for e in obs.elements if e.resource_id == "android:id/progress"]
    field = find(raw(env), "First name")
    act(env, "input_text", text="Ana", x=field.center[0], y=field.center[1])
    assert "blocked_action" not in events(env) and raw(env).find(resource_id="first_name")[0].text == "Ana"


def test_frozen_screen_keeps_the_old_frame():
    env, _ = make_env("execution_delay_frozen", show_text=True, profile_pool=["processing"])
    open_contacts(env)
    list_obs = env.observe()
    obs = _fab(env)
    assert last(env, "overlay_shown")["step"] == 2
    assert find(raw(env), "First name") and not find(obs, "First name")
    # the frame the agent acted on, plus the toast
    assert [e.text for e in obs.elements if e.text and e.text != "Processing…"] == [e.text for e in list_obs.elements if e.text]
    assert find(obs, "Processing…").resource_id == "android:id/message"
    assert obs.screenshot.crop((0, 0, 1080, 1500)).tobytes() == list_obs.screenshot.crop((0, 0, 1080, 1500)).tobytes()
    act(env, "navigate_back")
    assert last(env, "blocked_action")["details"]["where"] == "screen"
    assert raw(env).package == CONTACTS and find(raw(env), "First name")
    act(env, "wait")
    obs = env.observe()
    assert "frozen_finished" in events(env) and obs.xml == raw(env).xml and find(obs, "First name")


def test_skeleton_placeholders_cover_the_content_for_n_steps():
    env, _ = make_env("partial_loading_skeleton", profile_pool=["loading_content"])
    obs = open_contacts(env)
    assert last(env, "overlay_shown")["step"] == 1
    names = [e.text for e in raw(env).elements if e.resource_id.endswith("cliv_name_textview")]
    assert names and not any(find(obs, n) for n in names)
    assert [e for e in obs.elements if e.class_name == "com.facebook.shimmer.ShimmerFrameLayout"]
    assert find(obs, "Loading content…")
    row = next(e for e in raw(env).elements if e.resource_id.endswith("contact_row"))
    assert differs_in(obs, raw(env), row.bounds)
    obs2 = act(env, "click", x=row.center[0], y=row.center[1])
    assert last(env, "blocked_action")["details"]["where"] == "placeholder" and raw(env).find(resource_id="contact_row")
    # the FAB is drawn above the list: still there and still works
    fab = find(obs2, "Create contact")
    assert fab is not None
    obs = act(env, "click", x=fab.center[0], y=fab.center[1])
    assert find(raw(env), "First name")
    assert "skeleton_cleared" in events(env) and obs.xml == raw(env).xml


def test_skeleton_partial_coverage_keeps_the_top_rows():
    env, _ = make_env("partial_loading_skeleton", coverage=0.5)
    obs = open_contacts(env)
    names = [e.text for e in raw(env).elements if e.resource_id.endswith("cliv_name_textview")]
    shown = [n for n in names if find(obs, n)]
    assert 0 < len(shown) < len(names) and shown == names[: len(shown)]


def test_app_hang_wait_keeps_it_hung_and_close_plus_relaunch_recovers():
    env, _ = make_env("app_hang_restart_required", profile_pool=["close_or_wait"])
    settings = env.settings
    open_contacts(env)
    obs = act(env, "wait")  # APP_HANG_TRIGGER_STEPS = 2
    assert last(env, "app_hang")["step"] == 2
    title = find(obs, "Contacts isn't responding")
    assert title is not None and title.package == "android" and title.resource_id == "android:id/alertTitle"
    assert find(obs, "Close app").resource_id == "android:id/aerr_close"
    assert find(obs, "Wait").resource_id == "android:id/aerr_wait"
    assert differs_in(obs, raw(env), title.bounds)
    act(env, "navigate_back")
    assert last(env, "blocked_action")["details"]["where"] == "back"
    obs = tap(env, "Wait")
    assert "hang_wait" in events(env) and not find(obs, "Contacts isn't responding")
    fab = find(obs, "Create contact")
    obs = act(env, "click", x=fab.center[0], y=fab.center[1])
    assert last(env, "blocked_action")["details"]["where"] == "app_not_responding"
    assert not find(raw(env), "First name")
    assert find(obs, "Contacts isn't responding") and "hang_persists" in events(env)
    # leaving and coming back does not help: the process is still hung
    act(env, "navigate_home")
    obs = act(env, "open_app", app_name="Contacts")
    assert find(obs, "Contacts isn't responding")
    obs = tap(env, "Close app")
    assert "app_closed" in events(env) and raw(env).package.endswith("launcher")
    assert not env.inner.apps[CONTACTS].running
    obs = act(env, "open_app", app_name="Contacts")
    assert "hang_recovered" in events(env) and not find(obs, "Contacts isn't responding")
    obs = _fab(env)
    assert find(obs, "First name"), "the app responds again"
    assert env.settings == settings


def test_app_hang_recovery_options_and_dialog_text():
    env, _ = make_env("app_hang_restart_required", recovery_options=["close_app"], title="Contacts has stopped working")
    open_contacts(env)
    obs = act(env, "wait")
    assert find(obs, "Contacts has stopped working") and not find(obs, "Wait") and find(obs, "Close app")


@pytest.mark.parametrize("name", ["execution_delay_loading", "execution_delay_frozen", "partial_loading_skeleton",
                                  "app_hang_restart_required"])
def test_same_seed_same_frames(name):
    def run(seed):
        env, obs = make_env(name, seed=seed)
        hashes = [img_hash(obs)]
        for a in (dict(action_type="open_app", app_name="Contacts"), dict(action_type="wait"), dict(action_type="wait"),
                  dict(action_type="click", x=540, y=1200), dict(action_type="wait")):
            obs = act(env, **a)
            hashes.append(img_hash(obs))
        return env.event_log(), hashes

    assert run(3) == run(3)
