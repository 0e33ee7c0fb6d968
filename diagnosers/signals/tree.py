"""The UI tree of one observation, analysed once: window roots, system chrome
(status / navigation bar), heads-up banners, the shade, the keyboard, and a
content signature that ignores the chrome (its clock changes every minute).

A missing tree is unknown, not an empty screen: an observation whose elements were
read from its screenshot (OCR) has no tree, and neither has a dump whose content
nodes carry no label and no control (a bare window root, the empty containers over
a WebView or a Flutter canvas) — ``has_tree`` is False for both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from diagnosers.signals.cache import cached
from diagnosers.signals.system import is_ime, is_systemui, knowledge, package_of, short_id
from ttir.core.types import Observation, UIElement

NodeKey = tuple


@dataclass
class ScreenTree:
    """Structure of one observation's elements (indices into ``obs.elements``)."""

    size: tuple[int, int]
    roots: list[int] = field(default_factory=list)
    root_of: list[int] = field(default_factory=list)
    children: dict[int, list[int]] = field(default_factory=dict)
    chrome_roots: set[int] = field(default_factory=set)
    heads_up_roots: set[int] = field(default_factory=set)
    shade_roots: set[int] = field(default_factory=set)
    ime_roots: set[int] = field(default_factory=set)
    lock_roots: set[int] = field(default_factory=set)  # the keyguard (lock screen / PIN bouncer)
    content: list[int] = field(default_factory=list)  # not chrome, not heads-up
    keys: frozenset = frozenset()
    labels: frozenset = frozenset()  # (class, text, desc, id) of content nodes: survives scrolling
    signature: int = 0
    texts: list[str] = field(default_factory=list)  # texts of content nodes (no IME)
    packages: set[str] = field(default_factory=set)  # packages of content nodes (no IME)
    empty: bool = False  # nodes, but none of the content says anything (a bare root): no usable tree

    @property
    def has_tree(self) -> bool:
        return bool(self.roots) and not self.empty

    @property
    def shade_open(self) -> bool:
        return bool(self.shade_roots)

    @property
    def keyboard_open(self) -> bool:
        return bool(self.ime_roots)

    @property
    def locked(self) -> bool:
        return bool(self.lock_roots)

    def main_root(self) -> Optional[int]:
        """The first window of an app: not the bars, the keyboard, a banner, the shade
        or the keyguard."""
        skip = self.chrome_roots | self.ime_roots | self.heads_up_roots | self.shade_roots | self.lock_roots
        return next((r for r in self.roots if r not in skip), None)

    def subtree(self, i: int) -> list[int]:
        out, stack = [], [i]
        while stack:
            j = stack.pop()
            out.append(j)
            stack.extend(reversed(self.children.get(j, [])))
        return sorted(out)


def node_key(e: UIElement) -> NodeKey:
    return (e.class_name, e.text, e.content_desc, e.resource_id, e.bounds, e.checked, e.selected,
            e.focused, e.enabled)


def _has_id(elements: list[UIElement], idx: list[int], ids: frozenset[str]) -> bool:
    return any(short_id(elements[j].resource_id) in ids for j in idx)


def _is_chrome(e: UIElement, sub: list[int], elements: list[UIElement], size: tuple[int, int]) -> bool:
    """Status bar / navigation bar: a thin system UI strip on an edge (phones move the
    navigation bar to the side in landscape), or a small system UI window holding
    their ids. A full-screen system UI window that merely contains a status bar (the
    shade, the keyguard) is not chrome."""
    if not is_systemui(e.package):
        return False
    k = knowledge()
    w, h = size
    x1, y1, x2, y2 = e.bounds
    if (x2 - x1) * (y2 - y1) < 0.25 * w * h and _has_id(elements, sub, k.chrome_ids):
        return True
    thin = (y2 - y1) <= 0.07 * max(w, h) or (x2 - x1) <= 0.1 * min(w, h)
    spans = (x1 <= 0 and x2 >= w - 1) or (y1 <= 0 and y2 >= h - 1)
    on_edge = y1 <= 0 or y2 >= h - 1 or x1 <= 0 or x2 >= w - 1
    return thin and spans and on_edge and not _has_id(elements, sub, k.heads_up_ids)


