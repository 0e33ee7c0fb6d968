"""How the long-running commands (serve-adb, proxy, watch) stop: Ctrl-C or SIGTERM, then they
print what they did. One place, so each of them restores the previous SIGTERM handler and none
misses a SIGTERM that arrives just after it announced itself."""

from __future__ import annotations

import signal
import threading
from types import TracebackType
from typing import Any, Optional


class StopSignal:
    """``with StopSignal() as stop:`` — SIGTERM sets :attr:`event` from the moment the block is entered
    (on the main thread; elsewhere only Ctrl-C and the event itself stop it); the previous handler
    comes back on exit."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._previous: Optional[Any] = None
        self._installed = False

    def __enter__(self) -> "StopSignal":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, lambda *_: self.event.set())
            self._installed = True
        return self

    def wait(self) -> None:
        """Block until SIGTERM or Ctrl-C (a KeyboardInterrupt ends the wait, it is not an error)."""
        try:
            while not self.event.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass

    def __exit__(self, kind: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)
