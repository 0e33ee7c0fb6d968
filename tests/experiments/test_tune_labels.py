"""Label derivation (experiments/tune/labels.py): every rule on hand-made truth
records, and the harness's hit test / target parsing (experiments/tune/truth.py)."""

from __future__ import annotations

from typing import Any, Optional

import pytest

from experiments.tune.labels import alignment, effect_of, interference_present, label_episode, problem_label, repeat_failure
from experiments.tune.truth import describe_layer, hit_test, named_targets, screen_key
from ttir.core.types import Observation, UIElement

APP = "com.example.notes"
TAP = {"action_type": "click", "x": 100, "y": 200}


def truth(key: str = "A", **kw: Any) -> dict[str, Any]:
    t = {"raw_foreground": APP, "in_task_apps": True, "launcher": False, "shade": False, "recents": False,
         "installed_app": True, "overlays": [], "frame_of": None, "screen_key": key, "action_fate": [],
         "target": None, "issued_point": [100, 200]}
    t.update(kw)
    return t


def step(i: int, action: Optional[dict[str, Any]] = None, summary: str = "", **kw: Any) -> dict[str, Any]:
    return {"index": i, "agent_step": {"action": action or TAP, "thought": "", "summary": summary},
            "perturbation_events": [], "truth": truth(**kw)}


DIALOG = {"source": "popup_permission", "kind": "popup_permission", "type": "interruption", "engaged": False}
SPINNER = {"source": "execution_delay_loading", "kind": "loading", "type": "transient", "engaged": False}


# --------------------------------------------------------------------- interference


def test_interference_counts_interruptions_not_transient_states() -> None:
    assert interference_present(step(0, overlays=[DIALOG])) is True
    assert interference_present(step(0, overlays=[SPINNER])) is False
    assert interference_present(step(0)) is False
    assert interference_present({"index": 0, "agent_step": {"action": TAP}, "truth": {"truth_error": "x"}}) is None


def test_hang_layer_is_an_interruption_only_while_its_dialog_is_up() -> None:
    class Dialog:
        kind, style, window_package, page_id, version, flow, index, blocking = "anr", "anr", "android", "main:1", 0, None, 0, True

    class Hang:
        kind, source = "app_hang", "app_hang_restart_required"
        dialog_up, dialog = True, Dialog()

    up = describe_layer(Hang())
    assert up["type"] == "interruption" and up["kind"] == "app_hang"
    waiting = Hang()
    waiting.dialog_up = False
    assert describe_layer(waiting)["type"] == "transient"


# --------------------------------------------------------------------- action effect


@pytest.mark.parametrize("fate,label", [
    (["dropped"], "no"), (["delayed"], "no"), (["blocked"], "no"), (["remapped"], "no"),
    (["replaced"], "no"), (["error"], "no"), (["after_delayed"], None),
])
def test_effect_from_the_action_fate(fate: list[str], label: Optional[str]) -> None:
    assert effect_of(step(0, action_fate=fate), step(1, key="B"))[0] == label


def test_effect_of_wait_is_always_satisfied() -> None:
    prev = step(0, action={"action_type": "wait", "seconds": 1.0}, action_fate=["blocked"])
    assert effect_of(prev, step(1))[0] == "yes"


def test_effect_on_a_stale_frame_is_not_satisfied() -> None:
    frozen = {"source": "execution_delay_frozen", "kind": "frozen", "type": "transient", "engaged": False}
    assert effect_of(step(0), step(1, key="B", frame_of=0, overlays=[frozen])) == ("no", "stale_frame")
    deadlocked = dict(step(0), perturbation_events=[{"step": 0, "event": "deadlock_step"}])
    assert effect_of(deadlocked, step(1, key="B", frame_of=0)) == ("no", "stale_frame")
    # an unchanged screen returned again is not an old frame
    assert effect_of(step(0), step(1, key="B", frame_of=0)) == ("yes", "executed")


def test_offset_counts_only_when_it_left_the_target() -> None:
    hit = {"named": "save", "found": True, "hit": True}
    miss = {"named": "save", "found": True, "hit": False}
    assert effect_of(step(0, action_fate=["offset"], target=hit), step(1, key="B")) == ("yes", "offset_still_hit")
    assert effect_of(step(0, action_fate=["offset"], target=miss), step(1, key="B")) == ("no", "offset")


def test_named_target_absent_missed_or_hit() -> None:
    assert effect_of(step(0, target={"named": "save", "found": False, "hit": None}), step(1, key="B"))[0] == "no"
    assert effect_of(step(0, target={"named": "save", "found": True, "hit": False}), step(1, key="B")) == \
        ("no", "missed_target")
    assert effect_of(step(0, target={"named": "save", "found": True, "hit": True}), step(1, key="B")) == \
        ("yes", "hit_target")
    # executed on its target but nothing changed on the device: ambiguous, not scored
    assert effect_of(step(0, target={"named": "save", "found": True, "hit": True}), step(1, key="A")) == \
        (None, "hit_no_change")
    assert effect_of(step(0), step(1, key="B")) == ("yes", "executed")
    assert effect_of(step(0), step(1, key="A")) == (None, "executed_no_change")