def _is_decoration(e: UIElement, sub: list[int], elements: list[UIElement], size: tuple[int, int]) -> bool:
    """A window of any package that only decorates the screen: a thin strip along an
    edge (gesture areas, an edge-panel handle, a floating ball), rounded-corner and
    cutout overlays, or a tiny window — with no text in it."""
    if any(elements[j].text for j in sub):
        return False
    k = knowledge()
    if _has_id(elements, sub[:1], k.decoration_ids):
        return True
    w, h = size
    x1, y1, x2, y2 = e.bounds
    bw, bh = x2 - x1, y2 - y1
    if bw * bh <= (0.03 if is_systemui(e.package) else 0.01) * w * h:
        return True  # a tiny window: a floating ball, a corner overlay
    side_strip = bw <= 0.08 * w and (x1 <= 0 or x2 >= w - 1)
    end_strip = bh <= 0.06 * h and (y1 <= 0 or y2 >= h - 1)
    return side_strip or end_strip


def _is_keyguard(e: UIElement, sub: list[int], elements: list[UIElement], size: tuple[int, int]) -> bool:
    """The lock screen or its PIN / pattern / password bouncer (blocking: it cannot be
    dismissed with a tap, only unlocked), a vendor keyguard app's lock screen, an always-on
    display's window, or a vendor's app lock (a fingerprint or privacy password asked before
    a locked app opens)."""
    k = knowledge()
    pkg = package_of(e.package)
    if pkg in k.always_on_display_packages:
        return True
    if pkg in k.keyguard_packages and _has_id(elements, sub, k.keyguard_ids | k.vendor_keyguard_ids):
        return True
    if pkg in k.app_lock_packages and _has_id(elements, sub, k.app_lock_ids):
        return True
    return is_systemui(e.package) and _has_id(elements, sub, k.keyguard_ids)


def _is_shade(e: UIElement, sub: list[int], elements: list[UIElement], size: tuple[int, int]) -> bool:
    if not is_systemui(e.package):
        return False
    # by id only: a full-screen system UI window may as well be a dialog over a scrim
    return _has_id(elements, sub, knowledge().shade_ids)


def _is_heads_up(e: UIElement, sub: list[int], elements: list[UIElement], size: tuple[int, int]) -> bool:
    """A system UI banner in the top part of the screen with some text."""
    if not is_systemui(e.package):
        return False
    w, h = size
    x1, y1, x2, y2 = e.bounds
    if _has_id(elements, sub, knowledge().heads_up_ids) and y1 < 0.35 * h:
        return True
    has_text = any(elements[j].text or elements[j].content_desc for j in sub)
    return has_text and y1 < 0.2 * h and (y2 - y1) < 0.3 * h


def analyse(obs: Observation) -> ScreenTree:
    elements = obs.elements
    size = tuple(obs.screen_size) if obs.screen_size else (1080, 2400)
    t = ScreenTree(size=size)  # type: ignore[arg-type]
    if not elements or obs.source != "tree":
        return t  # no tree: lines of text read from the screenshot are no window roots
    n = len(elements)
    t.root_of = [0] * n
    for i, e in enumerate(elements):
        p = e.parent
        if p is None or not (0 <= p < i):
            t.roots.append(i)
            t.root_of[i] = i
        else:
            t.root_of[i] = t.root_of[p]
            t.children.setdefault(p, []).append(i)
    by_root: dict[int, list[int]] = {}
    for i in range(n):
        by_root.setdefault(t.root_of[i], []).append(i)
    for r in t.roots:
        e, sub = elements[r], by_root[r]
        if is_ime(e.package):
            t.ime_roots.add(r)
        elif _is_chrome(e, sub, elements, t.size) or _is_decoration(e, sub, elements, t.size):
            t.chrome_roots.add(r)
        elif _is_keyguard(e, sub, elements, t.size):
            t.lock_roots.add(r)
        elif _is_shade(e, sub, elements, t.size):
            t.shade_roots.add(r)
        elif _is_heads_up(e, sub, elements, t.size):
            t.heads_up_roots.add(r)
    skip = t.chrome_roots | t.heads_up_roots
    t.content = [i for i in range(n) if t.root_of[i] not in skip]
    t.keys = frozenset(node_key(elements[i]) for i in t.content)
    t.signature = hash(tuple(node_key(elements[i]) for i in t.content))
    t.labels = frozenset((e.class_name, e.text, e.content_desc, e.resource_id)
                         for e in (elements[i] for i in t.content) if e.text or e.content_desc or e.resource_id)
    visible = [i for i in t.content if t.root_of[i] not in t.ime_roots]
    t.empty = not any(elements[i].informative for i in t.content)
    t.texts = [s for i in visible for s in (elements[i].text, elements[i].content_desc) if s]
    t.packages = {package_of(elements[i].package) for i in visible if elements[i].package}
    return t


