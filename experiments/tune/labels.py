"""The four diagnoser labels, derived from the per-step ground truth
(:mod:`experiments.tune.truth`) of a recorded episode. Step ``t`` is a decision:
the observation the agent decided on, with steps ``0..t-1`` as its history.

``interference_present`` (bool)
    True when an injected *interruption* is on the screen the agent sees at ``t``:
    any overlay layer of type ``interruption`` (dialog, bottom sheet, full-screen
    ad or wizard page, heads-up banner, "isn't responding" dialog). Transient
    screen states (loading spinner, skeleton, frozen frame) are not interference:
    the right response to them is to wait, which is the action-effect question.
    On an old frame served again, the overlays of that frame count.

``previous_intended_effect_satisfied`` ("yes" / "no"; None = no label)
    About the action of step ``t-1``. None at ``t = 0`` and when an earlier delayed
    action landed just before it (the screen it was executed on is not the one it
    was decided on: ambiguous). Otherwise, in this order:
    1. ``wait`` / ``answer`` / ``status``: "yes" (nothing visible was intended);
    2. its fate has ``dropped``, ``delayed``, ``blocked``, ``remapped``,
       ``replaced`` or ``error``: "no";
    3. the screen at ``t`` is an old frame served again (a frozen display, a
       deadlocked phone): "no" — whatever the action did cannot be on it;
    4. ``offset``: "no", unless the hit test shows the shifted touch still landed on
       the control the summary names (then "yes": nothing on screen differs from
       a clean tap, and the effect did happen);
    5. a touch or typing whose summary names a target in quotes: "no" when that
       target was not on the screen, or the executed point hit another control
       (a stale coordinate, a tap that went to an overlay's button instead);
       "yes" when it hit;
    6. otherwise "yes" (executed as issued).
    Exception to 5 and 6: when the action was executed as issued but nothing it
    did shows (screen key at ``t`` = at ``t-1``, or only overlays changed that the
    action did not touch), the label is None
    (reasons ``hit_no_change`` / ``executed_no_change``): a control that does
    nothing there (the simulator's Settings search icon, the overview button on
    the overview) and an effect that was already in place (a selected tab, a
    slider already at 100 %) look the same to the harness, and "executed" does
    not mean "the intended effect happened". ``ttir tune eval`` reports how many
    steps this leaves unscored.

``repeat_failure_detected`` (bool)
    True when the agent is repeating an attempt that does not work. With ``K_j``
    the screen key at decision ``j`` (raw tree + overlay state) and ``A_j`` the
    agent's action at ``j`` (type, point within 24 px, text, direction — a swipe's by
    its dominant axis, whatever its length — app;
    ``status`` / ``answer`` never count, nor a ``wait`` while a transient screen
    — loading, frozen, skeleton, a hung app — is up: waiting it out is right):
    - *streak*: the last ``LOOP_REPEATS`` (3, the paper's N in §5.1) actions are the
      same action on the same screen, and none of them had an effect (``K_{j+1} =
      K_j``, or only overlays changed and the action did not touch one — a banner
      timing out is not the agent's progress) — the hard loop of Figure 9;
    - *oscillation*: ``K_{t-3} = K_{t-1} != K_{t-2} = K_t`` with
      ``A_{t-3} = A_{t-1}``: the agent went A -> B -> A -> B (App. D.1).

``task_alignment`` ("on_track" / "off_track"; None = no label)
    - a ``status: complete`` claim at ``t``: "on_track" when the episode really
      succeeded (the verifier), else "off_track" (Figure 12: "done" off the task);
    - the agent has engaged into an interruption's flow (a wizard page after its
      "Continue"): "off_track";
    - the notification shade is down: "on_track" when the task's reference plan
      uses the shade, else "off_track";
    - the real foreground is one of the task's apps: "on_track";
    - the launcher (home, recents): "on_track" until the task's flow has started
      (a task app or the plan's shade was reached), then "off_track";
    - an installed app that is not the task's: "off_track";
    - any other window (a system chooser, an unknown package): the label of the
      step before (None at ``t = 0``).

A step whose truth could not be recorded gets None for every label it needs.
"""

from __future__ import annotations

from typing import Any, Optional

from ttir.core.types import ENDING_TYPES, INERT_TYPES, swipe_direction

LOOP_REPEATS = 3
SAME_POINT_PX = 24
FAILED_FATES = ("dropped", "delayed", "blocked", "remapped", "replaced", "error")
LABEL_KEYS = ("interference_present", "previous_intended_effect_satisfied", "repeat_failure_detected",
              "task_alignment")


def _truth(step: dict[str, Any]) -> Optional[dict[str, Any]]:
    t = step.get("truth")
    if not isinstance(t, dict) or "truth_error" in t and "screen_key" not in t:
        return None
    return t


