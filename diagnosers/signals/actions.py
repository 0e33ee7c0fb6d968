"""Actions as the diagnosers see them: the point and element a touch targeted,
whether two steps did the same thing, what a step's summary says it aimed at."""

from __future__ import annotations

import math
import re
from typing import Any, Optional

from diagnosers.signals.text import content_words, normalize, quoted
from diagnosers.signals.tree import element_at
from ttir.core.types import Action, AgentStep, Observation, StepRecord, UIElement

_VERB_TARGET = re.compile(r"\b(?:tap|click|press|select|open|toggle|choose|long-press|long press)\s+(?:on\s+)?(?:the\s+)?([^.,;:!?]{2,60})")


def point_of(action: Action, obs: Optional[Observation]) -> Optional[tuple[int, int]]:
    """Where the action touches (x/y, or the centre of ``elements[index]``)."""
    try:
        return action.point(obs.elements if obs is not None else None)
    except IndexError:
        return None


def target_index(action: Action, obs: Observation) -> Optional[int]:
    """The element the action addressed on ``obs``: ``index`` if valid, else the
    tappable element under its point."""
    if action.index is not None and 0 <= action.index < len(obs.elements):
        return action.index
    p = point_of(action, obs)
    if p is None:
        return None
    return element_at(obs, *p)


def target_element(action: Action, obs: Observation) -> Optional[UIElement]:
    i = target_index(action, obs)
    return obs.elements[i] if i is not None else None


def _near(a: Optional[tuple[int, int]], b: Optional[tuple[int, int]], tol: int) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.dist(a, b) <= tol


def same_action(a: StepRecord, b: StepRecord, tolerance_px: int) -> bool:
    """Whether two recorded steps did the same thing: same type and arguments, touches
    on the same element or within ``tolerance_px`` of each other; swipes from the same
    point the same way (their length may differ)."""
    x, y = a.step.action, b.step.action
    if x.action_type != y.action_type:
        return False
    t = x.action_type
    if t in ("open_app",):
        return normalize(x.app_name or "") == normalize(y.app_name or "")
    if t in ("input_text", "answer") and normalize(x.text or "") != normalize(y.text or ""):
        return False
    if t == "scroll" and x.direction != y.direction:
        return False
    if t == "swipe":
        return _near((x.x, x.y), (y.x, y.y), tolerance_px) and x.swipe_direction == y.swipe_direction
    if t == "wait" or t == "status":
        return x.goal_status == y.goal_status
    if x.index is not None and y.index is not None and x.x is None and y.x is None:
        ea, eb = target_element(x, a.observation), target_element(y, b.observation)
        if ea is not None and eb is not None:
            return (ea.resource_id, ea.text, ea.content_desc, ea.class_name) == (eb.resource_id, eb.text, eb.content_desc, eb.class_name)
        return x.index == y.index
    return _near(point_of(x, a.observation), point_of(y, b.observation), tolerance_px)


def same_words(a: str, b: str) -> bool:
    return normalize(a) == normalize(b)


def same_step_text(a: AgentStep, b: AgentStep) -> bool:
    """The paper's identical summary and thought (after whitespace/case normalisation)."""
    return same_words(a.summary, b.summary) and same_words(a.thought, b.thought)


def intended_targets(step: AgentStep) -> list[str]:
    """The element names a step says it aims at: quoted strings of the summary (then
    the thought), else the phrase after 'tap'/'click'/… ."""
    out: list[str] = []
    for text in (step.summary, step.thought):
        out.extend(q for q in quoted(text) if q not in out)
    if out:
        return out
    for text in (step.summary, step.thought):
        for m in _VERB_TARGET.finditer(normalize(text)):
            phrase = m.group(1).strip()
            phrase = re.split(r"\b(?:to|so|in order|button|icon|field|tab|and|then)\b", phrase)[0].strip()
            if phrase and phrase not in out:
                out.append(phrase)
    return out


def intended_words(step: AgentStep) -> list[str]:
    """Content words of the step's intended targets (or of its summary)."""
    targets = intended_targets(step)
    src = " ".join(targets) if targets else step.summary
    return sorted(content_words(src))


def is_shade_pull(action: Action, size: tuple[int, int]) -> bool:
    """A swipe down from the top edge (opens the notification shade)."""
    if action.action_type != "swipe" or action.y is None or action.y2 is None:
        return False
    h = max(1, size[1])
    return action.y <= 0.1 * h and (action.y2 - action.y) > 0.15 * h


def describe_element(e: Optional[UIElement]) -> Optional[dict[str, Any]]:
    if e is None:
        return None
    return {"text": e.text, "content_desc": e.content_desc, "resource_id": e.resource_id, "class_name": e.class_name,
            "package": e.package, "bounds": list(e.bounds), "clickable": e.clickable}
