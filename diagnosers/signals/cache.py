"""The per-observation cache shared by the four diagnosers.

Histories repeat the same observations step after step, so features (thumbnail,
perceptual hash, tree signature, overlay candidates) are computed once per
observation object (see :class:`ttir.core.obs_cache.ObservationCache`).
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from ttir.core.obs_cache import MAX_ENTRIES, ObservationCache

__all__ = ["CACHE", "MAX_ENTRIES", "ObservationCache", "cached"]

T = TypeVar("T")

CACHE = ObservationCache()


def cached(key: str) -> Callable[[Callable[[Any], T]], Callable[[Any], T]]:
    """Decorator: a one-argument feature function of an observation, cached per observation."""

    def wrap(fn: Callable[[Any], T]) -> Callable[[Any], T]:
        def inner(obs: Any) -> T:
            return CACHE.get(obs, key, fn)

        inner.__name__ = fn.__name__
        inner.__doc__ = fn.__doc__
        inner.uncached = fn  # type: ignore[attr-defined]
        return inner

    return wrap
