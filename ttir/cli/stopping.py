"""How the long-running commands (serve-adb, proxy, watch) stop: Ctrl-C or SIGTERM, then they
print what they did. One place, so each of them restores the previous handlers and none
misses a SIGTERM that arrives just after it announced itself.

A command started in the background by a script (``ttir proxy … &``) inherits SIGINT ignored
(POSIX, where the shell has no job control), and Python then never turns it into
KeyboardInterrupt: ``kill -INT`` and Ctrl-C would do nothing, and the command would keep its
port until SIGKILL. So within the block SIGINT always interrupts."""

from __future__ import annotations

import signal
import threading
from types import TracebackType
from typing import Any, Optional


def _interrupt(signum: int, frame: Any) -> None:
    """SIGINT where it was inherited ignored: a KeyboardInterrupt, as in a terminal."""
    raise KeyboardInterrupt


class StopSignal:
    """``with StopSignal() as stop:`` — SIGTERM sets :attr:`event` from the moment the block is entered,
    and SIGINT raises KeyboardInterrupt even where it was inherited ignored (on the main thread;
    elsewhere only Ctrl-C and the event itself stop it); the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._previous: Optional[Any] = None
        self._previous_interrupt: Optional[Any] = None
        self._installed = False

    def __enter__(self) -> "StopSignal":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, lambda *_: self.event.set())
            if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:  # a handler of the program's own stays
                self._previous_interrupt = signal.signal(signal.SIGINT, _interrupt)
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
            if self._previous_interrupt is not None and signal.getsignal(signal.SIGINT) is _interrupt:
                signal.signal(signal.SIGINT, self._previous_interrupt)
            self._previous_interrupt = None
            self._installed = False
