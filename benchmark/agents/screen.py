"""Screen reading shared by the reference agents: change detection, interruptions,
loading screens, occlusion. Agents see only observations (like any real agent)."""

from __future__ import annotations

import hashlib
from typing import Optional

from benchmark.plan import Target
from ttir.lexicon import dismiss_rank, label, role_of
from ttir.types import Observation, UIElement

KEYBOARD_HINT = "inputmethod"
LOADING_WORDS = ("loading", "please wait", "checking for updates", "connecting", "downloading")


def signature(obs: Observation) -> str:
    """Identity of what is on screen: elements, texts and states (ignoring the clock),
    plus a coarse thumbnail, because some changes (a slider's thumb) only show in pixels."""
    h = hashlib.blake2b(digest_size=12)
    h.update((obs.package or "").encode())
    for e in obs.elements:
        if e.resource_id.endswith(":id/clock"):
            continue
        h.update(f"{e.class_name}|{e.resource_id}|{e.text}|{e.content_desc}|{e.bounds}|{e.checked}|{e.focused}".encode())
    img = obs.screenshot
    if img is not None:
        top = max(1, img.height // 25)  # skip the status bar (its clock ticks)
        h.update(img.crop((0, top, img.width, img.height)).reduce(24).convert("L").tobytes())
    return h.hexdigest()


def labels(obs: Observation) -> set[str]:
    return {label(e) for e in buttons(obs)}


def keyboard_open(obs: Observation) -> bool:
    return any(KEYBOARD_HINT in e.package for e in obs.elements)


def buttons(obs: Observation) -> list[UIElement]:
    """Labelled touch targets, leaving out the home screen's app icons (an icon named
    "Settings" is not an interruption's button)."""
    return [e for e in obs.elements if e.clickable and e.enabled and e.area > 0 and label(e) and "launcher" not in e.package]


def dismiss_buttons(obs: Observation) -> list[UIElement]:
    """Visible decline / close buttons, best first (the topmost window's first)."""
    found = [e for e in reversed(buttons(obs)) if role_of(e) == "dismiss"]
    return sorted(found, key=dismiss_rank)


def engage_buttons(obs: Observation) -> list[UIElement]:
    return [e for e in reversed(buttons(obs)) if role_of(e) == "engage"]


def loading(obs: Observation) -> bool:
    if any("ProgressBar" in e.class_name for e in obs.elements):
        return True
    text = " ".join(f"{e.text} {e.content_desc}".lower() for e in obs.elements)
    return any(w in text for w in LOADING_WORDS)


def not_responding(obs: Observation) -> Optional[UIElement]:
    """The "Close app" button of an "isn't responding" dialog, if one is shown."""
    if any("isn't responding" in e.text or "isn’t responding" in e.text for e in obs.elements):
        for e in buttons(obs):
            if label(e).lower() == "close app":
                return e
    return None


def covered(obs: Observation, e: UIElement) -> bool:
    """Whether something else lies on top of ``e``'s centre: the topmost touch target there
    is neither ``e`` nor inside it nor one of its containers."""
    top = obs.element_at(*e.center, clickable_only=True)
    if top is None or top is e:
        return False
    if top.bounds == e.bounds and top.package == e.package:
        return False
    return not (_within(obs, top, e) or _within(obs, e, top))


def _within(obs: Observation, inner: UIElement, outer: UIElement) -> bool:
    idx: Optional[int] = next(k for k, x in enumerate(obs.elements) if x is inner)
    while idx is not None:
        if obs.elements[idx] is outer:
            return True
        idx = obs.elements[idx].parent
    return False


def window_of(obs: Observation, e: UIElement) -> int:
    """Index of the window (root node) ``e`` belongs to."""
    i = next(k for k, x in enumerate(obs.elements) if x is e)
    while obs.elements[i].parent is not None:
        i = obs.elements[i].parent  # type: ignore[assignment]
    return i


def _is_later_window(obs: Observation, top: UIElement, e: UIElement) -> bool:
    return window_of(obs, top) != window_of(obs, e)


def find_lenient(obs: Observation, target: Target) -> Optional[UIElement]:
    """Exact match first, then by id alone, then by text alone (labels can lie)."""
    from benchmark.plan import find

    e = find(obs, target, touchable=True)
    if e is not None:
        return e
    if target.id is not None and (target.text is not None or target.desc is not None):
        by_id = Target(id=target.id, editable=target.editable)
        same = [x for x in obs.elements if by_id.matches(x) and x.enabled and x.area > 0]
        if len(same) == 1:  # a unique control whose label changed; never a row of a list
            return find(obs, by_id, touchable=True)
    return None
