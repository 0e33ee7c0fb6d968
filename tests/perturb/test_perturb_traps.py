"""Each AnTrap trap, forced, on the simulated phone: it has its visible effect, it is
logged precisely, and it leaves device settings (and, for the observation-only traps,
device state) as they were."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from benchmark import DeviceSettings, SimDevice
from benchmark.agents.reference import ReferenceAgent
from benchmark.tasks import TASKS
from perturb import PerturbedDevice, make
from perturb.traps import pixels
from perturb.traps.lexicon import launcher_packages
from ttir.core.types import Action, Observation

DELETE = TASKS["ContactsDeleteContact"].create(seed=1)
# reference steps: 0 open Contacts, 1 tap the contact, 2 tap the Delete icon, 3 tap "Delete" in the dialog
# observations:    0 home screen,   1 contact list,    2 contact details,   3 the confirmation dialog


def at(step: int, **overrides: Any) -> dict[str, Any]:
    """Overrides that force a trap at the first eligible step >= ``step``."""
    return {"trigger_step": step, "probability": None, **overrides}


@dataclass
class Run:
    env: PerturbedDevice
    shown: list[Observation]  # what the agent saw at each step
    raw: list[Observation]  # the device's own screen at each step
    actions: list[Action]  # what the agent issued


def run(trap: Any, steps: int, task: Any = DELETE, seed: int = 0) -> Run:
    """Reset, then let the reference agent take ``steps`` actions."""
    env = PerturbedDevice(SimDevice(), [trap], seed=seed)
    obs = env.reset(task)
    agent = ReferenceAgent(task.reference_solution())
    r = Run(env, [obs], [env.unwrapped.observe()], [])
    for _ in range(steps):
        a = agent.step(obs).action
        r.actions.append(a)
        env.execute(a)
        obs = env.observe()
        r.shown.append(obs)
        r.raw.append(env.unwrapped.observe())
    return r


def events(env: PerturbedDevice, name: str) -> list[dict[str, Any]]:
    return [e for e in env.event_log() if e["event"] == name]


def assert_settings_untouched(env: PerturbedDevice) -> None:
    assert env.settings == DeviceSettings()
    env.close()
    assert env.unwrapped.settings == DeviceSettings()


def contacts(env: PerturbedDevice) -> list[tuple[str, str]]:
    return [(c.name, c.phone) for c in env.unwrapped.app("Contacts").data.contacts]


def raw_screen(env: PerturbedDevice) -> Observation:
    return env.unwrapped.observe()


# -- S: state layer -----------------------------------------------------------------------


def test_visual_obscuration_blurs_a_clickable_element_on_a_copy():
    r = run(make("trap_visual_obscuration", **at(3, region="clickable")), 3)
    env, shown = r.env, r.shown
    obs, raw = shown[3], raw_screen(env)
    (fired,) = events(env, "trap_fired")
    (ev,) = events(env, "obscured")
    assert fired["step"] == ev["step"] == 3 and fired["details"]["layer"] == "S"
    region = ev["details"]["region"]
    target = next(e for e in raw.elements if list(e.bounds) == region)
    assert target.clickable or target.editable
    assert ev["details"]["element"]["resource_id"] == target.resource_id
    changed = pixels.changed_box(raw.screenshot, obs.screenshot)
    assert changed is not None and list(changed) == ev["details"]["changed_region"]
    assert region[0] <= changed[0] and region[1] <= changed[1] and changed[2] <= region[2] and changed[3] <= region[3]
    assert obs.xml == raw.xml  # the dump is untouched
    # the device's own frame is intact: a fresh render equals the raw screenshot
    assert pixels.digest(env.unwrapped.render()) == pixels.digest(raw.screenshot)
    env.execute(Action(action_type="wait", seconds=1))
    after = env.observe()
    assert pixels.same_pixels(after.screenshot, raw_screen(env).screenshot)  # one step only
    assert len(events(env, "obscured")) == 1
    assert_settings_untouched(env)


def test_visual_obscuration_solid_patch_over_a_10_to_30_percent_rectangle():
    trap = make("trap_visual_obscuration", **at(1, region="rectangle", color=(255, 0, 255)))
    r = run(trap, 1)
    env, shown = r.env, r.shown
    (ev,) = events(env, "obscured")
    x1, y1, x2, y2 = ev["details"]["region"]
    W, H = shown[1].screen_size
    assert 0.095 <= (x2 - x1) * (y2 - y1) / (W * H) <= 0.305
    patch = shown[1].screenshot.crop((x1, y1, x2, y2))
    assert patch.getcolors() == [((x2 - x1) * (y2 - y1), (255, 0, 255))]
    outside = pixels.changed_box(raw_screen(env).screenshot, shown[1].screenshot)
    assert outside == (x1, y1, x2, y2)
    assert ev["details"]["fill"] == {"kind": "solid", "color": [255, 0, 255]}


def test_visual_obscuration_any_element_is_not_a_whole_window():
    r = run(make("trap_visual_obscuration", **at(2, region="element")), 2)
    env, shown = r.env, r.shown
    (ev,) = events(env, "obscured")
    x1, y1, x2, y2 = ev["details"]["region"]
    W, H = shown[2].screen_size
    assert (x2 - x1) * (y2 - y1) <= 0.3 * W * H
    assert ev["details"]["element"] is not None


def test_external_interruption_delegates_to_a_transition_perturbation():
    trap = make("trap_external_interruption", **at(2, interruptions=["popup_permission"]))
    r = run(trap, 3)
    env = r.env
    (fired,) = events(env, "trap_fired")
    assert fired["step"] == 2 and fired["details"]["interruption"] == "popup_permission"
    assert fired["details"]["layer"] == "S"
    # the pop-up's own events are logged under the trap's name
    assert {e["perturbation"] for e in env.event_log()} == {"trap_external_interruption"}
    (shown_ev,) = events(env, "overlay_shown")
    assert shown_ev["step"] == 2
    # the agent sees it (pixels and nodes); the device underneath does not
    assert pixels.changed_box(r.raw[2].screenshot, r.shown[2].screenshot) is not None
    assert len(r.shown[2].elements) > len(r.raw[2].elements)
    assert r.shown[1].xml == r.raw[1].xml  # nothing before the trap step
    assert_settings_untouched(env)


def test_external_interruption_waits_for_an_app_and_overrides_on_app_launch():
    trap = make("trap_external_interruption", probability=1.0, interruptions=["popup_permission"])
    r = run(trap, 2)
    (fired,) = events(r.env, "trap_fired")
    assert fired["step"] == 1  # not on the home screen (step 0); at once when Contacts opened
    assert events(r.env, "overlay_shown")[0]["step"] == 1


def test_external_interruption_names_an_unknown_interruption():
    with pytest.raises(ValueError, match="interruptions.*no_such_popup.*popup_permission"):
        make("trap_external_interruption", interruptions=["no_such_popup"])


# -- T: thinking layer ----------------------------------------------------------------------


def test_temporal_conflict_serves_the_frame_from_three_steps_earlier():
    r = run(make("trap_temporal_conflict", **at(3)), 4)
    env, shown = r.env, r.shown
    stale, raw_then = shown[3], r.raw[3]
    assert pixels.digest(stale.screenshot) == pixels.digest(shown[0].screenshot)  # the home screen
    assert stale.xml == shown[0].xml and stale.step == 3
    assert raw_then.package == "com.google.android.contacts"  # the device was on the dialog
    assert any(e.text == "Delete contact?" for e in raw_then.elements)
    (ev,) = events(env, "frame_stale")
    assert ev["step"] == 3 and ev["details"]["served_step"] == 0 and ev["details"]["age_steps"] == 3
    assert ev["details"]["served_digest"] == pixels.digest(shown[0].screenshot)
    assert ev["details"]["true_digest"] == pixels.digest(raw_then.screenshot)
    # the next observation is true again; the history holds only true frames
    assert pixels.same_pixels(shown[4].screenshot, env.ctx.raw_history[-1].screenshot)
    assert all(h.screenshot is not stale.screenshot for h in env.ctx.raw_history[-3:])
    assert_settings_untouched(env)


def test_visual_hallucination_swaps_labels_in_pixels_and_xml():
    r = run(make("trap_visual_hallucination", **at(3)), 3)
    env, shown = r.env, r.shown
    obs, raw = shown[3], raw_screen(env)
    (ev,) = events(env, "labels_swapped")
    swaps = {s["resource_id"].split("/")[-1]: s for s in ev["details"]["swaps"]}
    assert swaps["button2"]["original"] == "Cancel" and swaps["button2"]["replacement"] == "Confirm"
    assert swaps["button1"]["original"] == "Delete" and swaps["button1"]["replacement"] == "Save"
    assert swaps["alertTitle"]["replacement"] == "Save contact?"
    name = swaps["large_title"]
    assert name["how"] == "permutation" and sorted(name["replacement"]) == sorted("Lena Nakamura")
    # the dump the agent gets says so …
    parsed = Observation.from_xml(obs.xml)
    assert [e.text for e in parsed.elements if e.resource_id == "android:id/button2"] == ["Confirm"]
    assert [e.text for e in obs.elements if e.resource_id == "android:id/button1"] == ["Save"]
    # … and so do the pixels: only the swapped labels' regions changed, redrawn in the contrast colour
    changed = pixels.changed_box(raw.screenshot, obs.screenshot)
    regions = [s["region"] for s in ev["details"]["swaps"]]
    assert changed is not None
    assert changed[0] >= min(r[0] for r in regions) and changed[2] <= max(r[2] for r in regions)
    for key in ("button1", "button2", "alertTitle"):
        s = swaps[key]
        crop = obs.screenshot.crop(tuple(s["region"]))
        counts = {c: n for n, c in crop.getcolors(maxcolors=1 << 20)}
        assert counts.get(tuple(s["color"]), 0) > 30, key
        assert pixels.changed_box(raw.screenshot.crop(tuple(s["region"])), crop) is not None
    # the device keeps the truth
    assert [e.text for e in raw.elements if e.resource_id == "android:id/button2"] == ["Cancel"]
    assert pixels.digest(env.unwrapped.render()) == pixels.digest(raw.screenshot)
    assert_settings_untouched(env)


def test_visual_hallucination_lasts_one_step():
    r = run(make("trap_visual_hallucination", **at(2)), 3)
    env, shown = r.env, r.shown
    assert len(events(env, "labels_swapped")) == 1
    assert shown[3].xml == raw_screen(env).xml


@pytest.mark.parametrize("name", ["trap_visual_obscuration", "trap_temporal_conflict", "trap_visual_hallucination"])
def test_observation_traps_leave_the_device_as_a_clean_run_does(name):
    """Same actions with and without the trap: the device's own frames and data match."""
    clean = run(make("trap_loop", trigger_step=99, probability=None), 4)  # a trap that never fires
    trapped = PerturbedDevice(SimDevice(), [make(name, **at(3))], seed=0)
    trapped.reset(DELETE)
    for a in clean.actions:
        trapped.execute(a)
        trapped.observe()
    assert events(trapped, "trap_fired")
    assert pixels.digest(raw_screen(trapped).screenshot) == pixels.digest(clean.raw[-1].screenshot)
    assert raw_screen(trapped).xml == clean.raw[-1].xml
    assert contacts(trapped) == contacts(clean.env)
    assert_settings_untouched(trapped)