# ------------------------------------------------------------------------ stuck loop


def test_three_identical_attempts_on_an_unchanged_screen_are_a_loop() -> None:
    steps = [step(i) for i in range(4)]
    assert repeat_failure(steps, 2)[0] is False  # two attempts
    assert repeat_failure(steps, 3) == (True, "repeat_unchanged_screen")


def test_repeats_that_change_the_screen_are_not_a_loop() -> None:
    steps = [step(i, key=k) for i, k in enumerate("ABCD")]
    assert repeat_failure(steps, 3)[0] is False


def test_waiting_is_a_loop_only_on_a_screen_that_is_not_loading() -> None:
    wait = {"action_type": "wait", "seconds": 1.0}
    assert repeat_failure([step(i, action=wait) for i in range(5)], 4)[0] is True  # a stall
    loading = [step(i, action=wait, overlays=[SPINNER]) for i in range(5)]
    assert repeat_failure(loading, 4)[0] is False


def test_coordinates_within_tolerance_are_the_same_action() -> None:
    steps = [step(i, issued_point=[100 + 10 * i, 200]) for i in range(4)]
    assert repeat_failure(steps, 3)[0] is True
    far = [step(i, issued_point=[100 + 60 * i, 200]) for i in range(4)]
    assert repeat_failure(far, 3)[0] is False


def swipe(i: int, y2: int) -> dict[str, Any]:
    return step(i, {"action_type": "swipe", "x": 100, "y": 200, "x2": 100, "y2": y2})


def test_swipes_from_one_point_the_same_way_are_the_same_action_whatever_their_length() -> None:
    assert repeat_failure([swipe(i, 900 + 150 * i) for i in range(4)], 3)[0] is True  # "swipe farther"
    assert repeat_failure([swipe(i, 900 if i % 2 else 20) for i in range(4)], 3)[0] is False  # down, up, down


def test_oscillation_a_b_a_b() -> None:
    back = {"action_type": "navigate_back"}
    steps = [step(0, key="A"), step(1, back, key="B"), step(2, key="A"), step(3, back, key="B")]
    assert repeat_failure(steps, 3) == (True, "oscillation")


# -------------------------------------------------------------------- task alignment


def test_completion_claim_follows_the_verifier() -> None:
    claim = step(0, {"action_type": "status", "goal_status": "complete"})
    assert alignment([claim], 0, {}, True, None)[0] == "on_track"
    assert alignment([claim], 0, {}, False, None)[0] == "off_track"


def test_alignment_by_where_the_agent_really_is() -> None:
    home = {"in_task_apps": False, "launcher": True, "installed_app": False, "raw_foreground": "launcher"}
    steps = [step(0, **home), step(1), step(2, **home)]
    assert alignment(steps, 0, {}, None, None) == ("on_track", "home_before_start")
    assert alignment(steps, 1, {}, None, "on_track") == ("on_track", "task_app")
    assert alignment(steps, 2, {}, None, "on_track") == ("off_track", "home_after_start")
    other = [step(0), step(1, in_task_apps=False, installed_app=True, raw_foreground="com.android.vending")]
    assert alignment(other, 1, {}, None, "on_track") == ("off_track", "unrelated_app")
    system = [step(0), step(1, in_task_apps=False, installed_app=False, raw_foreground="android")]
    assert alignment(system, 1, {}, None, "on_track") == ("on_track", "system_window_inherits")


def test_shade_and_interruption_flows() -> None:
    shade = [step(0, shade=True, in_task_apps=False, launcher=True)]
    assert alignment(shade, 0, {"plan_uses_shade": True}, None, None)[0] == "on_track"
    assert alignment(shade, 0, {"plan_uses_shade": False}, None, None)[0] == "off_track"
    wizard = [step(0, overlays=[dict(DIALOG, engaged=True)])]
    assert alignment(wizard, 0, {}, None, None) == ("off_track", "inside_interruption_flow")


def test_label_episode_and_problem_labels() -> None:
    traj = {"success": False, "task_info": {"apps": [APP]},
            "trajectory": [step(0, overlays=[DIALOG]), step(1, action_fate=["dropped"], key="A"), step(2, key="A")]}
    rows = label_episode(traj)
    assert [r[0]["interference_present"] for r in rows] == [True, False, False]
    assert rows[0][0]["previous_intended_effect_satisfied"] is None
    assert rows[2][0]["previous_intended_effect_satisfied"] == "no"
    assert problem_label("action_effect", rows[2][0]) is True
    assert problem_label("interference", rows[0][0]) is True
    assert problem_label("task_alignment", {"task_alignment": None}) is None
    with pytest.raises(ValueError, match="diagnoser='nope'"):
        problem_label("nope", {})


