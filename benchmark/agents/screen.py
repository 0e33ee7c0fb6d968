"""Screen reading shared by the reference agents: change detection, interruptions,
loading screens, occlusion. Agents see only observations (like any real agent)."""

from __future__ import annotations

import hashlib
from typing import Optional

from benchmark.plan import KEYBOARD_PACKAGE_HINT as KEYBOARD_HINT
from benchmark.plan import Target
from ttir.core.lexicon import dismiss_rank, label, loading_words, role_of
from ttir.core.obs_cache import ObservationCache
from ttir.core.types import Observation, UIElement

SYSTEM_PROCESSES = ("System UI", "Process system")  # how the ANR dialog names them


_SIGNATURES = ObservationCache()


def signature(obs: Observation) -> str:
    """Cached :func:`_signature` (observations are not mutated once observed)."""
    return _SIGNATURES.get(obs, "signature", _signature)


def _signature(obs: Observation) -> str:
    """Identity of what is on screen: elements, texts and states (ignoring the clock),
    plus a coarse thumbnail, because some changes (a slider's thumb) only show in pixels."""
    h = hashlib.blake2b(digest_size=12)
    h.update((obs.package or "").encode())
    for e in obs.elements:
        if e.resource_id.endswith(":id/clock"):
            continue
        h.update(f"{e.class_name}|{e.resource_id}|{e.text}|{e.content_desc}|{tuple(e.bounds)}|{e.checked}|{e.focused}".encode())
    img = obs.screenshot
    if img is not None:
        # a coarse nearest-neighbour sample (cheap: no full-size copy); the top rows hold the ticking clock
        from PIL import Image

        thumb = img.resize((54, 120), Image.Resampling.NEAREST).convert("L")
        h.update(thumb.crop((0, 5, 54, 120)).tobytes())
    return h.hexdigest()


def labels(obs: Observation) -> set[str]:
    return {label(e) for e in buttons(obs)}


def keyboard_open(obs: Observation) -> bool:
    return any(is_keyboard(e) for e in obs.elements)


def is_keyboard(e: UIElement) -> bool:
    """A node of the soft keyboard's window (its keys are never a screen's buttons)."""
    return KEYBOARD_HINT in e.package


def buttons(obs: Observation) -> list[UIElement]:
    """Labelled touch targets, leaving out the home screen's app icons (an icon named
    "Settings" is not an interruption's button) and the keyboard's keys (an "x" key is
    not a close button)."""
    return [e for e in obs.elements if e.clickable and e.enabled and e.area > 0 and label(e)
            and "launcher" not in e.package and not is_keyboard(e)]


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
    return any(w in text for w in loading_words())


def not_responding(obs: Observation) -> Optional[UIElement]:
    """The "Close app" button of an app's "isn't responding" dialog, if one is shown
    (None for System UI and the system process: see :func:`system_not_responding`)."""
    titles = _anr_titles(obs)
    if titles and not _system_hang(titles):
        for e in buttons(obs):
            if label(e).lower() == "close app":
                return e
    return None


def system_not_responding(obs: Observation) -> Optional[UIElement]:
    """The "Wait" button of System UI's or the system process's "isn't responding"
    dialog: closing those restarts the phone's UI; they catch up when given time."""
    if _system_hang(_anr_titles(obs)):
        for e in buttons(obs):
            if label(e).lower() == "wait":
                return e
    return None


def _anr_titles(obs: Observation) -> list[str]:
    return [e.text for e in obs.elements if "isn't responding" in e.text or "isn’t responding" in e.text]


def _system_hang(titles: list[str]) -> bool:
    return any(t.startswith(SYSTEM_PROCESSES) for t in titles)


def covered(obs: Observation, e: UIElement) -> bool:
    """Whether something else lies on top of ``e``'s centre: the topmost touch target there
    is neither ``e`` nor inside it nor one of its containers."""
    top = obs.element_at(*e.center, clickable_only=True)
    if top is None or top is e:
        return False
    if top.bounds == e.bounds and top.package == e.package:
        return False
    return not (_within(obs, top, e) or _within(obs, e, top))


def common_container(obs: Observation, elements: list[UIElement]) -> Optional[UIElement]:
    """The smallest node that contains all ``elements`` (their lowest common ancestor)."""
    def chain(e: UIElement) -> list[int]:
        idx: Optional[int] = next(k for k, x in enumerate(obs.elements) if x is e)
        out = []
        while idx is not None:
            out.append(idx)
            idx = obs.elements[idx].parent
        return out

    chains = [chain(e) for e in elements]
    if not chains:
        return None
    shared = set(chains[0]).intersection(*map(set, chains[1:]))
    for idx in chains[0]:
        if idx in shared:
            return obs.elements[idx]
    return None