# -- A: action layer ------------------------------------------------------------------------


def test_grounding_error_offsets_a_tap_by_20_to_50_px():
    r = run(make("trap_grounding_error", probability=1.0), 2)
    env, actions = r.env, r.actions
    (ev,) = events(env, "offset")
    d = ev["details"]
    assert ev["step"] == 1  # the first touch action (step 0 opened the app)
    assert d["original"] == actions[1].to_dict() and d["point"] == [actions[1].x, actions[1].y]
    assert 20 <= abs(d["dx"]) <= 50 and 20 <= abs(d["dy"]) <= 50
    assert d["altered"] == {"action_type": "click", "x": actions[1].x + d["dx"], "y": actions[1].y + d["dy"]}
    assert len(events(env, "trap_fired")) == 1  # once per episode
    assert_settings_untouched(env)


def test_grounding_error_moves_only_the_start_of_a_swipe():
    env = PerturbedDevice(SimDevice(), [make("trap_grounding_error", probability=1.0)], seed=4)
    env.reset(DELETE)
    swipe = Action(action_type="swipe", x=540, y=1500, x2=540, y2=700, duration_ms=300)
    env.execute(swipe)
    done = env.ctx.action
    (ev,) = events(env, "offset")
    assert (done.x, done.y) == (540 + ev["details"]["dx"], 1500 + ev["details"]["dy"])
    assert (done.x2, done.y2, done.duration_ms) == (540, 700, 300)


