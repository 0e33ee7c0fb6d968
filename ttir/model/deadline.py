"""One deadline for every model call of a guarded step, retries and backoff included,
and one budget of re-asks (a bad reply asked again with its parse error).

The guard opens ``model_deadline(vlm.step_deadline_s, reasks=vlm.reasks_per_step)``
around a step; the VLM client reads :func:`remaining_s` to shorten each attempt's
timeout and to give up rather than sleep past it, and :func:`take_reask` before it
re-asks. Context variables, so they follow the step into threads' callers and
asyncio tasks alike; nested deadlines keep the earlier one.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional

_DEADLINE: ContextVar[Optional[float]] = ContextVar("ttir_model_deadline", default=None)
_REASKS: ContextVar[Optional[list[int]]] = ContextVar("ttir_reasks_left", default=None)


@contextmanager
def model_deadline(seconds: Optional[float], reasks: Optional[int] = None) -> Iterator[None]:
    """Model calls inside share one deadline ``seconds`` from now (None: no deadline) and,
    with ``reasks``, that many re-asks of a bad reply between them."""
    token = _REASKS.set([reasks]) if reasks is not None else None
    try:
        if seconds is None:
            yield
            return
        outer = _DEADLINE.get()
        at = time.monotonic() + seconds
        deadline_token = _DEADLINE.set(at if outer is None else min(outer, at))
        try:
            yield
        finally:
            _DEADLINE.reset(deadline_token)
    finally:
        if token is not None:
            _REASKS.reset(token)


def take_reask(default: int = 1) -> bool:
    """Whether one more bad reply may be re-asked now (and count it). Outside a step's scope
    each call is its own step and may re-ask ``default`` times."""
    left = _REASKS.get()
    if left is None:
        return default > 0
    if left[0] <= 0:
        return False
    left[0] -= 1
    return True


def remaining_s() -> Optional[float]:
    """Seconds left before the current deadline (negative once passed), or None without one."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


@contextmanager
def paused_deadline() -> Iterator[None]:
    """Inside, no deadline applies (someone else's time: the wrapped agent's step and its own
    model calls); afterwards the deadline is pushed back by the time spent inside."""
    reasks = _REASKS.set(None)  # nor the step's re-asks: the agent's calls re-ask on their own account
    try:
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
    finally:
        _REASKS.reset(reasks)
