"""A per-observation cache: compute a feature once per observation object.

Histories repeat the same observations step after step (in the guard's diagnosers
and in the reference agents alike). Entries are keyed by ``id(obs)`` and guarded
by a weak reference, so a recycled id never returns another observation's value
and the cache never keeps a screenshot alive.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, TypeVar

T = TypeVar("T")

MAX_ENTRIES = 256


class ObservationCache:
    """``get(obs, key, compute)``: ``compute(obs)`` once per (observation, key)."""

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: "OrderedDict[int, tuple[weakref.ref, dict[str, Any]]]" = OrderedDict()
        self._lock = threading.Lock()

    def slot(self, obs: Any) -> dict[str, Any]:
        """The mutable feature dict of ``obs`` (created empty on first use)."""
        key = id(obs)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is obs:
                self._entries.move_to_end(key)
                return entry[1]
            try:
                ref = weakref.ref(obs)
            except TypeError:  # not weak-referenceable: no caching
                return {}
            slot: dict[str, Any] = {}
            self._entries[key] = (ref, slot)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return slot

    def get(self, obs: Any, key: str, compute: Callable[[Any], T]) -> T:
        slot = self.slot(obs)
        if key in slot:
            return slot[key]
        value = compute(obs)
        slot[key] = value
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