# ------------------------------------------------------------------------- hit test


def _el(i: int, bounds: tuple[int, int, int, int], parent: Optional[int] = None, **kw: Any) -> UIElement:
    return UIElement(bounds=bounds, parent=parent, package=APP, class_name="android.widget.TextView", **kw)


def test_named_targets_from_summaries() -> None:
    assert named_targets('Tap "Save"', "click") == ["Save"]
    assert named_targets('Type "Ann" into "first_name"', "input_text") == ["first_name"]
    assert named_targets("Scroll down", "click") == []


def test_hit_test_uses_the_control_that_receives_the_touch() -> None:
    els = [
        _el(0, (0, 0, 1080, 2400)),
        _el(1, (0, 300, 1080, 500), parent=0, clickable=True),  # a row
        _el(2, (40, 350, 400, 450), parent=1, text="Download"),  # its label
        _el(3, (0, 600, 1080, 800), parent=0, clickable=True),
        _el(4, (40, 650, 400, 750), parent=3, text="Alarms"),
    ]
    on_row = hit_test(els, {"action_type": "click", "x": 900, "y": 400}, 'Tap "Download"', "click")
    assert on_row["found"] and on_row["hit"] is True
    other = hit_test(els, {"action_type": "click", "x": 900, "y": 700}, 'Tap "Download"', "click")
    assert other["found"] and other["hit"] is False
    absent = hit_test(els, {"action_type": "click", "x": 900, "y": 700}, 'Tap "Settings"', "click")
    assert absent == {"named": "settings", "found": False, "hit": None}
    assert hit_test(els, None, 'Tap "Download"', "click")["hit"] is None  # never executed


def test_an_overlay_on_top_takes_the_touch() -> None:
    els = [
        _el(0, (0, 0, 1080, 2400)),
        _el(1, (0, 300, 1080, 500), parent=0, clickable=True, text="Save"),
        _el(2, (0, 250, 1080, 600), clickable=True, text="Got it"),  # a banner drawn later = on top
    ]
    r = hit_test(els, {"action_type": "click", "x": 500, "y": 400}, 'Tap "Save"', "click")
    assert r["found"] and r["hit"] is False


def test_typing_without_a_point_goes_to_the_focused_field() -> None:
    els = [_el(0, (0, 0, 1080, 2400)),
           _el(1, (0, 300, 1080, 400), parent=0, editable=True, focused=True, resource_id=f"{APP}:id/title"),
           _el(2, (0, 500, 1080, 600), parent=0, editable=True, resource_id=f"{APP}:id/body")]
    typed = {"action_type": "input_text", "text": "hi"}
    assert hit_test(els, typed, 'Type "hi" into "title"', "input_text")["hit"] is True
    assert hit_test(els, typed, 'Type "hi" into "body"', "input_text")["hit"] is False


def test_screen_key_ignores_the_clock_and_sees_overlays() -> None:
    def screen(clock: str, text: str) -> Observation:
        return Observation(elements=[
            UIElement(bounds=(0, 0, 1080, 74), package="com.android.systemui", resource_id="com.android.systemui:id/status_bar"),
            UIElement(bounds=(10, 10, 80, 60), parent=0, package="com.android.systemui", text=clock,
                      resource_id="com.android.systemui:id/clock"),
            UIElement(bounds=(0, 100, 1080, 300), package=APP, text=text)], foreground=APP)
    assert screen_key(screen("3:34", "Notes"), []) == screen_key(screen("3:35", "Notes"), [])
    assert screen_key(screen("3:34", "Notes"), []) != screen_key(screen("3:34", "Other"), [])
    assert screen_key(screen("3:34", "Notes"), []) != screen_key(screen("3:34", "Notes"), [DIALOG])


def test_overlay_changes_the_action_did_not_cause_are_no_progress() -> None:
    # a banner timed out between the 2nd and 3rd attempt: the screen key changed, the app did not
    steps = [step(0, key="A", raw_key="R"), step(1, key="A", raw_key="R"), step(2, key="B", raw_key="R"),
             step(3, key="B", raw_key="R")]
    assert repeat_failure(steps, 3)[0] is True
    # the same, but the action went to the overlay (paging a wizard): progress
    paging = [step(i, key=k, raw_key="R", action_fate=["to_overlay"]) for i, k in enumerate("ABCD")]
    assert repeat_failure(paging, 3)[0] is False
    assert effect_of(step(0, key="A", raw_key="R"), step(1, key="B", raw_key="R")) == (None, "executed_no_change")
