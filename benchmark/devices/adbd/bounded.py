"""A function run in a process of its own, under a time limit.

Python's ``re`` holds the interpreter for the whole of a match, and a pattern such as
``(a+)+$`` can backtrack for minutes: in ``serve-adb`` one client's ``grep`` would stop
every phone the server holds. :func:`run_bounded` runs such work in a forked child process
and kills it at the limit. Forked, not spawned: a spawned child re-imports the caller's main
script (a user's script without a ``__main__`` guard would run again), and the child here
only computes and answers through a pipe, taking no lock another thread may hold.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
from typing import Any, Callable, Optional

_LOCK = threading.Lock()
_CONTEXT: Optional[Any] = None


def _context() -> Any:
    global _CONTEXT
    with _LOCK:
        if _CONTEXT is None:
            methods = mp.get_all_start_methods()
            _CONTEXT = mp.get_context("fork" if "fork" in methods else "spawn")
        return _CONTEXT


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send((True, fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        conn.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_bounded(fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> Any:
    """``fn(*args)`` in a child process, given at most ``timeout_s`` seconds.

    Args:
        fn: a module-level function (it is pickled to the child), as are ``args`` and its result.
        args: its arguments.
        timeout_s: the limit, from the child's start to its answer.

    Returns:
        What ``fn`` returned.

    Raises:
        TimeoutError: it ran past the limit (the child is killed).
        RuntimeError: it raised (the message names the exception), or the child died.
    """
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(send, fn, args), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(timeout_s):
            raise TimeoutError(f"{getattr(fn, '__name__', fn)} ran past {timeout_s:g} s")
        try:
            ok, value = receive.recv()
        except EOFError:
            raise RuntimeError(f"{getattr(fn, '__name__', fn)}: its process died (exit {child.exitcode})") from None
        if not ok:
            raise RuntimeError(value)
        return value
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receive.close()
