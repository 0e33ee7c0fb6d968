"""Editing a flat uiautomator element list as a tree: insert a window, add a
dialog under the app's window, replace a window, drop a subtree — and flatten
back with consistent ``parent`` indices and depths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from perturb.overlay.geometry import BAR_SHARE, SYSTEMUI
from ttir.core.types import UIElement


@dataclass(eq=False)
class TNode:
    el: UIElement
    children: list["TNode"] = field(default_factory=list)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def forest(elements: list[UIElement]) -> list[TNode]:
    nodes = [TNode(e) for e in elements]
    roots: list[TNode] = []
    for n, e in zip(nodes, elements):
        if e.parent is None or not (0 <= e.parent < len(nodes)):
            roots.append(n)
        else:
            nodes[e.parent].children.append(n)
    return roots


def flatten(roots: list[TNode]) -> list[UIElement]:
    out: list[UIElement] = []

    def emit(n: TNode, parent: Optional[int], depth: int) -> None:
        el = n.el
        if el.parent != parent or el.depth != depth:
            el = el.model_copy(update={"parent": parent, "depth": depth})
        out.append(el)
        me = len(out) - 1
        for c in n.children:
            emit(c, me, depth + 1)

    for r in roots:
        emit(r, None, 0)
    return out


def _is_bar(n: TNode, size: tuple[int, int]) -> bool:
    """A status bar or navigation bar window: a thin system UI strip (along the bottom or
    top, or down the side for three-button navigation in landscape)."""
    e = n.el
    w, h = size
    return e.package == SYSTEMUI and (e.height < h * BAR_SHARE or e.width < w * BAR_SHARE)


def window_insert_index(roots: list[TNode], size: tuple[int, int]) -> int:
    """Where a new window goes: above the app / keyboard / shade windows, below the
    trailing status and navigation bars (the order a dump lists windows in)."""
    i = len(roots)
    while i > 0 and _is_bar(roots[i - 1], size):
        i -= 1
    return i


def app_window(roots: list[TNode], package: Optional[str]) -> Optional[int]:
    for i, r in enumerate(roots):
        if package and r.el.package == package:
            return i
    return None


def prune(roots: list[TNode], keep: Callable[[TNode], bool]) -> list[TNode]:
    """Drop every subtree whose root fails ``keep`` (recursively)."""
    out = []
    for r in roots:
        if keep(r):
            r.children = prune(r.children, keep)
            out.append(r)
    return out


def nodes_from(elements: list[UIElement]) -> list[TNode]:
    """Freshly exported overlay elements (their own parent indices) as a forest."""
    return forest(elements)
