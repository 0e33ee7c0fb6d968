"""Text fields: their names (hint, id, description, the label above them), which
field typed text landed in, and which field a step's summary names (the paper's
Figure 10: a phone number typed into Company)."""

from __future__ import annotations

from typing import Optional

from diagnosers.signals.system import short_id
from diagnosers.signals.text import contains_phrase, normalize, text_landed
from diagnosers.signals.tree import screen_tree
from ttir.core.types import Observation, UIElement

_GENERIC_NAMES = {"text", "edit", "edittext", "input", "field", "value", "search src text"}


def editable_indices(obs: Observation) -> list[int]:
    t = screen_tree(obs)
    return [i for i in t.content if obs.elements[i].editable and i not in t.ime_roots]


def _label_above(obs: Observation, i: int) -> str:
    """A plain text node just above the field (a form label)."""
    e = obs.elements[i]
    x1, y1, x2, _ = e.bounds
    best, best_gap = "", 10**9
    for j in range(max(0, i - 6), i):
        c = obs.elements[j]
        if not c.text or c.editable or c.clickable:
            continue
        cx1, _, cx2, cy2 = c.bounds
        gap = y1 - cy2
        if 0 <= gap <= max(24, e.height) and cx1 < x2 and cx2 > x1 and gap < best_gap:
            best, best_gap = c.text, gap
    return best


def field_names(obs: Observation, i: int) -> list[str]:
    """Every name a user or an agent may call field ``i`` by. Real forms often give
    fields no id, and an empty field on many Android versions reports its hint as its
    text ("Phone" until something is typed): an empty-looking text counts as a name."""
    e = obs.elements[i]
    names = [e.hint, e.content_desc, short_id(e.resource_id).replace("_", " "), _label_above(obs, i)]
    if e.text and not e.password and (e.text == e.hint or not e.hint) and len(e.text) <= 40:
        names.append(e.text)
    out = []
    for n in names:
        nn = normalize(n)
        if nn and nn not in _GENERIC_NAMES and len(nn) >= 2 and nn not in out:
            out.append(nn)
    return out


def mentioned_fields(obs: Observation, text: str, typed: str = "") -> list[int]:
    """Fields of ``obs`` whose names occur in ``text`` (the typed value removed first)."""
    t = normalize(text).replace("_", " ")
    if typed:
        t = t.replace(normalize(typed), " ")
    out = []
    for i in editable_indices(obs):
        if any(contains_phrase(t, n) for n in field_names(obs, i)):
            out.append(i)
    return out


def _match_field(before: Observation, e: UIElement, rank: Optional[int] = None, count: Optional[int] = None) -> Optional[int]:
    """The field of ``before`` that is field ``e`` of a later screen: by id, by hint
    (also a hint the earlier screen showed as the empty field's text), then by its
    place among the form's fields (a dialog that moved keeps its order), then by
    position."""
    cands = editable_indices(before)
    if e.resource_id:
        same = [i for i in cands if before.elements[i].resource_id == e.resource_id]
        if len(same) == 1:
            return same[0]
        cands = same or cands
    if e.hint:
        same = [i for i in cands if e.hint in (before.elements[i].hint, before.elements[i].text)]
        if len(same) == 1:
            return same[0]
        cands = same or cands
    if not cands:
        return None
    if rank is not None and count == len(editable_indices(before)) and cands == editable_indices(before):
        return _in_reading_order(before, cands)[rank]
    cx, cy = e.center
    return min(cands, key=lambda i: abs(before.elements[i].center[0] - cx) + abs(before.elements[i].center[1] - cy))


def _in_reading_order(obs: Observation, idx: list[int]) -> list[int]:
    return sorted(idx, key=lambda i: (obs.elements[i].bounds[1], obs.elements[i].bounds[0]))


def _rank(obs: Observation, i: int) -> tuple[int, int]:
    fields = _in_reading_order(obs, editable_indices(obs))
    return fields.index(i), len(fields)


def landing_fields(before: Observation, after: Observation, typed: str) -> list[int]:
    """Fields of ``after`` that show ``typed``; those whose text changed come first."""
    hits = [i for i in editable_indices(after)
            if text_landed(typed, after.elements[i].text) and not (after.elements[i].hint and after.elements[i].text == after.elements[i].hint)]
    if not hits:
        return []
    changed = []
    for i in hits:
        j = to_before(before, after, i)
        if j is None or before.elements[j].text != after.elements[i].text:
            changed.append(i)
    return changed or hits


def to_before(before: Observation, after: Observation, i: int) -> Optional[int]:
    rank, count = _rank(after, i) if i in editable_indices(after) else (None, None)
    return _match_field(before, after.elements[i], rank, count)


def describe_field(obs: Observation, i: int) -> dict:
    e = obs.elements[i]
    return {"index": i, "names": field_names(obs, i), "text": e.text, "resource_id": e.resource_id,
            "bounds": list(e.bounds), "center": list(e.center)}
