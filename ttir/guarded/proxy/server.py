"""``AdbProxy``: an adb device on a TCP port that is a real device behind the guard.

The agent connects (``adb connect 127.0.0.1:PORT``) and drives the proxy as it would the
device; every stream is forwarded to the device through the adb server
(``benchmark.devices.adbd.forward``: the adbd side ``serve-adb`` speaks, with a forwarding
phone plugged in). What the proxy adds, per stream (:class:`ProxyHooks`):

- a command line that runs ``input`` waits for :meth:`ProxyGuard.before_input`;
- a command that dumps or reads a UI dump (``uiautomator dump``, ``cat``), and a ``sync:``
  pull of an ``.xml`` file, has its reply kept as the agent's latest screen;
- any other command that may change the screen (``am start``, ``monkey`` …), an interactive
  shell, or a service the proxy does not know marks that screen stale.

Bytes pass unchanged both ways; a held-back command is the only reply the proxy writes
itself. The proxy runs nothing on the host: service names only ever go to the device.

:class:`AdbPhone` is the device as the guard uses it (``uiautomator dump`` through adb, and
its recovery actions as ``input`` commands).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from benchmark.devices.adbd.forward import (
    ForwardedPhone,
    StreamTap,
    adb_server_opener,
    device_banner,
    service_command,
    service_kind,
)
from ttir.core.config import TTIRConfig
from ttir.core.types import Action, Observation
from ttir.guarded.proxy.commands import changes_screen, dumps_screen, input_actions, reads_screen
from ttir.guarded.proxy.guard import ProxyGuard, ProxyIntervention
from ttir.guarded.proxy.screens import ReplyReader, ScreenCache, SyncReader

DEVICE_ACTIONS = ("open_app", "wait", "status", "answer")  # performed by the device object, not as input commands


class AdbPhone:
    """A device behind the adb server, as the proxy's guard uses it.

    Args:
        device: a ``benchmark.devices.AdbDevice`` on the real device (not the proxy).
    """

    def __init__(self, device: Any):
        self.device = device

    def observe(self) -> Observation:
        xml = self.device.dump_xml()
        if xml is None:
            raise RuntimeError(f"uiautomator dump failed on {self.device.serial}: {self.device.last_dump_error}")
        return Observation.from_xml(xml)

    def perform(self, action: Action, obs: Observation) -> None:
        from benchmark.devices.adb.actions import Pause, Screen, plan
        from benchmark.devices.adb.parse import command_failed

        if action.action_type in DEVICE_ACTIONS:
            self.device.execute(action)
            return
        for step in plan(action, Screen(obs.screen_size, obs.elements), sdk=lambda: self.device.sdk):
            if isinstance(step, Pause):
                time.sleep(step.seconds)
                continue
            problem = command_failed(self.device.shell(step))
            if problem:
                raise RuntimeError(f"the device refused `{step}`: {problem}")


class _InputTap:
    def __init__(self, guard: ProxyGuard, command: str):
        self.guard, self.command = guard, command

    def before(self) -> Optional[str]:
        return self.guard.before_input(self.command)

    def sent(self, data: bytes) -> None:
        pass

    def received(self, data: bytes) -> None:
        pass

    def ended(self) -> None:
        pass


class _ScreenTap:
    """Keeps the UI dump a stream carries; ``taken_after``: the inputs counted when the dump it
    carries was taken (None: ask the hooks at the end, for a ``cat`` / pull of an earlier dump)."""

    def __init__(self, hooks: "ProxyHooks", reader: Any, taken_after: Optional[int]):
        self.hooks, self.reader, self.taken_after = hooks, reader, taken_after

    def before(self) -> Optional[str]:
        return None

    def sent(self, data: bytes) -> None:
        if isinstance(self.reader, SyncReader):
            self.reader.sent(data)

    def received(self, data: bytes) -> None:
        (self.reader.received if isinstance(self.reader, SyncReader) else self.reader.feed)(data)

    def ended(self) -> None:
        xml = self.reader.dump()
        if xml is not None:
            taken = self.taken_after if self.taken_after is not None else self.hooks.last_dump
            self.hooks.cache.put(xml, taken)


class _Changes:
    """A stream that may change the screen: the pulled screen is stale from its start, and
    again at each byte the client sends (an interactive shell)."""

    def __init__(self, cache: ScreenCache, each_write: bool):
        self.cache, self.each_write = cache, each_write

    def before(self) -> Optional[str]:
        self.cache.changed()
        return None

    def sent(self, data: bytes) -> None:
        if self.each_write:
            self.cache.changed()

    def received(self, data: bytes) -> None:
        pass

    def ended(self) -> None:
        if self.each_write:
            self.cache.changed()


class ProxyHooks:
    """What the proxy does with each stream (see the module docstring)."""

    def __init__(self, guard: ProxyGuard, cache: ScreenCache):
        self.guard, self.cache = guard, cache
        self.last_dump = -1  # the inputs counted when the agent's last `uiautomator dump` started
        self._lock = threading.Lock()

    def tap(self, name: str) -> Optional[StreamTap]:
        kind = service_kind(name)
        if kind == "sync":
            return _ScreenTap(self, SyncReader(), None)
        command = service_command(name)
        if command is None:  # an interactive shell, or a service that is not a command
            return _Changes(self.cache, each_write=kind in ("shell", "shell_v2"))
        if input_actions(command) is not None:
            return _InputTap(self.guard, command)
        if dumps_screen(command):
            with self._lock:
                self.last_dump = self.cache.inputs
            if changes_screen(command):
                self.cache.changed()
            return _ScreenTap(self, ReplyReader(v2=kind == "shell_v2"), self.cache.inputs)
        if changes_screen(command):
            return _Changes(self.cache, each_write=False)
        if reads_screen(command):
            return _ScreenTap(self, ReplyReader(v2=kind == "shell_v2"), None)
        return None


class AdbProxy:
    """The real device ``serial`` served on ``host:port`` behind the guard.

    Args:
        serial: the device, as the adb server lists it (``adb devices``).
        port: the TCP port to serve on (0: any free one; see :attr:`port`).
        host: the address to listen on (default this machine only).
        goal: the task, when known (task alignment runs only with one).
        config: the guard's config.
        adb_host: the adb server's address (default ``ANDROID_ADB_SERVER_HOST`` or 127.0.0.1).
        adb_port: its port (default ``ANDROID_ADB_SERVER_PORT`` or 5037).
        settle_s: seconds waited after each recovery action before looking again.
        fresh_s: how long a screen the agent pulled stays fresh at most.
        on_intervention: called with each :class:`ProxyIntervention`.
    """

    def __init__(self, serial: str, *, port: int = 0, host: str = "127.0.0.1", goal: str = "",
                 config: Optional[TTIRConfig] = None, adb_host: Optional[str] = None, adb_port: Optional[int] = None,
                 settle_s: float = 0.3, fresh_s: float = 5.0,
                 on_intervention: Optional[Callable[[ProxyIntervention], None]] = None):
        from benchmark.devices import AdbDevice
        from benchmark.devices.adb.transport import ensure_server, server_address
        from benchmark.devices.adbd import AdbDaemon

        if not serial or not isinstance(serial, str):
            raise ValueError(f"serial={serial!r}: expected the device's adb serial (see `adb devices`)")
        server_host, server_port = server_address(adb_host, adb_port)
        ensure_server(server_host, server_port)
        device = AdbDevice(serial, host=server_host, port=server_port, settle_seconds=0, action_settle_seconds=0,
                           journal_dir=None)
        self.serial = serial
        self.cache = ScreenCache(max_age_s=fresh_s)
        self.guard = ProxyGuard(AdbPhone(device), config, goal=goal, cache=self.cache,
                                on_intervention=on_intervention, settle_s=settle_s)
        self.hooks = ProxyHooks(self.guard, self.cache)
        phone = ForwardedPhone(serial, adb_server_opener(serial, server_host, server_port),
                               device_banner(serial, server_host, server_port), self.hooks)
        self.daemon = AdbDaemon(phone, host=host, port=port)

    @property
    def port(self) -> int:
        return self.daemon.port

    @property
    def address(self) -> str:
        return self.daemon.address

    def start(self) -> "AdbProxy":
        self.daemon.start()
        return self

    def close(self) -> None:
        """Stop listening and hang up on every client."""
        self.daemon.close()

    def summary(self) -> dict[str, Any]:
        """The guard's figures so far (:meth:`ProxyGuard.summary`)."""
        return self.guard.summary()

    def __enter__(self) -> "AdbProxy":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["AdbPhone", "AdbProxy", "ProxyHooks"]