def test_type_mismatch_remaps_touch_types_and_reverses_swipes():
    r = run(make("trap_type_mismatch", probability=1.0), 2)
    env, actions = r.env, r.actions
    (ev,) = events(env, "remapped")
    assert ev["details"]["original"] == actions[1].to_dict()
    assert ev["details"]["altered_type"] in ("long_press", "double_tap")
    assert env.event_log()[0]["event"] == "trap_fired"
    env2 = PerturbedDevice(SimDevice(), [make("trap_type_mismatch", probability=1.0)], seed=0)
    env2.reset(DELETE)
    env2.execute(Action(action_type="swipe", x=540, y=1500, x2=540, y2=700))
    assert env2.ctx.action.to_dict() == {"action_type": "swipe", "x": 540, "y": 700, "x2": 540, "y2": 1500}
    assert events(env2, "remapped")[0]["details"]["altered"] == env2.ctx.action.to_dict()


def test_type_mismatch_double_tap_cancels_a_switch_toggle():
    """Tapping the Wi-Fi switch is remapped; a double tap toggles it twice (no effect)."""
    task = TASKS["SystemWifiTurnOn"].create(seed=0)
    seen = set()
    for seed in range(8):
        env = run(make("trap_type_mismatch", **at(2)), 3, task=task, seed=seed).env
        (ev,) = events(env, "remapped")
        kind = ev["details"]["altered_type"]
        seen.add(kind)
        assert task.verify(env.unwrapped) is (kind != "double_tap")
    assert seen == {"long_press", "double_tap"}


