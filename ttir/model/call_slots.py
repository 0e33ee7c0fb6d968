"""How many model calls may be in flight at once, per endpoint, in this process.

A hundred guarded episodes stepping together send a hundred calls at once; an endpoint (or
the proxy before it) refuses or resets many of them, and each refusal is a failed step. The
slots here make a burst wait its turn instead: :func:`slot` (sync) and :func:`aslot`
(async) hold one of ``limit`` slots for the endpoint while a call is in flight. The wait
counts against the step's deadline (:mod:`ttir.model.deadline`): past it, the call is not sent
and :class:`SlotTimeout` says so.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from typing import AsyncIterator, Iterator, Optional

from ttir.model.deadline import remaining_s

_POLL_S = 0.005  # an async waiter's look at the slots (a thread's semaphore cannot be awaited)
_LOCK = threading.Lock()
_SLOTS: dict[tuple[str, int], threading.BoundedSemaphore] = {}


class SlotTimeout(TimeoutError):
    """The step's deadline passed while the call waited for a free slot (nothing was sent)."""


def _semaphore(endpoint: str, limit: int) -> threading.BoundedSemaphore:
    with _LOCK:
        sem = _SLOTS.get((endpoint, limit))
        if sem is None:
            sem = _SLOTS[(endpoint, limit)] = threading.BoundedSemaphore(limit)
        return sem


def _timeout() -> Optional[float]:
    left = remaining_s()
    return None if left is None else max(0.0, left)


@contextmanager
def slot(endpoint: str, limit: int) -> Iterator[None]:
    """Hold one of ``limit`` call slots for ``endpoint`` (sync).

    Args:
        endpoint: the endpoint's base URL (and model): calls to different endpoints do not wait for each other.
        limit: slots for it in this process.

    Raises:
        SlotTimeout: the step's deadline passed before a slot was free.
    """
    sem = _semaphore(endpoint, limit)
    timeout = _timeout()
    if not sem.acquire(timeout=timeout):
        raise SlotTimeout(f"{limit} model calls to {endpoint} were in flight until the step's deadline")
    try:
        yield
    finally:
        sem.release()


@asynccontextmanager
async def aslot(endpoint: str, limit: int) -> AsyncIterator[None]:
    """The async twin of :func:`slot`: waits without blocking the event loop."""
    sem = _semaphore(endpoint, limit)
    timeout = _timeout()
    end = None if timeout is None else time.monotonic() + timeout
    while not sem.acquire(blocking=False):
        if end is not None and time.monotonic() >= end:
            raise SlotTimeout(f"{limit} model calls to {endpoint} were in flight until the step's deadline")
        await asyncio.sleep(_POLL_S)
    try:
        yield
    finally:
        sem.release()