def dialog_of(obs: Observation, buttons_: list[UIElement]) -> Optional[UIElement]:
    """The container of a pop-up's buttons: their common ancestor, widened to the
    largest ancestor still smaller than most of the screen (the dialog card, sheet or banner)."""
    box = common_container(obs, buttons_)
    if box is None:
        return None
    w, h = obs.screen_size
    limit = 0.7 * w * h
    while box.parent is not None:
        parent = obs.elements[box.parent]
        if parent.area >= limit or parent.parent is None:
            break
        box = parent
    return box


def within(obs: Observation, inner: UIElement, outer: UIElement) -> bool:
    return _within(obs, inner, outer)


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
    """Exact match first, then the same words in another UI language the agent reads
    (the goal is English, the phone may not be), then by id alone (labels can lie)."""
    from benchmark.plan import find

    e = find(obs, target, touchable=True)
    if e is not None:
        return e
    for local in localized(target):
        e = find(obs, local, touchable=True)
        if e is not None:
            return e
    if target.id is not None and (target.text is not None or target.desc is not None):
        by_id = Target(id=target.id, editable=target.editable)
        same = [x for x in obs.elements if by_id.matches(x) and x.enabled and x.area > 0]
        if len(same) == 1:  # a unique control whose label changed; never a row of a list
            return find(obs, by_id, touchable=True)
    return None


def localized(target: Target) -> list[Target]:
    """``target`` with its text and description as each UI language's string table
    words them (what a reader of those languages looks for); only the ones that differ."""
    from benchmark.ui.i18n import DEFAULT_LANGUAGE, languages, table

    out: list[Target] = []
    for lang in languages():
        if lang == DEFAULT_LANGUAGE:
            continue
        t = table(lang)
        text = t.translate(target.text) if target.text else target.text
        desc = t.translate(target.desc) if target.desc else target.desc
        if (text, desc) != (target.text, target.desc):
            out.append(target.model_copy(update={"text": text, "desc": desc}))
    return out


def toggle_state(obs: Observation, target: UIElement) -> Optional[tuple[str, bool]]:
    """(resource id, checked) of the switch a tap on ``target`` should flip, if any."""
    if target.checkable and target.resource_id:
        return (target.resource_id, target.checked)
    idx = next(k for k, x in enumerate(obs.elements) if x is target)
    for k, e in enumerate(obs.elements):
        if e.checkable and e.resource_id and k != idx and _within(obs, e, target):
            return (f"{target.resource_id}>{e.resource_id}" if target.resource_id else e.resource_id, e.checked)
    return None


def toggle_unchanged(obs: Observation, toggle: tuple[str, bool]) -> bool:
    """Whether the switch recorded by :func:`toggle_state` still has its old state."""
    key, before = toggle
    parent_id, _, child_id = key.rpartition(">")
    for k, e in enumerate(obs.elements):
        if parent_id:
            if e.resource_id == parent_id:
                for c in obs.elements:
                    if c.checkable and c.resource_id == child_id and _within(obs, c, e):
                        return c.checked == before
        elif e.checkable and e.resource_id == key:
            return e.checked == before
    return False  # gone from the screen: cannot tell, assume it worked


def popup_button(obs: Observation, e: UIElement) -> bool:
    """Whether ``e`` belongs to something over the screen (another window, or a dialog /
    sheet card) rather than to the screen's own toolbar or content."""
    if not obs.elements:
        return False
    if window_of(obs, e) != window_of(obs, obs.elements[0]):
        return True
    box = dialog_of(obs, [e])
    if box is None:
        return False
    w, h = obs.screen_size
    x1, y1, x2, y2 = box.bounds
    # a toolbar is as tall in landscape as in portrait: measure it against the long side
    toolbar = (x2 - x1) > 0.9 * w and y1 < 0.2 * h and (y2 - y1) < 0.15 * max(w, h)
    return box.area < 0.6 * w * h and not toolbar and box is not e


def text_missing(obs: Observation, resource_id: str, text: str) -> bool:
    """Whether the field ``resource_id`` is on screen without ``text`` in it."""
    for e in obs.elements:
        if e.editable and e.resource_id == resource_id:
            return text.strip().lower() not in e.text.strip().lower()
    return False  # not on screen (the form moved on): cannot tell
