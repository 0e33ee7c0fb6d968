"""Put phones back the way they were when the process ends unexpectedly.

Devices with changed settings register a restore callback here. The callbacks
run at interpreter exit (atexit) and on SIGINT/SIGTERM; after restoring, the
signal goes on to whatever handler was installed before (Python's
KeyboardInterrupt for SIGINT, the default "terminate" for SIGTERM), so the
process still ends the way it would have.

A signal the process ignores is left ignored: a program started with ``&`` from a
script ignores SIGINT, so a Ctrl-C in that terminal does not stop it, and restoring
then would take the settings from under the episodes it goes on running. Its
settings are restored when it does end (exit, SIGTERM).
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from typing import Any, Callable

from loguru import logger

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_restorers: dict[int, Callable[[str], None]] = {}
_previous: dict[int, Any] = {}
_lock = threading.RLock()
_atexit_installed = False


def register(key: int, restore: Callable[[str], None]) -> None:
    """Run ``restore(reason)`` at exit or on SIGINT/SIGTERM until :func:`unregister`."""
    with _lock:
        _restorers[key] = restore
        _install()


def unregister(key: int) -> None:
    with _lock:
        _restorers.pop(key, None)


def registered() -> int:
    return len(_restorers)


def restore_all(reason: str) -> None:
    """Run every registered restore callback once; errors are logged, never raised."""
    with _lock:
        pending = list(_restorers.items())
    for key, restore in pending:
        try:
            restore(reason)
        except Exception as exc:  # noqa: BLE001 - a failing device must not stop the others
            logger.error(f"restoring device settings ({reason}) failed: {exc}")
        finally:
            unregister(key)


def _install() -> None:
    global _atexit_installed
    if not _atexit_installed:
        atexit.register(restore_all, "interpreter exit")
        _atexit_installed = True
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still covers us
    for sig in SIGNALS:
        current = signal.getsignal(sig)
        if current is _on_signal or current == signal.SIG_IGN:
            continue  # an ignored signal does not stop the program: nothing to restore on it
        _previous[sig] = current
        try:
            signal.signal(sig, _on_signal)
        except (ValueError, OSError) as exc:  # e.g. embedded interpreters
            logger.debug(f"cannot handle {signal.Signals(sig).name}: {exc}")


def _on_signal(signum: int, frame: Any) -> None:
    name = signal.Signals(signum).name
    if _restorers:
        logger.warning(f"{name} received: restoring device settings before stopping")
        restore_all(name)
    previous = _previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    # The default action (terminate): re-deliver the signal with the default handler,
    # so the exit status still says "killed by SIGTERM".
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