def no_effect(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Nothing the action did shows between two truth records: the screen key is the
    same, or only overlays changed and the action did not go to one (a banner that
    timed out, a pop-up that appeared on its own)."""
    if before.get("screen_key") == after.get("screen_key"):
        return True
    raw_same = before.get("raw_key") is not None and before.get("raw_key") == after.get("raw_key")
    return raw_same and "to_overlay" not in before.get("action_fate", [])


def stale_frame(prev: dict[str, Any], now: dict[str, Any]) -> bool:
    """The agent is shown an old frame: a frozen display, or a deadlocked phone.
    (Truth recorded before version 3 also set ``frame_of`` when the device simply
    returned its unchanged screen again; those are told apart by the frozen layer
    or the deadlock's events.)"""
    if now.get("frame_of") is None:
        return False
    if any(o.get("kind") == "frozen" for o in now.get("overlays", [])):
        return True
    return any(e.get("event") == "deadlock_step" for e in prev.get("perturbation_events", []))


def _action(step: dict[str, Any]) -> dict[str, Any]:
    return (step.get("agent_step") or {}).get("action") or {}


# ----------------------------------------------------------------- interference


def interference_present(step: dict[str, Any]) -> Optional[bool]:
    t = _truth(step)
    if t is None:
        return None
    return any(o.get("type") == "interruption" for o in t.get("overlays", []))


# ------------------------------------------------------------------- action effect


def effect_of(prev: dict[str, Any], cur: Optional[dict[str, Any]] = None) -> tuple[Optional[str], str]:
    """(label, reason) for the action taken at step ``prev``; ``cur`` is the step
    whose observation shows its outcome (for the reasons only, and the stale-frame rule)."""
    t = _truth(prev)
    a = _action(prev)
    kind = a.get("action_type")
    if t is None or not kind:
        return None, "no_truth"
    if kind in INERT_TYPES:
        return "yes", "no_visible_effect_intended"
    fate = set(t.get("action_fate", []))
    if "after_delayed" in fate:
        return None, "after_delayed_action"
    failed = sorted(fate & set(FAILED_FATES))
    if failed:
        return "no", failed[0]
    now = _truth(cur) if cur is not None else None
    if now is not None and stale_frame(prev, now):
        return "no", "stale_frame"  # the screen shown is an old frame: no outcome can be on it
    target = t.get("target")
    unchanged = now is not None and no_effect(t, now)
    if "offset" in fate:
        if target and target.get("hit"):
            return "yes", "offset_still_hit"
        return "no", "offset"
    if target:
        if not target.get("found"):
            return "no", "target_absent"
        if target.get("hit") is False:
            return "no", "missed_target"
        if target.get("hit"):
            # executed on its target, but the device showed no change at all: a control
            # that does nothing here, or an effect that was already in place — the
            # harness cannot tell which, so the step is not scored
            return (None, "hit_no_change") if unchanged else ("yes", "hit_target")
    return (None, "executed_no_change") if unchanged else ("yes", "executed")


# ---------------------------------------------------------------------- stuck loop


def _swipe_way(a: dict[str, Any]) -> Optional[str]:
    return swipe_direction(*(a.get(k) for k in ("x", "y", "x2", "y2")))


def _same_action(a: dict[str, Any], pa: Optional[list[int]], b: dict[str, Any], pb: Optional[list[int]]) -> bool:
    if not a or not b or a.get("action_type") != b.get("action_type"):
        return False
    if a.get("action_type") in ENDING_TYPES:
        return False
    for k in ("text", "direction", "app_name"):
        if a.get(k) != b.get(k):
            return False
    if a.get("action_type") == "swipe" and _swipe_way(a) != _swipe_way(b):
        return False
    if pa is None or pb is None:
        return pa is None and pb is None and a.get("index") == b.get("index")
    return abs(pa[0] - pb[0]) <= SAME_POINT_PX and abs(pa[1] - pb[1]) <= SAME_POINT_PX


def repeat_failure(steps: list[dict[str, Any]], t: int) -> tuple[Optional[bool], str]:
    """(label, reason) at decision ``t`` of ``steps``."""
    if t == 0:
        return False, "first_step"
    truths = [_truth(s) for s in steps[: t + 1]]
    if any(x is None for x in truths[max(0, t - 4): t + 1]):
        return None, "no_truth"
    keys = [x["screen_key"] if x else None for x in truths]
    acts = [_action(s) for s in steps[:t]]
    pts = [(x or {}).get("issued_point") for x in truths[:t]]
    last = t - 1
    streak = 0
    for j in range(last, -1, -1):
        if not _same_action(acts[j], pts[j], acts[last], pts[last]):
            break
        if acts[j].get("action_type") == "wait" and any(o.get("type") == "transient" for o in truths[j].get("overlays", [])):
            break  # waiting out a loading / frozen screen is the right thing to do
        same_place = keys[j] == keys[last] or (truths[j].get("raw_key") is not None
                                                and truths[j].get("raw_key") == truths[last].get("raw_key"))
        if not same_place or truths[j + 1] is None or not no_effect(truths[j], truths[j + 1]):
            break
        streak += 1
    if streak >= LOOP_REPEATS:
        return True, "repeat_unchanged_screen"
    if t >= 3 and keys[t - 3] == keys[t - 1] and keys[t - 2] == keys[t] and keys[t - 1] != keys[t] \
            and acts[t - 1].get("action_type") != "wait" \
            and _same_action(acts[t - 3], pts[t - 3], acts[t - 1], pts[t - 1]):
        return True, "oscillation"
    return False, "repeat_below_threshold" if streak else "no_repeat"


# ------------------------------------------------------------------ task alignment


def alignment(steps: list[dict[str, Any]], t: int, info: dict[str, Any], success: Optional[bool],
              previous: Optional[str]) -> tuple[Optional[str], str]:
    """(label, reason) at decision ``t``; ``previous`` is the label of ``t-1``."""
    a = _action(steps[t])
    if a.get("action_type") == "status" and a.get("goal_status") == "complete":
        if success is None:
            return None, "claim_unverified"
        return ("on_track", "claim_true") if success else ("off_track", "claim_false")
    truth = _truth(steps[t])
    if truth is None:
        return None, "no_truth"
    if any(o.get("type") == "interruption" and o.get("engaged") for o in truth.get("overlays", [])):
        return "off_track", "inside_interruption_flow"
    uses_shade = bool(info.get("plan_uses_shade"))
    if truth.get("shade"):
        return ("on_track", "shade_in_plan") if uses_shade else ("off_track", "shade_not_in_plan")
    if truth.get("in_task_apps"):
        return "on_track", "task_app"
    if truth.get("launcher") or truth.get("recents"):
        started = any((_truth(s) or {}).get("in_task_apps") or (uses_shade and (_truth(s) or {}).get("shade"))
                      for s in steps[:t])
        return ("off_track", "home_after_start") if started else ("on_track", "home_before_start")
    if truth.get("installed_app"):
        return "off_track", "unrelated_app"
    if previous is None:
        return None, "system_window_at_start"
    return previous, "system_window_inherits"


# --------------------------------------------------------------------------- all


def label_episode(trajectory: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """``(labels, reasons)`` for every decision step of a recorded trajectory (the
    dict in ``trajectory.json``), in order."""
    steps = [s for s in trajectory.get("trajectory", []) if s.get("agent_step")]
    info = trajectory.get("task_info") or {}
    success = trajectory.get("verified", trajectory.get("success"))  # the verifier, not the done-gated score
    out: list[tuple[dict[str, Any], dict[str, str]]] = []
    prev_align: Optional[str] = None
    for t, step in enumerate(steps):
        labels: dict[str, Any] = {}
        reasons: dict[str, str] = {}
        ip = interference_present(step)
        labels["interference_present"] = ip
        reasons["interference_present"] = "no_truth" if ip is None else (
            ",".join(sorted({o["kind"] for o in step["truth"]["overlays"] if o.get("type") == "interruption"}))
            or "none")
        if t == 0:
            labels["previous_intended_effect_satisfied"], reasons["previous_intended_effect_satisfied"] = None, "first_step"
        else:
            labels["previous_intended_effect_satisfied"], reasons["previous_intended_effect_satisfied"] = \
                effect_of(steps[t - 1], step)
        labels["repeat_failure_detected"], reasons["repeat_failure_detected"] = repeat_failure(steps, t)
        align, why = alignment(steps, t, info, success, prev_align)
        labels["task_alignment"], reasons["task_alignment"] = align, why
        if why not in ("claim_true", "claim_false", "claim_unverified"):
            prev_align = align
        out.append((labels, reasons))
    return out


def problem_label(diagnoser: str, labels: dict[str, Any]) -> Optional[bool]:
    """Whether the labels say ``diagnoser`` should report a problem (None: unlabelled)."""
    if diagnoser == "interference":
        v = labels.get("interference_present")
        return None if v is None else bool(v)
    if diagnoser == "stuck_loop":
        v = labels.get("repeat_failure_detected")
        return None if v is None else bool(v)
    if diagnoser == "action_effect":
        v = labels.get("previous_intended_effect_satisfied")
        return None if v not in ("yes", "no") else v == "no"
    if diagnoser == "task_alignment":
        v = labels.get("task_alignment")
        return None if v not in ("on_track", "off_track") else v == "off_track"
    raise ValueError(f"diagnoser={diagnoser!r} is unknown; expected stuck_loop, action_effect, interference or "
                     "task_alignment")


__all__ = ["LABEL_KEYS", "LOOP_REPEATS", "alignment", "effect_of", "interference_present", "label_episode",
           "problem_label", "repeat_failure"]
