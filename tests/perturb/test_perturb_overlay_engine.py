"""The overlay engine itself: content pools, geometry, where nodes go in the dump,
input routing (points and indices), scrolling, theme, and that it needs nothing
but the Device protocol."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import perturb
from benchmark import SimDevice, make_task
from benchmark.ui.theme import palette
from tests.support.overlay_helpers import TRANSITIONS, act, events, find, foreign, last, make_env, open_contacts, raw, tap
from perturb import PerturbedDevice
from perturb.overlay.content import load_pool, pool_names
from perturb.overlay.geometry import geometry
from perturb.overlay.spec import PoolSpec
from ttir.core.types import Action, Observation


def test_every_pool_has_at_least_four_variants():
    names = pool_names()
    for name in (*TRANSITIONS, "execution_delay_loading", "execution_delay_frozen", "partial_loading_skeleton",
                 "app_hang_restart_required"):
        assert name in names
        assert len(load_pool(name).variants) >= 4


def test_bad_content_is_reported_with_the_field():
    with pytest.raises(KeyError, match="popup_permission"):
        load_pool("no_such_pool")
    bad = {"variants": [{"id": f"v{i}", "title": "t", "buttons": [{"label": "Go", "action": "teleport"}]} for i in range(4)]}
    with pytest.raises(ValidationError, match="action='teleport' is unknown"):
        PoolSpec.model_validate(bad)
    bad = {"variants": [{"id": "same", "title": "t"}] * 4}
    with pytest.raises(ValidationError, match="unique"):
        PoolSpec.model_validate(bad)
    bad = {"variants": [{"id": f"v{i}", "title": "t", "buttons": [{"label": "Go", "action": "flow:missing"}]} for i in range(4)]}
    with pytest.raises(ValidationError, match="names no flow"):
        PoolSpec.model_validate(bad)


def test_an_in_app_dialog_lives_in_the_app_window_and_a_system_one_in_its_own():
    env, _ = make_env("rate_dialog", profile_pool=["love_it"], trigger_step=1)
    obs = open_contacts(env)
    panel = find(obs, "Do you love Contacts?")
    assert panel.package == "com.google.android.contacts"
    root = panel
    while root.parent is not None:
        root = obs.elements[root.parent]
    assert root.package == "com.google.android.contacts" and root is obs.elements[0]
    env, _ = make_env("popup_permission", profile_pool=["contacts"])
    obs = open_contacts(env)
    roots = [e for e in obs.elements if e.parent is None]
    assert [r.package for r in roots] == ["com.google.android.contacts", "com.android.permissioncontroller",
                                          "com.android.systemui", "com.android.systemui"]
    again = Observation.from_xml(obs.xml)
    assert [e.model_dump() for e in again.elements] == [e.model_dump() for e in obs.elements]


def test_index_actions_refer_to_the_screen_the_agent_saw():
    env, _ = make_env("popup_permission", profile_pool=["contacts"])
    obs = open_contacts(env)
    deny = next(i for i, e in enumerate(obs.elements) if e.text == "Don’t allow")
    app_nodes = sum(1 for e in raw(env).elements if e.package == "com.google.android.contacts")
    assert deny >= app_nodes  # the dialog's nodes come after the app's
    act(env, "click", index=deny)
    assert last(env, "overlay_dismissed")["details"]["label"] == "Don’t allow"
    # the nav bar's Home sits after the inserted window: its index still means Home
    env, _ = make_env("notification_message", profile_pool=["photos"])
    obs = open_contacts(env)
    home = next(i for i, e in enumerate(obs.elements) if e.content_desc == "Home")
    base = raw(env).elements
    assert home >= len(base) or base[home].content_desc != "Home", "the index differs from the device's"
    act(env, "click", index=home)
    assert raw(env).package.endswith("launcher")


def test_app_scoped_overlay_follows_its_app_and_global_one_stays():
    env, _ = make_env("popup_security", profile_pool=["verify_action"])
    obs = open_contacts(env)
    assert find(obs, "Verify this action")
    obs = act(env, "app_switch")
    assert not find(obs, "Verify this action"), "hidden while its app is in the background"
    obs = act(env, "open_app", app_name="Contacts")
    assert find(obs, "Verify this action"), "still there when the app returns"
    env, _ = make_env("notification_message")
    open_contacts(env)
    obs = act(env, "navigate_home")
    assert foreign(obs, raw(env)), "a heads-up notification is above every app"


def test_reset_clears_overlays():
    env, _ = make_env("popup_security")
    open_contacts(env)
    assert env.overlays.active
    obs = env.reset(make_task("ContactsAddContact"))
    assert not env.overlays.active and obs.xml == raw(env).xml


def test_dark_theme_and_density_come_from_the_device():
    env, _ = make_env("popup_permission", profile_pool=["contacts"])
    light = open_contacts(env)
    env2, _ = make_env("popup_permission", profile_pool=["contacts"])
    env2.configure(dark_theme=True, density_scale=0.76)
    dark = open_contacts(env2)
    a, b = find(light, "Don’t allow"), find(dark, "Don’t allow")
    assert b.height < a.height, "the overlay follows the device density"
    panel = find(dark, "Allow Contacts to access your contacts?")
    x, y = panel.bounds[0] - 20, panel.bounds[1]
    assert dark.screenshot.getpixel((x, y)) == palette(True)["dialog"]
    assert light.screenshot.getpixel((a.bounds[0] - 20, a.bounds[1])) == palette(False)["dialog"]


def test_density_is_estimated_when_the_device_cannot_say():
    obs = SimDevice().observe()
    g = geometry(obs, object())
    assert abs(g.metrics.dpi - 420) < 5 and g.area == (0, 74, 1080, 2274)
    bare = Observation.from_xml(obs.xml, screenshot=None)
    g = geometry(bare, object())
    assert g.area == (0, 74, 1080, 2274) and g.dark is False


def test_a_card_that_does_not_fit_scrolls_and_keeps_its_buttons():
    env, _ = make_env("popup_security", profile_pool=["verify_action"])
    env.configure(orientation="landscape", font_scale=1.35)
    open_contacts(env)
    tap(env, "Continue")
    obs = tap(env, "Continue")
    body = next(e for e in obs.elements if e.class_name == "android.widget.ScrollView")
    assert body.scrollable
    w, h = obs.screen_size
    for label in ("Cancel", "Next"):
        b = find(obs, label)
        assert b.bounds[3] <= h and b.bounds[1] >= 0
    seen = {e.text for e in obs.elements if e.class_name == "android.widget.CheckBox"}
    obs = act(env, "scroll", direction="down")
    after = {e.text for e in obs.elements if e.class_name == "android.widget.CheckBox"}
    assert after - seen, "scrolling the card reveals more checkboxes"
    assert "blocked_action" not in events(env)


def test_outside_tap_can_dismiss():
    env, _ = make_env("rate_dialog", profile_pool=["love_it"], trigger_step=1, outside_dismisses=True)
    obs = open_contacts(env)
    act(env, "click", x=50, y=obs.screen_size[1] - 300)
    assert last(env, "overlay_dismissed")["details"]["via"] == "outside"


class ProtocolOnlyDevice:
    """A device with nothing but the Device protocol, whose dumps come back through
    the uiautomator XML parser (as on a real phone over ADB)."""

    def __init__(self) -> None:
        self._sim = SimDevice()

    @property
    def settings(self) -> Any:
        return self._sim.settings

    def observe(self) -> Observation:
        o = self._sim.observe()
        return Observation.from_xml(o.xml, screenshot=o.screenshot.copy(), foreground=o.foreground)

    def execute(self, action: Action) -> None:
        self._sim.execute(action)

    def reset(self, task: Any = None) -> Observation:
        self._sim.reset(task)
        return self.observe()

    def launch(self, app: str) -> None:
        self._sim.launch(app)

    def configure(self, **settings: Any) -> None:
        self._sim.configure(**settings)

    def close(self) -> None:
        self._sim.close()


def test_works_with_only_the_device_protocol():
    dev = ProtocolOnlyDevice()
    env = PerturbedDevice(dev, [perturb.make("popup_permission", profile_pool=["camera"])], seed=0)
    env.reset(make_task("ContactsAddContact"))
    obs = act(env, "open_app", app_name="Contacts")
    assert find(obs, "Allow Contacts to take pictures and record video?")
    assert foreign(obs, dev.observe())
    tap(env, "Don’t allow")
    assert not env.overlays.active
    env = PerturbedDevice(ProtocolOnlyDevice(), [perturb.make("app_hang_restart_required", profile_pool=["close_or_wait"])], seed=0)
    env.reset(make_task("ContactsAddContact"))
    act(env, "open_app", app_name="Contacts")
    obs = act(env, "wait")
    assert find(obs, "Contacts isn't responding")
    tap(env, "Close app")  # no force_stop / shell on this device: it at least leaves the app
    assert env.inner.observe().package.endswith("launcher")


def test_works_over_a_real_phone_adb_device(tmp_path):
    """AdbDevice over the recording fake phone: the overlay is in the screenshot and
    the dump, a tap on its button never reaches the phone, a tap after it does."""
    from tests.support.adb_fake import FakePhone
    from benchmark.devices import AdbDevice
    from benchmark.devices.adb import cleanup as adb_cleanup

    phone = FakePhone()
    dev = AdbDevice(adb_device=phone, sleep=lambda s: None, settle_seconds=0, action_settle_seconds=0,
                    journal_dir=tmp_path / "journal")
    try:
        env = PerturbedDevice(dev, [perturb.make("popup_permission", profile_pool=["camera"], trigger_step=0,
                                                 on_app_launch=False)], seed=0)
        obs = env.reset(None)
        deny = find(obs, "Don’t allow")
        assert deny is not None and deny.resource_id == "com.android.permissioncontroller:id/permission_deny_button"
        assert find(obs, "Allow Simple Sms Messenger to take pictures and record video?")
        assert obs.screenshot.getpixel(deny.center) != dev.observe().screenshot.getpixel(deny.center)
        sent = len(phone.calls)
        act(env, "click", x=deny.center[0], y=deny.center[1])
        assert not [c for c in phone.calls[sent:] if c.startswith("input")]
        assert last(env, "overlay_dismissed")["details"]["label"] == "Don’t allow"
        sent = len(phone.calls)
        act(env, "click", x=100, y=300)
        assert [c for c in phone.calls[sent:] if c.startswith("input")] == ["input tap 100 300"]
        env.close()
    finally:
        adb_cleanup.unregister(id(dev))


def test_semantic_keyword_trigger():
    """D-GARA's trigger: fire when enough of the keywords are on screen."""
    env, _ = make_env("popup_permission", on_app_launch=False, trigger_step=None,
                      keywords=["Create contact", "Search contacts", "Send money"], match_threshold=0.6)
    assert not env.overlays.active  # the home screen does not match
    obs = open_contacts(env)
    assert env.overlays.active and last(env, "overlay_shown")["step"] == 1
    assert find(obs, "Don’t allow")


def test_profiles_build_and_describe_themselves():
    import json

    from tests.support.overlay_helpers import ALL

    for name in ALL:
        p = perturb.make(name)
        assert p.layer is None and (name in perturb.ANDROIDREALITY) != (name in perturb.EXTENSIONS)
        json.dumps(p.describe())
    assert perturb.make("app_hang_restart_required").timing.trigger_step == 2  # APP_HANG_TRIGGER_STEPS
    assert {perturb.REGISTRY[n].component for n in ALL} == {"transition", "action", "state"}
