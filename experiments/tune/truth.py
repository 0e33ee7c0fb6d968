"""Per-step ground truth, recorded by the harness while an episode runs.

Only the harness knows these facts; the diagnosers never see them (honesty rule).
For every decision step ``i`` (the observation the agent decided on, then its
action) the recorder keeps:

- ``raw_foreground`` — the device's real foreground package (before any overlay or
  φS transform), with ``in_task_apps``, ``launcher``, ``shade`` (the notification
  shade is pulled down), ``recents`` and ``installed_app`` (an app with a launcher
  icon on this device; None when the device cannot tell);
- ``overlays`` — the overlay layers the agent sees: injected interruptions (dialog,
  sheet, full-screen, heads-up banner, "isn't responding") and transient screen
  states (loading, frozen, skeleton), with their perturbation, kind, style, window
  package, page and whether the agent ``engaged`` into their flow. When the agent
  is served an old frame (a frozen screen, a deadlocked phone) these are the
  overlays of that frame (``frame_of`` names its step);
- ``screen_key`` — a fingerprint of the raw UI tree (status bar excluded) plus the
  state of every visible overlay (page, ticked boxes, choices, typed text): equal
  keys mean nothing the agent could act on changed; ``raw_key`` — the raw tree
  alone (did the app itself change?);
- ``issued_point`` / ``executed`` / ``executed_point`` — the agent's action as
  issued and as the device finally received it (None: it never arrived);
- ``action_fate`` — what the perturbations did to this step's action, from the
  events logged while it executed: ``dropped``, ``delayed``, ``blocked``,
  ``offset``, ``remapped``, ``replaced``, ``error``, ``to_overlay`` (it was
  routed to an overlay's control), plus ``after_delayed`` when an earlier delayed
  action landed just before it;
- ``target`` — for touches and typing whose summary names a target in quotes
  (``Tap "Save"``, ``Type "Ann" into "first_name"``): whether that element was on
  the screen the agent decided on (``found``) and whether the executed point hit
  the control it belongs to (``hit``).

The recorder never raises into the episode: a failure is logged and recorded as
``truth_error``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Optional

from loguru import logger

from ttir.core.types import TARGETED_TYPES, Action, Observation, UIElement

TRUTH_VERSION = 3
TRANSIENT_KINDS = ("loading", "frozen", "skeleton")  # screen states, not interruptions to dismiss
LAUNCHERS = ("com.google.android.apps.nexuslauncher", "com.android.launcher3", "com.google.android.launcher")

# event name -> the fate of the action that was executing when it was logged
FATE_OF_EVENT = {
    "dropped": "dropped",
    "delayed": "delayed",
    "blocked_action": "blocked",
    "offset": "offset",
    "remapped": "remapped",
    "replaced": "replaced",
    "overlay_engaged": "to_overlay",
    "overlay_dismissed": "to_overlay",
    "overlay_button": "to_overlay",
    "overlay_input": "to_overlay",
    "overlay_text_entered": "to_overlay",
    "page_advanced": "to_overlay",
    "page_back": "to_overlay",
    "hang_wait": "to_overlay",
    "delayed_applied": "after_delayed",
}
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')


# ------------------------------------------------------------------------ targets


def named_targets(summary: str, action_type: str) -> list[str]:
    """The targets a step's summary names in quotes: the first quoted string for a
    touch, the string after ``into`` for typing (the field)."""
    quoted = [a or b for a, b in _QUOTED.findall(summary or "")]
    if not quoted:
        return []
    if action_type == "input_text":
        m = re.search(r'\binto\s+(?:the\s+)?["“]([^"”]+)["”]', summary)
        return [m.group(1)] if m else []
    return [quoted[0]]


def _norm(s: str) -> str:
    return " ".join((s or "").lower().split())


def _names(e: UIElement) -> list[str]:
    return [n for n in (_norm(e.text), _norm(e.content_desc), _norm(e.hint), _norm(e.short_id)) if n]


def _control(elements: list[UIElement], i: int) -> int:
    """The element that receives a touch on ``elements[i]``: itself or its nearest
    clickable / editable ancestor."""
    j: Optional[int] = i
    while j is not None:
        e = elements[j]
        if e.clickable or e.long_clickable or e.editable or e.checkable:
            return j
        j = e.parent
    return i


def _topmost_at(elements: list[UIElement], p: tuple[int, int]) -> Optional[int]:
    for i in range(len(elements) - 1, -1, -1):
        e = elements[i]
        if e.area > 0 and e.contains(*p):
            return i
    return None


def hit_test(elements: list[UIElement], action: Optional[dict[str, Any]], summary: str,
             action_type: str) -> Optional[dict[str, Any]]:
    """Did the executed action reach the control its summary names?  None when the
    summary names no target (or the action type has none)."""
    names = [_norm(n) for n in named_targets(summary, action_type)]
    if action_type not in TARGETED_TYPES or not names:
        return None
    out: dict[str, Any] = {"named": names[0], "found": False, "hit": None}
    cands = [i for i, e in enumerate(elements) if any(n in _names(e) for n in names) and e.area > 0]
    if not cands:  # a substring match for labels that carry more words ("Save contact")
        cands = [i for i, e in enumerate(elements) if e.area > 0 and any(
            len(n) >= 3 and n in _norm(e.label) for n in names)]
    if not cands:
        return out
    out["found"] = True
    if action is None:
        return out  # never executed: the fate says why
    controls = {_control(elements, i) for i in cands}
    try:
        p = Action(**action).point(elements)
    except (IndexError, ValueError):
        p = None
    if p is None:
        if action_type == "input_text":  # typed into whatever has the focus
            focused = [i for i, e in enumerate(elements) if e.focused and e.editable]
            out["hit"] = bool(focused) and any(_control(elements, i) in controls for i in focused)
        return out
    top = _topmost_at(elements, p)
    out["point"] = list(p)
    if top is None:
        out["hit"] = False
        return out
    got = _control(elements, top)
    out["hit"] = got in controls or top in cands
    hit_el = elements[got]
    out["hit_element"] = hit_el.label or hit_el.short_id or hit_el.class_name.rsplit(".", 1)[-1]
    return out


# ----------------------------------------------------------------------- screens


def _status_bar_nodes(elements: list[UIElement]) -> set[int]:
    """Indices of the status bar and everything inside it (a clock that ticks)."""
    out: set[int] = set()
    for i, e in enumerate(elements):
        p = e.parent
        if e.short_id in ("status_bar", "clock", "battery") or (p is not None and p in out):
            out.add(i)
    return out


def screen_key(raw: Observation, layers: list[dict[str, Any]]) -> str:
    """A fingerprint of what the agent could act on: the raw tree (minus the status
    bar) and the state of every visible overlay (``layers = []``: the raw screen only)."""
    skip = _status_bar_nodes(raw.elements)
    h = hashlib.sha1()
    h.update((raw.foreground or "").encode())
    for i, e in enumerate(raw.elements):
        if i in skip:
            continue
        h.update(repr((e.class_name, e.resource_id, e.text, e.content_desc, e.bounds, e.checked, e.selected,
                       e.focused, e.enabled, e.parent)).encode())
    for layer in layers:
        h.update(repr(sorted((k, str(v)) for k, v in layer.items() if k != "frame_of")).encode())
    return h.hexdigest()[:16]


def draws(layer: Any) -> bool:
    """Whether a visible layer puts anything on screen (a closed app's hang layer
    waits for the relaunch without drawing)."""
    return not getattr(layer, "closed", False) and not getattr(layer, "stopped", False)


def describe_layer(layer: Any) -> dict[str, Any]:
    """What the harness knows about one overlay layer (duck-typed: any layer class)."""
    kind = str(getattr(layer, "kind", "layer"))
    if hasattr(layer, "dialog_up"):  # a hung app: its "isn't responding" dialog, or a hung screen after "Wait"
        dialog = getattr(layer, "dialog", None) if layer.dialog_up else None
        if dialog is None:
            return {"source": getattr(layer, "source", ""), "kind": f"{kind}_waiting", "type": "transient",
                    "blocking": True, "engaged": False}
        d = describe_layer(dialog)
        d["kind"] = kind
        return d
    d: dict[str, Any] = {
        "source": getattr(layer, "source", ""),
        "kind": kind,
        "type": "transient" if kind in TRANSIENT_KINDS else "interruption",
        "blocking": bool(getattr(layer, "blocking", True)),
    }
    for attr, key in (("style", "style"), ("window_package", "package"), ("page_id", "page")):
        try:
            value = getattr(layer, attr, None)
        except Exception:  # noqa: BLE001 - a layer mid-transition: leave the field out
            value = None
        if value is not None:
            d[key] = value
    flow = getattr(layer, "flow", None)
    index = getattr(layer, "index", 0) or 0
    d["engaged"] = bool(flow) or (isinstance(index, int) and index > 0)
    state = _page_state(layer)
    if state:
        d["state"] = state
    return d


def _page_state(layer: Any) -> str:
    """What the agent changed on an overlay page (ticked boxes, a choice, typed
    text, stars, scroll) — what it looks like now, not how often it changed."""
    try:
        st = getattr(layer, "state", None)
        scroll = getattr(layer, "scroll", {}).get((getattr(layer, "flow", None), getattr(layer, "index", 0)), {})
    except Exception:  # noqa: BLE001 - a layer mid-transition
        return ""
    if st is None or not hasattr(st, "checked"):
        return ""
    parts = (sorted(getattr(st, "checked", ()) or ()), getattr(st, "choice", None),
             sorted((getattr(st, "values", {}) or {}).items()), getattr(st, "focus", None), getattr(st, "stars", 0),
             sorted((k, round(float(v), 1)) for k, v in (scroll or {}).items()))
    return repr(parts)


# ----------------------------------------------------------------------- recorder


class RecordingDevice:
    """The PerturbedDevice as ``run_episode`` sees it, telling the recorder about
    every execution; everything else is passed through."""

    def __init__(self, env: Any, recorder: "TruthRecorder"):
        self._env = env
        self._recorder = recorder

    def execute(self, action: Action) -> None:
        self._recorder.before_execute(action)
        try:
            self._env.execute(action)
        finally:
            self._recorder.after_execute()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)


class TruthRecorder:
    """Records the ground truth of every step of one episode on a PerturbedDevice.

    ``device`` is what to hand to ``run_episode``; call :meth:`at_decision` from
    its ``on_observation`` callback and :meth:`attach` on the finished trajectory.
    """

    def __init__(self, env: Any, task: Any):
        self.env = env
        self.device = RecordingDevice(env, self)
        self.task_apps: tuple[str, ...] = tuple(getattr(task, "apps", ()) or ())
        try:
            plan = task.reference_solution()
            self.plan_uses_shade = any(getattr(s, "kind", "") == "open_shade" for s in plan)
        except Exception:  # noqa: BLE001 - a task without a plan: the shade is not part of it
            self.plan_uses_shade = False
        self.steps: dict[int, dict[str, Any]] = {}
        self._elements: dict[int, list[UIElement]] = {}  # kept alive: frames are matched by identity
        self._current: Optional[int] = None
        self.errors: list[str] = []

    # -- decision time ------------------------------------------------------------------
    def at_decision(self, i: int, obs: Observation) -> None:
        try:
            self.steps[i] = self._decision(i, obs)
            self._elements[i] = obs.elements
            self._current = i
        except Exception as exc:  # noqa: BLE001 - ground truth must never break an episode
            logger.warning("truth recording failed at step {}: {}", i, exc)
            self.steps[i] = {"truth_error": f"{type(exc).__name__}: {exc}"}
            self._current = i

    def _raw(self) -> Observation:
        hist = getattr(self.env.ctx, "raw_history", None)
        return hist[-1] if hist else self.env.inner.observe()

    def _frame_step(self, elements: list[UIElement]) -> Optional[int]:
        for j, els in self._elements.items():
            if els is elements:
                return j
        return None

    def _layers(self, obs: Observation, raw: Observation) -> tuple[list[dict[str, Any]], Optional[int]]:
        """The overlays in the frame the agent sees, and the step that frame is from."""
        # a device returns the same cached screen while nothing changes: only a frame
        # that is not the live screen can be an old one served again
        stale = None if obs.elements is raw.elements else self._frame_step(obs.elements)
        if stale is not None:  # an old frame served again (a deadlocked phone)
            return [dict(x, frame_of=stale) for x in self.steps.get(stale, {}).get("overlays", [])], stale
        visible = [x for x in self.env.overlays.visible(raw.package) if draws(x)]
        out: list[dict[str, Any]] = []
        frame_of = None
        for layer in visible:
            frame = getattr(layer, "frame", None)
            if getattr(layer, "kind", "") == "frozen" and frame is not None:
                # the frozen frame hides what is below it and shows what its frame showed
                j = self._frame_step(frame.elements)
                out = [dict(x, frame_of=j) for x in self.steps.get(j, {}).get("overlays", [])] if j is not None else []
                frame_of = j
            out.append(describe_layer(layer))
        return out, frame_of

    def _decision(self, i: int, obs: Observation) -> dict[str, Any]:
        raw = self._raw()
        pkg = raw.package
        base = getattr(self.env, "unwrapped", None)
        system_overlay = getattr(base, "overlay", None)
        apps = getattr(base, "apps", None)
        overlays, frame_of = self._layers(obs, raw)
        live = [describe_layer(layer) for layer in self.env.overlays.visible(pkg) if draws(layer)]
        return {
            "raw_foreground": pkg,
            "in_task_apps": pkg in self.task_apps if pkg else None,
            "launcher": bool(pkg) and (pkg in LAUNCHERS or "launcher" in pkg),
            "shade": system_overlay == "shade",
            "recents": system_overlay == "recents",
            "installed_app": (pkg in apps) if isinstance(apps, dict) and pkg else None,
            "overlays": overlays,
            "frame_of": frame_of,
            "screen_key": screen_key(raw, live),
            "raw_key": screen_key(raw, []),
        }

    # -- execution ------------------------------------------------------------------------
    def before_execute(self, action: Action) -> None:
        i = self._current
        if i is None or i not in self._elements:
            return
        try:
            p = action.point(self._elements[i])
        except (IndexError, ValueError):
            p = None
        self.steps[i]["issued_point"] = list(p) if p else None

    def after_execute(self) -> None:
        i = self._current
        if i is None or i not in self.steps:
            return
        try:
            done = getattr(self.env.ctx, "action", None)
            self.steps[i]["executed"] = done.to_dict() if done is not None else None
            p = None
            if done is not None:
                try:
                    p = done.point(self._elements.get(i))
                except (IndexError, ValueError):
                    p = None
            self.steps[i]["executed_point"] = list(p) if p else None
        except Exception as exc:  # noqa: BLE001
            self.steps[i]["truth_error"] = f"{type(exc).__name__}: {exc}"

    # -- the finished trajectory -----------------------------------------------------------
    def attach(self, trajectory: list[dict[str, Any]]) -> None:
        """Add ``truth`` to every step dict of ``trajectory`` (the JSON form of the StepLogs)."""
        for step in trajectory:
            i = step.get("index")
            rec = dict(self.steps.get(i, {"truth_error": "no decision recorded"}))
            agent = step.get("agent_step") or {}
            action = agent.get("action") or {}
            fate = sorted({FATE_OF_EVENT[e["event"]] for e in step.get("perturbation_events", [])
                           if e.get("event") in FATE_OF_EVENT and e.get("step") == i})
            if step.get("action_error"):
                fate.append("error")
            rec["action_fate"] = fate
            if action and i in self._elements and "executed" in rec:
                try:
                    rec["target"] = hit_test(self._elements[i], rec.get("executed"), agent.get("summary", ""),
                                             action.get("action_type", ""))
                except Exception as exc:  # noqa: BLE001
                    rec["target"] = None
                    rec["truth_error"] = f"hit test: {type(exc).__name__}: {exc}"
            step["truth"] = rec

    def task_info(self) -> dict[str, Any]:
        return {"apps": list(self.task_apps), "plan_uses_shade": self.plan_uses_shade, "truth_version": TRUTH_VERSION}