def test_intent_deviation_taps_cancel_instead_of_delete():
    r = run(make("trap_intent_deviation", **at(3)), 4)
    env, shown, actions = r.env, r.shown, r.actions
    (ev,) = events(env, "replaced")
    d = ev["details"]
    assert d["kind"] == "retarget" and d["original"] == actions[3].to_dict()
    assert d["from_element"]["resource_id"] == "android:id/button1"
    assert d["to_element"]["resource_id"] == "android:id/button2"
    assert (DELETE.params["name"], DELETE.params["number"]) in contacts(env)
    assert not DELETE.verify(env.unwrapped)  # the contact survived: Cancel was tapped
    assert not any(e.text == "Delete contact?" for e in shown[4].elements)  # the dialog closed
    assert_settings_untouched(env)


def test_intent_deviation_replaces_typed_text():
    task = TASKS["ContactsAddContact"].create(seed=2)
    r = run(make("trap_intent_deviation", **at(2)), 3, task=task)
    env, shown, actions = r.env, r.shown, r.actions
    (ev,) = events(env, "replaced")
    d = ev["details"]
    assert d["kind"] == "retext" and d["original_text"] == task.params["first"] == actions[2].text
    field = next(e for e in shown[3].elements if e.short_id == "first_name")
    assert field.text == d["altered_text"] != task.params["first"]


# -- R: round layer -------------------------------------------------------------------------


def test_state_deadlock_drops_k_actions_and_freezes_the_screen():
    r = run(make("trap_state_deadlock", **at(1, k=3)), 5)
    env, shown, actions = r.env, r.shown, r.actions
    (fired,) = events(env, "trap_fired")
    assert fired["details"]["k"] == 3 and fired["step"] == 1
    steps = events(env, "deadlock_step")
    assert [e["step"] for e in steps] == [1, 2, 3] and all(e["details"]["dropped"] for e in steps)
    assert [e["details"]["action"] for e in events(env, "dropped")] == [a.to_dict() for a in actions[1:4]]
    frozen = pixels.digest(shown[1].screenshot)
    assert [pixels.digest(o.screenshot) for o in shown[2:5]] == [frozen] * 3
    assert all(o.xml == shown[1].xml for o in shown[2:5])
    assert events(env, "deadlock_released")[0]["step"] == 4
    # the device never saw the dropped actions; the fifth action went through
    assert env.unwrapped.actions == 2
    assert contacts(env) == [(c.name, c.phone) for c in _fresh_contacts()]
    assert_settings_untouched(env)


def _fresh_contacts() -> list[Any]:
    d = SimDevice()
    d.reset(DELETE)
    return d.app("Contacts").data.contacts


def test_state_deadlock_length_is_uniform_in_1_to_a_quarter_of_the_budget():
    ks = set()
    for seed in range(12):
        env = PerturbedDevice(SimDevice(), [make("trap_state_deadlock", probability=1.0)], seed=seed, budget=40)
        env.reset(DELETE)
        env.execute(Action(action_type="wait", seconds=0))
        k = events(env, "trap_fired")[0]["details"]["k"]
        assert 1 <= k <= 10
        ks.add(k)
    assert len(ks) >= 4