screen_tree = cached("tree")(analyse)


def foreground_package(obs: Observation) -> str:
    """The foreground package: ``obs.foreground``, else the first app window's package."""
    if obs.foreground:
        return package_of(obs.foreground)
    t = screen_tree(obs)
    for r in t.roots:
        if r not in t.chrome_roots and r not in t.ime_roots and r not in t.heads_up_roots:
            return package_of(obs.elements[r].package)
    return ""


def tree_similarity(a: ScreenTree, b: ScreenTree) -> Optional[float]:
    """Jaccard similarity of the content node sets (None without trees)."""
    if not a.has_tree or not b.has_tree:
        return None
    if a.signature == b.signature:
        return 1.0
    union = len(a.keys | b.keys)
    return len(a.keys & b.keys) / union if union else 1.0


def label_similarity(a: ScreenTree, b: ScreenTree) -> Optional[float]:
    """Jaccard similarity of the labelled content nodes, ignoring positions (a scrolled
    page is still the same page). None without trees."""
    if not a.has_tree or not b.has_tree:
        return None
    union = len(a.labels | b.labels)
    return len(a.labels & b.labels) / union if union else 1.0


def element_at(obs: Observation, x: float, y: float) -> Optional[int]:
    """Index of the topmost element under the point that can take a tap (else any
    non-root element), skipping system chrome."""
    t = screen_tree(obs)
    best_any: Optional[int] = None
    for i in range(len(obs.elements) - 1, -1, -1):
        e = obs.elements[i]
        if t.root_of and t.root_of[i] in t.chrome_roots and not e.clickable:
            continue
        if not e.contains(x, y):
            continue
        if e.clickable or e.long_clickable or e.editable or e.checkable:
            return i
        if best_any is None and e.parent is not None:
            best_any = i
    return best_any


def deepest_at(obs: Observation, x: float, y: float) -> Optional[int]:
    """Index of the last (deepest, topmost) element containing the point."""
    for i in range(len(obs.elements) - 1, -1, -1):
        if obs.elements[i].contains(x, y):
            return i
    return None


def clickable_ancestor(obs: Observation, i: int) -> int:
    j: Optional[int] = i
    while j is not None:
        e = obs.elements[j]
        if e.clickable or e.long_clickable or e.editable:
            return j
        j = e.parent
    return i


def labels_around(obs: Observation, i: int, *, ids: bool = True) -> list[str]:
    """Labels that name element ``i``: its own, its clickable ancestor's and that
    ancestor's descendants' (a row's title), and its id read as words."""
    t = screen_tree(obs)
    anchor = clickable_ancestor(obs, i)
    idx = set(t.subtree(anchor)) | {i}
    j = obs.elements[i].parent
    while j is not None and j != anchor and j not in idx:
        idx.add(j)
        j = obs.elements[j].parent
    out: list[str] = []
    for k in sorted(idx):
        e = obs.elements[k]
        out.extend(s for s in (e.text, e.content_desc, e.hint) if s)
        sid = short_id(e.resource_id)
        if sid and ids:
            out.append(sid.replace("_", " "))
    return out
