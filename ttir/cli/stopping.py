"""How the long-running commands (serve-adb, proxy, watch) stop: Ctrl-C or SIGTERM, then they
print what they did. One place, so each of them restores the previous handlers and none
misses a stop signal that arrives just after it announced itself.

A first Ctrl-C asks the command to stop, as SIGTERM does: it sets an event the command waits on,
so a signal that lands between the announcement and the wait is not lost, and ``watch`` ends
its check before it stops. A second Ctrl-C raises KeyboardInterrupt at once. This holds also
where SIGINT was inherited ignored: a command started in the background of a script
(``ttir proxy … &``, no job control) gets it so from POSIX, and Python then never turns it into
KeyboardInterrupt, which left ``kill -INT`` without effect and the port held until SIGKILL."""

from __future__ import annotations

import signal
import threading
from types import TracebackType
from typing import Any, Optional


class StopSignal:
    """``with StopSignal() as stop:`` — from the moment the block is entered, SIGTERM and a first
    Ctrl-C set :attr:`event`, and a second Ctrl-C raises KeyboardInterrupt (on the main thread;
    elsewhere only Ctrl-C and the event itself stop it). A SIGINT handler of the program's own is
    left alone; the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._previous: Optional[Any] = None
        self._previous_interrupt: Optional[Any] = None
        self._installed = False

    def __enter__(self) -> "StopSignal":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, lambda *_: self.event.set())
            if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, signal.SIG_IGN):
                self._previous_interrupt = signal.signal(signal.SIGINT, self._interrupt)
            self._installed = True
        return self

    def _interrupt(self, signum: int, frame: Any) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt  # a second Ctrl-C: stop now, whatever the command is doing
        self.event.set()

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
            if self._previous_interrupt is not None and signal.getsignal(signal.SIGINT) == self._interrupt:
                signal.signal(signal.SIGINT, self._previous_interrupt)
            self._previous_interrupt = None
            self._installed = False