def test_state_deadlock_wait_counts_but_is_not_dropped():
    env = PerturbedDevice(SimDevice(), [make("trap_state_deadlock", **at(0, k=2))], seed=0)
    env.reset(DELETE)
    env.execute(Action(action_type="wait", seconds=1))
    env.execute(Action(action_type="open_app", app_name="Contacts"))
    env.execute(Action(action_type="open_app", app_name="Contacts"))
    assert [e["details"]["dropped"] for e in events(env, "deadlock_step")] == [False, True]
    assert env.observe().package == "com.google.android.contacts"


@pytest.mark.parametrize("key,expected", [("home", "KEYCODE_HOME"), ("app_switch", "KEYCODE_APP_SWITCH")])
def test_context_disruption_leaves_the_app_and_it_resumes(key, expected):
    r = run(make("trap_context_disruption", **at(2, keyevents=[key])), 2)
    env, shown = r.env, r.shown
    (ev,) = events(env, "context_disrupted")
    assert ev["step"] == 2 and ev["details"]["keyevent"] == expected
    assert ev["details"]["foreground_before"].startswith("com.google.android.contacts/")
    assert shown[2].package in launcher_packages()  # the agent's next screen is not the app
    if key == "app_switch":
        assert env.unwrapped.overlay == "recents"
    env.execute(Action(action_type="open_app", app_name="Contacts"))
    back = env.observe()
    assert any(e.text == DELETE.params["name"] and e.short_id == "large_title" for e in back.elements)
    assert contacts(env) == [(c.name, c.phone) for c in _fresh_contacts()]
    assert_settings_untouched(env)


def test_context_disruption_waits_for_an_app_on_screen():
    env = PerturbedDevice(SimDevice(), [make("trap_context_disruption", probability=1.0)], seed=0)
    env.reset(DELETE)  # home screen: HOME would do nothing, so no trap yet
    assert not events(env, "trap_fired")
    env.execute(Action(action_type="open_app", app_name="Contacts"))
    assert events(env, "trap_fired")[0]["step"] == 1


def test_loop_presses_back_every_two_steps_until_its_budget_is_spent():
    task = TASKS["ContactsEditNumber"].create(seed=0)
    env = PerturbedDevice(SimDevice(), [make("trap_loop", **at(3, every_steps=2, backs=3))], seed=0)
    obs = env.reset(task)
    agent = ReferenceAgent(task.reference_solution())
    for _ in range(3):  # open Contacts, tap the contact, tap Edit
        env.execute(agent.step(obs).action)
        obs = env.observe()
    assert obs.package == "com.google.android.contacts"
    for _ in range(6):
        env.execute(Action(action_type="wait", seconds=1))
        env.observe()
    backs = events(env, "loop_back")
    assert [e["step"] for e in backs] == [3, 5, 7]
    assert [e["details"]["index"] for e in backs] == [1, 2, 3]
    assert all(e["details"]["keyevent"] == "KEYCODE_BACK" for e in backs)
    # editor → details → list: the agent is walked back the way it came
    acts = [e["details"]["foreground_after"].split("/")[-1].rsplit(".", 1)[-1] for e in backs]
    assert acts[:2] == ["QuickContactActivity", "PeopleActivity"]
    assert events(env, "loop_ended")[0]["step"] == 7
    assert_settings_untouched(env)


def test_hallucinated_labels_with_line_breaks_are_measured_and_drawn_line_by_line():
    from PIL import Image

    img = Image.new("RGB", (600, 300), (250, 250, 250))
    text = "Return the library books before they are overdue.\nCompare prices for the new washing machine online."
    assert pixels._text_width(text, 40) == max(pixels._text_width(l, 40) for l in text.split("\n"))
    assert pixels.wrap(text, 20, 580)[0].startswith("Return")
    assert len(pixels.wrap(text, 20, 10_000)) == 2  # the note's own line break is kept
    region = pixels.draw_label(img, (0, 0, 600, 300), (10, 20, 590, 120), text, text, (250, 250, 250))
    assert region[2] > region[0] and region[3] > region[1]
    assert img.getcolors(1_000_000) is not None and len(img.getcolors(1_000_000)) > 1  # ink was drawn
