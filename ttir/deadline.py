"""One deadline for every model call of a guarded step, retries and backoff included.

The guard opens ``model_deadline(vlm.step_deadline_s)`` around a step; the VLM
client reads :func:`remaining_s` to shorten each attempt's timeout and to give up
rather than sleep past it. A context variable, so it follows the step into
threads' callers and asyncio tasks alike; nested deadlines keep the earlier one.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional

_DEADLINE: ContextVar[Optional[float]] = ContextVar("ttir_model_deadline", default=None)


@contextmanager
def model_deadline(seconds: Optional[float]) -> Iterator[None]:
    """Model calls inside share one deadline ``seconds`` from now (None: no deadline)."""
    if seconds is None:
        yield
        return
    outer = _DEADLINE.get()
    at = time.monotonic() + seconds
    token = _DEADLINE.set(at if outer is None else min(outer, at))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining_s() -> Optional[float]:
    """Seconds left before the current deadline (negative once passed), or None without one."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


@contextmanager
def paused_deadline() -> Iterator[None]:
    """Inside, no deadline applies (someone else's time: the wrapped agent's step and its own
    model calls); afterwards the deadline is pushed back by the time spent inside."""
    at = _DEADLINE.get()
    if at is None:
        yield
        return
    started = time.monotonic()
    token = _DEADLINE.set(None)
    try:
        yield
    finally:
        _DEADLINE.reset(token)
        _DEADLINE.set(at + (time.monotonic() - started))
