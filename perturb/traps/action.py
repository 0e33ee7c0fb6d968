"""Action-layer traps (A): the parsed action is altered between the agent's output
and the device. The agent's own record of its action is untouched; the change is
visible only through the next screenshot (and in the event log).

- ``trap_grounding_error`` — an offset of 20–50 px (independent per axis, random
  sign) on touch actions (click, long_press, double_tap) and on the start of a swipe.
- ``trap_type_mismatch`` — click / long_press / double_tap remapped to one of the
  other two; a swipe reversed.
- ``trap_intent_deviation`` — a tap moved to another element (a nearby one of
  opposite meaning when the antonym dictionary finds one on screen, else the
  nearest), or the typed text replaced.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from perturb.base import Magnitude
from perturb.device import PerturbationContext
from perturb.traps.base import Trap, action_point, describe_element, shown
from perturb.traps.lexicon import antonym, dictionary_words, wrong_text
from ttir.core.types import TOUCH_TYPES, Action, Observation, UIElement


def _with(action: Action, **changes: Any) -> Action:
    data = action.to_dict()
    data.update(changes)
    return Action(**{k: v for k, v in data.items() if v is not None})


class OffsetMagnitude(Magnitude):
    offset_px: tuple[int, int] = Field((20, 50), description="Per-axis offset magnitude range in pixels (min, max).")

    @model_validator(mode="after")
    def _ok(self) -> "OffsetMagnitude":
        lo, hi = self.offset_px
        if not (0 < lo <= hi <= 500):
            raise ValueError(f"offset_px={self.offset_px} must be (min, max) with 0 < min <= max <= 500")
        return self


class GroundingError(Trap):
    """A: the touch lands 20–50 px off target on each axis."""

    layer = "A"
    component = "action"
    magnitude_model = OffsetMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        obs = shown(ctx)
        point = action_point(action, obs) if action.action_type in (*TOUCH_TYPES, "swipe") else None
        if point is None or not self.try_fire(ctx):
            return action
        W, H = obs.screen_size
        lo, hi = self.magnitude.offset_px
        x, y = point
        dx = self._axis(x, W, lo, hi)
        dy = self._axis(y, H, lo, hi)
        altered = _with(action, index=None, x=x + dx, y=y + dy)
        self.emit_fired(ctx, action_type=action.action_type)
        ctx.emit(self.name, "offset", original=action.to_dict(), altered=altered.to_dict(),
                 point=[x, y], dx=dx, dy=dy)
        return altered

    def _axis(self, v: int, size: int, lo: int, hi: int) -> int:
        mag = self.rng.randint(lo, hi)
        sign = self.rng.choice((-1, 1))
        if not 0 <= v + sign * mag < size:  # off-screen that way: the other way keeps the magnitude
            sign = -sign
        if not 0 <= v + sign * mag < size:  # a tiny screen: clamp
            return max(0, min(size - 1, v + sign * mag)) - v
        return sign * mag


class RemapMagnitude(Magnitude):
    reverse_swipes: bool = Field(True, description="Reverse swipes (start and end swapped).")


class TypeMismatch(Trap):
    """A: the touch type is swapped for another; a swipe runs backwards."""

    layer = "A"
    component = "action"
    magnitude_model = RemapMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        t = action.action_type
        eligible = t in TOUCH_TYPES or (t == "swipe" and self.magnitude.reverse_swipes and
                                        (action.x, action.y) != (action.x2, action.y2))
        if not eligible or not self.try_fire(ctx):
            return action
        if t == "swipe":
            altered = _with(action, x=action.x2, y=action.y2, x2=action.x, y2=action.y)
        else:
            new_type = self.rng.choice([o for o in TOUCH_TYPES if o != t])
            altered = _with(action, action_type=new_type, duration_ms=None)
        self.emit_fired(ctx, action_type=t)
        ctx.emit(self.name, "remapped", original=action.to_dict(), altered=altered.to_dict(),
                 original_type=t, altered_type=altered.action_type)
        return altered


class DeviationMagnitude(Magnitude):
    text_mode: Literal["random", "dictionary", "characters"] = Field(
        "random", description="Wrong text for input_text: a dictionary string, random characters, or either (seeded).")


class IntentDeviation(Trap):
    """A: the executed action is not the planned one — another element is tapped,
    or other text is typed."""

    layer = "A"
    component = "action"
    magnitude_model = DeviationMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        t = action.action_type
        if t in TOUCH_TYPES:
            obs = shown(ctx)
            point = action_point(action, obs)
            choice = pick_alternative(obs, point) if point is not None else None
            if choice is None or not self.try_fire(ctx):
                return action
            src, dst, reason = choice
            x, y = obs.elements[dst].center
            altered = _with(action, index=None, x=x, y=y)
            self.emit_fired(ctx, action_type=t, kind="retarget")
            ctx.emit(self.name, "replaced", kind="retarget", reason=reason, original=action.to_dict(),
                     altered=altered.to_dict(), point=list(point),  # type: ignore[arg-type]
                     from_element=describe_element(obs.elements[src], element_label(obs, src)) if src is not None else None,
                     to_element=describe_element(obs.elements[dst], element_label(obs, dst)))
            return altered
        if t == "input_text" and action.text:
            if not self.try_fire(ctx):
                return action
            text, mode = wrong_text(action.text, self.rng, self.magnitude.text_mode)
            altered = _with(action, text=text)
            self.emit_fired(ctx, action_type=t, kind="retext")
            ctx.emit(self.name, "replaced", kind="retext", reason=mode, original=action.to_dict(),
                     altered=altered.to_dict(), original_text=action.text, altered_text=text)
            return altered
        return action


# -- choosing the wrong element --------------------------------------------------------------


def _touchable(e: UIElement) -> bool:
    return (e.clickable or e.long_clickable or e.editable) and e.enabled and e.area > 0


def element_label(obs: Observation, i: int) -> str:
    """What an element says: its own text / description, else its descendants' text
    (a clickable row usually carries its label in a child)."""
    e = obs.elements[i]
    if e.label:
        return e.label
    parts: list[str] = []
    stack = obs.children(i)
    while stack and len(parts) < 4:
        j = stack.pop(0)
        c = obs.elements[j]
        if c.label:
            parts.append(c.label)
        stack.extend(obs.children(j))
    return " ".join(parts)


def _descendant(obs: Observation, j: int, i: int) -> bool:
    p = obs.elements[j].parent
    seen = set()
    while p is not None and p not in seen:
        if p == i:
            return True
        seen.add(p)
        p = obs.elements[p].parent
    return False


def pick_alternative(obs: Observation, point: tuple[int, int]) -> Optional[tuple[Optional[int], int, str]]:
    """The element a deviated tap at ``point`` lands on instead: (intended element
    index or None, chosen index, reason). Prefers an element whose label is the
    antonym of the intended one's ("Cancel" for "Confirm"), else the nearest other
    touchable element — of the same app when there is one."""
    els = obs.elements
    src: Optional[int] = None
    for i in range(len(els) - 1, -1, -1):  # topmost touchable node under the point
        if _touchable(els[i]) and els[i].contains(*point):
            src = i
            break
    cands = [j for j, e in enumerate(els)
             if _touchable(e) and not e.contains(*point) and (src is None or not (_descendant(obs, j, src) or _descendant(obs, src, j)))]
    if not cands:
        return None
    pkg = els[src].package if src is not None else obs.package
    same = [j for j in cands if els[j].package == pkg]
    cands = same or cands

    def dist(j: int) -> float:
        cx, cy = els[j].center
        return math.hypot(cx - point[0], cy - point[1])

    if src is not None:
        opposites = {a.lower() for w in dictionary_words(element_label(obs, src)) if (a := antonym(w))}
        if opposites:
            hits = [j for j in cands if opposites & set(dictionary_words(element_label(obs, j)))]
            if hits:
                return src, min(hits, key=lambda j: (dist(j), j)), "antonym"
    return src, min(cands, key=lambda j: (dist(j), j)), "nearest"
