"""Did the screen change between two observations? Combines the UI-tree content
signature (chrome and heads-up banners ignored) with thumbnail pixel differences
(status bar and banner boxes ignored) and the foreground package."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Optional

from diagnosers.signals import image
from diagnosers.signals.cache import CACHE
from diagnosers.signals.tree import foreground_package, screen_tree, tree_similarity
from ttir.core.types import Bounds, Observation


@dataclass
class ScreenChange:
    tree_similarity: Optional[float]  # None without both trees
    pixels: Optional[int]  # changed thumbnail pixels, None without both screenshots
    hash_distance: Optional[int]
    foreground_changed: bool

    @property
    def known(self) -> bool:
        """Whether anything could be compared at all."""
        return self.tree_similarity is not None or self.pixels is not None

    @property
    def tree_changed(self) -> Optional[bool]:
        return None if self.tree_similarity is None else self.tree_similarity < 1.0

    @property
    def changed(self) -> bool:
        """Any visible change: tree content, enough pixels, or the foreground app."""
        return bool(self.foreground_changed or self.tree_changed
                    or (self.pixels is not None and self.pixels >= image.MIN_CHANGED_PIXELS))

    def same_screen(self, max_hash_distance: int, min_tree_similarity: float = 1.0) -> Optional[bool]:
        """The stuck-loop notion of 'unchanged': hash within ``max_hash_distance`` and the
        tree content (almost) equal. None when nothing could be compared."""
        if not self.known:
            return None
        if self.foreground_changed:
            return False
        if self.tree_similarity is not None and self.tree_similarity < min_tree_similarity:
            return False
        if self.hash_distance is not None and self.hash_distance > max_hash_distance:
            return False
        return True


def volatile_boxes(obs: Observation) -> tuple[Bounds, ...]:
    """Screen boxes whose pixels say nothing about the app: status/navigation bar,
    heads-up banners (from the tree), or the top strip when there is no tree."""
    t = screen_tree(obs)
    if not t.has_tree:
        w, h = obs.screen_size
        return ((0, 0, w, int(0.035 * max(w, h))),)
    return tuple(obs.elements[r].bounds for r in (t.chrome_roots | t.heads_up_roots))


def compare(before: Observation, after: Observation) -> ScreenChange:
    """How ``after`` differs from ``before`` (cached on ``after``)."""
    slot = CACHE.slot(after)
    key = ("compare", id(before))
    hit = slot.get(key)
    if hit is not None and hit[0]() is before:
        return hit[1]
    result = _compare(before, after)
    try:
        slot[key] = (weakref.ref(before), result)
    except TypeError:
        pass
    return result


def _compare(before: Observation, after: Observation) -> ScreenChange:
    sim = tree_similarity(screen_tree(before), screen_tree(after))
    ignore = volatile_boxes(before) + volatile_boxes(after)
    fa, fb = foreground_package(before), foreground_package(after)
    return ScreenChange(
        tree_similarity=sim,
        pixels=image.changed_pixels(before, after, ignore=ignore),
        hash_distance=image.hash_distance(before, after),
        foreground_changed=bool(fa and fb and fa != fb),
    )
