"""Talking to adb: find (or start) the server, pick the device, run shell
commands with retries. adbutils is imported lazily: ``ttir --help`` stays fast."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from typing import Any, Callable, Optional, Sequence

from loguru import logger
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from benchmark.device import DeviceError
from benchmark.devices.adb.parse import explain_adb_error

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5037
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def server_address(host: Optional[str] = None, port: Optional[int] = None) -> tuple[str, int]:
    """The adb server address: arguments, else ANDROID_ADB_SERVER_HOST/PORT, else 127.0.0.1:5037."""
    host = host or os.environ.get("ANDROID_ADB_SERVER_HOST") or DEFAULT_HOST
    if port is None:
        raw = os.environ.get("ANDROID_ADB_SERVER_PORT", str(DEFAULT_PORT))
        if not raw.isdigit():
            raise ValueError(f"ANDROID_ADB_SERVER_PORT={raw!r} is not a port number")
        port = int(raw)
    if not 0 < int(port) < 65536:
        raise ValueError(f"port={port!r} is not a TCP port (1..65535)")
    return host, int(port)


def server_listening(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def ensure_server(host: str, port: int, *, start: bool = True) -> None:
    """Make sure an adb server answers at host:port, starting adbutils' bundled adb if allowed."""
    if server_listening(host, port):
        return
    if start and host in _LOCAL_HOSTS:
        from adbutils import adb_path

        binary = adb_path()
        logger.info(f"no adb server on {host}:{port}; starting one ({binary} -P {port} start-server)")
        try:
            subprocess.run([binary, "-P", str(port), "start-server"], timeout=30, check=False,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except (OSError, subprocess.SubprocessError) as exc:
            raise DeviceError(f"could not start the adb server ({binary}): {exc}") from exc
        if server_listening(host, port, timeout=3.0):
            return
    how = (
        "start it with `adb start-server`, or let ttir start one (start_server=True; `ttir doctor` without --no-start-server)"
        if not start and host in _LOCAL_HOSTS
        else "check that it runs there and that the address is right"
    )
    raise DeviceError(f"the adb server at {host}:{port} is not reachable: {how}")


def pick_serial(requested: Optional[str], attached: Sequence[tuple[str, str]]) -> str:
    """Choose the device: ``requested``, else ANDROID_SERIAL, else the only one attached.

    ``attached`` is ``[(serial, state), …]`` as ``adb devices`` lists them.
    Raises DeviceError saying what is wrong and what to do.
    """
    serial = requested or os.environ.get("ANDROID_SERIAL") or None
    states = dict(attached)
    listing = ", ".join(f"{s} ({st})" for s, st in attached) or "none"
    if serial is not None:
        state = states.get(serial)
        if state is None:
            explanation = explain_adb_error("not found", serial)
            raise DeviceError(f"{explanation[0] if explanation else serial} Attached devices: {listing}.")
        _check_state(serial, state)
        return serial
    ready = [s for s, st in attached if st == "device"]
    if len(ready) == 1:
        return ready[0]
    if len(ready) > 1:
        raise DeviceError(
            f"several devices are attached ({', '.join(ready)}); choose one with serial=... "
            "(`ttir doctor --serial S`) or set ANDROID_SERIAL"
        )
    for s, st in attached:
        _check_state(s, st)
    raise DeviceError(
        "no Android device is attached: connect a phone with USB debugging on (Settings → Developer options) "
        "or start an emulator; `adb devices` should then list it"
    )


def _check_state(serial: str, state: str) -> None:
    if state == "device":
        return
    explanation = explain_adb_error(state, serial)
    raise DeviceError(explanation[0] if explanation else f"device {serial} is in state {state!r}, not ready")


def connect(
    serial: Optional[str] = None,
    *,
    host: Optional[str] = None,
    port: Optional[int] = None,
    start_server: bool = True,
    socket_timeout: float = 60.0,
) -> Any:
    """An adbutils device for the chosen phone/emulator (see :func:`pick_serial`)."""
    import adbutils

    host, port = server_address(host, port)
    ensure_server(host, port, start=start_server)
    client = adbutils.AdbClient(host=host, port=port, socket_timeout=socket_timeout)
    try:
        attached = [(d.serial, d.state) for d in client.list()]
    except (adbutils.AdbError, OSError) as exc:
        raise DeviceError(f"the adb server at {host}:{port} did not list devices: {exc}") from exc
    chosen = pick_serial(serial, attached)
    logger.debug(f"adb: using {chosen} (attached: {attached})")
    return client.device(chosen)


def _adb_errors() -> tuple[type[BaseException], ...]:
    try:
        from adbutils import AdbError

        return (AdbError, OSError, EOFError)
    except ImportError:  # pragma: no cover - adbutils is a dependency
        return (OSError, EOFError)


class AdbShell:
    """Runs shell commands on one device, retrying transient transport errors
    with exponential backoff and turning the rest into plain-words DeviceErrors.

    ``device`` is an ``adbutils.AdbDevice`` (or anything with the same
    ``shell(cmd, timeout=…, encoding=…)`` and ``serial``).
    """

    def __init__(
        self,
        device: Any,
        *,
        attempts: int = 3,
        backoff_seconds: float = 0.5,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if attempts < 1:
            raise ValueError(f"attempts={attempts} must be >= 1")
        self.device = device
        self.serial: str = str(getattr(device, "serial", "") or "")
        self.attempts = attempts
        self.backoff_seconds = backoff_seconds
        self.timeout = timeout
        self._sleep = sleep
        self._errors = _adb_errors()

    def run(self, command: str, *, timeout: Optional[float] = None) -> str:
        out = self._call(command, timeout, "utf-8")
        return out if isinstance(out, str) else out.decode("utf-8", "replace")

    def run_bytes(self, command: str, *, timeout: Optional[float] = None) -> bytes:
        out = self._call(command, timeout, None)
        return out if isinstance(out, bytes) else out.encode("utf-8")

    def _transient(self, exc: BaseException) -> bool:
        if not isinstance(exc, self._errors):
            return False
        explanation = explain_adb_error(str(exc), self.serial)
        return explanation is None or explanation[1]

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        logger.warning(f"adb {self.serial}: attempt {state.attempt_number} failed ({exc}); retrying")

    def _call(self, command: str, timeout: Optional[float], encoding: Optional[str]) -> Any:
        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.backoff_seconds, max=8),
            retry=retry_if_exception(self._transient),
            sleep=self._sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self.device.shell(command, timeout=timeout or self.timeout, encoding=encoding)
        except self._errors as exc:
            explanation = explain_adb_error(str(exc), self.serial)
            if explanation is not None:
                raise DeviceError(explanation[0]) from exc
            raise DeviceError(
                f"adb command {command!r} on {self.serial or 'the device'} failed after "
                f"{self.attempts} attempt(s): {exc}"
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover
