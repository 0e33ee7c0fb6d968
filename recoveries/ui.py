"""UI reading shared by the rule-tier recoveries: button roles, target words, matching."""

from __future__ import annotations

import re
from typing import Iterable, Optional

from ttir.core.lexicon import button_words, dismiss_rank, label, role_of
from ttir.core.lexicon import norm as _norm
from ttir.core.types import AgentStep, Observation, UIElement

_QUOTED = re.compile(r"[\"“”']([^\"“”']{1,60})[\"“”']")
_STOP = {
    "the", "a", "an", "to", "on", "in", "into", "of", "for", "and", "tap", "click", "press", "button", "field",
    "type", "enter", "open", "select", "this", "that", "it", "then", "with", "my", "at", "by", "icon", "long",
    "double", "next", "step", "plan", "scroll", "find", "text", "input", "go", "screen",
}


# role wording is the one shared vocabulary (ttir/core/data/roles)
__all__ = ["button_words", "dismiss_rank", "label", "role_of", "target_words", "find_target", "distinct_point"]


def target_words(step: Optional[AgentStep]) -> list[str]:
    """What the step meant to touch: quoted names first, then content words of its summary."""
    if step is None:
        return []
    out: list[str] = []
    for source in (step.summary, step.thought):
        out.extend(m.strip() for m in _QUOTED.findall(source or ""))
    if not out:
        words = re.findall(r"[A-Za-z][A-Za-z0-9+&'-]*", step.summary or "")
        out = [w for w in words if w.lower() not in _STOP]
    seen: set[str] = set()
    return [w for w in out if not (w.lower() in seen or seen.add(w.lower()))]


def find_target(obs: Observation, words: Iterable[str], *, editable: Optional[bool] = None) -> Optional[UIElement]:
    """The best visible element named by ``words`` (exact label, then id, then containment)."""
    words = [w for w in words if w]
    if not words:
        return None
    pool = [e for e in obs.elements if e.enabled and e.area > 0 and (editable is None or e.editable == editable)]
    for w in words:  # exact text / description / hint
        lw = _norm(w)
        for e in pool:
            if lw in (_norm(e.text), _norm(e.content_desc), _norm(e.hint)) and (e.clickable or e.editable or e.long_clickable):
                return e
        for e in pool:
            if lw in (_norm(e.text), _norm(e.content_desc), _norm(e.hint)):
                return _clickable_ancestor(obs, e) or e
    for w in words:  # resource id
        key = re.sub(r"[^a-z0-9]+", "_", w.lower()).strip("_")
        for e in pool:
            if key and e.short_id and (e.short_id == key or e.short_id.startswith(key + "_") or e.short_id.endswith("_" + key)):
                return e
    for w in words:  # as a whole word inside a longer label ("Right" in "Move right")
        lw = _norm(w)
        if len(lw) < 3:
            continue
        pat = re.compile(rf"(?<![\w/.:]){re.escape(lw)}(?![\w/.])")
        for e in pool:
            if any(pat.search(_norm(v)) for v in (e.text, e.content_desc, e.hint)):
                return _clickable_ancestor(obs, e) or e
    return None


def _clickable_ancestor(obs: Observation, e: UIElement) -> Optional[UIElement]:
    idx = e.parent
    seen = 0
    while idx is not None and seen < 6:
        p = obs.elements[idx]
        if p.clickable:
            return p
        idx, seen = p.parent, seen + 1
    return None


def distinct_point(e: UIElement, avoid: Optional[tuple[int, int]], tolerance: int) -> tuple[int, int]:
    """A point inside ``e`` at least ``tolerance`` px from ``avoid`` when the element allows."""
    cx, cy = e.center
    if avoid is None or abs(cx - avoid[0]) + abs(cy - avoid[1]) > tolerance:
        return (cx, cy)
    x1, y1, x2, y2 = e.bounds
    for fx, fy in ((0.3, 0.5), (0.7, 0.5), (0.5, 0.3), (0.5, 0.7), (0.2, 0.5), (0.8, 0.5)):
        px, py = int(x1 + (x2 - x1) * fx), int(y1 + (y2 - y1) * fy)
        if abs(px - avoid[0]) + abs(py - avoid[1]) > tolerance:
            return (px, py)
    return (cx, cy)
