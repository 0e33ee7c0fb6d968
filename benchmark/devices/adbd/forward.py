"""The adbd side of a proxy: every stream an adb host opens is forwarded to a real device
through the adb server (``host:transport:SERIAL``, then the same service name), and the
bytes are pumped both ways unchanged.

- :class:`StreamHooks` — what the owner of the proxy may do with a stream: run something
  before it opens (and hold it back with a message), and see its bytes both ways;
- :class:`ForwardedPhone` — the "phone" an :class:`~benchmark.devices.adbd.AdbDaemon`
  serves: the real device's identity (its CNXN banner) and ``open_service``, which makes a
  :class:`Forward` per stream;
- :class:`Forward` — one forwarded stream: a thread of its own opens the upstream socket
  and pumps the device's reply to the client, one WRTE at a time (it waits for each
  OKAY, so a client that stops reading holds at most one payload of it in memory); a
  second thread writes what the client sends to the device and only then acknowledges it
  (the client waits for that OKAY), so a slow device slows its own stream and never the
  connection's thread, which the other streams share;
- :func:`held_reply` — the bytes a held-back command answers (a stderr packet and exit
  status 1 on ``shell,v2``; the message alone on ``shell:`` / ``exec:``).

Nothing here runs a command on the host: a service name is only ever sent to the device.
"""

from __future__ import annotations

import queue
import socket
import threading
from typing import Any, Callable, Literal, Optional, Protocol, get_args

from loguru import logger

from benchmark.devices.adbd import wire
from benchmark.devices.adbd.services import ID_EXIT, ID_STDERR, Service, v2_packet

TRANSPORT_FEATURES = frozenset({"delayed_ack"})  # change the transport itself, which this adbd side does not speak
MAX_FORWARDS = 64  # forwarded streams open at once on one connection (the adb server opens a few)
UPSTREAM_TIMEOUT_S = 30.0  # opening the device's stream, and one write to it
DRAIN_TIMEOUT_S = 120.0  # a client that stops acknowledging the reply for this long loses its stream
ServiceKind = Literal["shell_v2", "shell", "exec", "sync", "other"]  # what an OPEN asks for
SERVICE_KINDS: tuple[str, ...] = get_args(ServiceKind)
COMMAND_SERVICES: tuple[str, ...] = SERVICE_KINDS[:3]  # the services that run a command line


def service_kind(name: str) -> ServiceKind:
    """``shell_v2`` / ``shell`` / ``exec`` / ``sync`` / ``other`` for an OPEN payload."""
    if name.startswith("exec:"):
        return "exec"
    if name == "sync:":
        return "sync"
    if name.startswith("shell"):
        head = name.partition(":")[0]
        return "shell_v2" if "v2" in head.split(",")[1:] else "shell"
    return "other"


def service_command(name: str) -> Optional[str]:
    """The command line of a ``shell…:CMD`` / ``exec:CMD`` service (None: another service, or
    an interactive shell with no command)."""
    if service_kind(name) not in COMMAND_SERVICES:
        return None
    command = name.partition(":")[2]
    return command or None


def held_reply(name: str, message: str) -> bytes:
    """What a stream answers when its command is held back.

    Args:
        name: the stream's service name.
        message: why, in one line.

    Returns:
        A stderr packet and exit status 1 for ``shell,v2``; the message as plain text otherwise.
    """
    text = (message.rstrip("\n") + "\n").encode("utf-8", "replace")
    if service_kind(name) == "shell_v2":
        return v2_packet(ID_STDERR, text) + v2_packet(ID_EXIT, b"\x01")
    return text


class StreamTap(Protocol):
    """One stream as its owner sees it (every method is called from a stream's thread)."""

    def before(self) -> Optional[str]:
        """Called before the device's stream opens. None: forward; a message: hold it back."""

    def sent(self, data: bytes) -> None:
        """Bytes the client wrote (on their way to the device)."""

    def received(self, data: bytes) -> None:
        """Bytes the device answered (on their way to the client)."""

    def ended(self) -> None:
        """The stream is over."""


class StreamHooks(Protocol):
    def tap(self, name: str) -> Optional[StreamTap]:
        """A tap for the stream that opens service ``name``, or None to just forward it."""


Opener = Callable[[str], socket.socket]  # service name -> a socket carrying that stream of the device


def adb_server_opener(serial: str, host: str = "127.0.0.1", port: int = 5037,
                      timeout: float = UPSTREAM_TIMEOUT_S) -> Opener:
    """Opens streams of device ``serial`` through the adb server at ``host:port`` (adbutils).

    Args:
        serial: the device's serial as the adb server lists it.
        host: the adb server's address.
        port: its port.
        timeout: seconds to connect and to be answered.

    Returns:
        ``open(service) -> socket``; raises ``OSError`` / ``adbutils.AdbError`` when it cannot.
    """
    import adbutils

    client = adbutils.AdbClient(host=host, port=port, socket_timeout=timeout)

    def open_stream(service: str) -> socket.socket:
        c = client.make_connection(timeout=timeout)
        try:
            c.send_command(f"host:transport:{serial}")
            c.check_okay()
            c.send_command(service)
            c.check_okay()
        except BaseException:
            c.close()
            raise
        return c.conn

    return open_stream


class Forward(Service):
    """One stream forwarded to the device (see the module docstring)."""

    acks_itself = True  # the client's writes are acknowledged once the device has them

    def __init__(self, name: str, opener: Opener, tap: Optional[StreamTap], on_end: Callable[[], None]):
        self.name, self.opener, self.tap, self.on_end = name, opener, tap, on_end
        self.upstream: Optional[socket.socket] = None
        self.opened = threading.Event()  # set once the device's stream is open (or will never be)
        self.incoming: "queue.Queue[Optional[bytes]]" = queue.Queue()  # the client's writes (one unacknowledged)
        self.lock = threading.Lock()
        self.done = False
        self.stream: Any = None

    def start(self, stream: Any) -> None:
        self.stream = stream
        threading.Thread(target=self._run, name=f"adb-proxy-{self.name[:24]}", daemon=True).start()
        threading.Thread(target=self._send, name=f"adb-proxy-in-{self.name[:24]}", daemon=True).start()

    def _run(self) -> None:
        try:
            held = self.tap.before() if self.tap is not None else None
            if held is not None:
                self.stream.write(held_reply(self.name, held))
                return
            sock = self.opener(self.name)
            sock.settimeout(UPSTREAM_TIMEOUT_S)
            with self.lock:
                if self.done:  # the client closed the stream meanwhile
                    sock.close()
                    return
                self.upstream = sock
            self.opened.set()
            self._pump(sock)
        except Exception as exc:  # noqa: BLE001 - one stream's failure closes that stream only
            logger.debug("adb proxy: stream {!r} failed: {}: {}", self.name[:200], type(exc).__name__, exc)
            if service_kind(self.name) == "shell_v2":
                self.stream.write(held_reply(self.name, f"ttir proxy: the device's stream failed: {exc}"))
        finally:
            self.opened.set()
            self.stream.close()
            self._close_upstream()
            self._finish()

    def _pump(self, sock: socket.socket) -> None:
        size = max(wire.MAX_PAYLOAD_V1, int(getattr(self.stream.conn, "max_payload", wire.MAX_PAYLOAD_V1)))
        while True:
            try:
                data = sock.recv(size)
            except socket.timeout:  # a shell command may run, silent, for as long as it likes
                if self.done:
                    return
                continue
            except OSError:
                return
            if not data:
                return
            if self.tap is not None:
                self.tap.received(data)
            self.stream.write(data)
            if not self.stream.wait_drained(DRAIN_TIMEOUT_S):
                return

    def _send(self) -> None:
        """The client's writes to the device, each acknowledged once sent (off the connection's thread)."""
        while True:
            payload = self.incoming.get()
            if payload is None:
                return
            self.opened.wait()
            sock = self.upstream
            if sock is None:
                return
            try:
                sock.sendall(payload)
            except OSError:  # the device's stream is gone, or took no byte for UPSTREAM_TIMEOUT_S
                self._close_upstream()
                return
            self.stream.ack()

    def data(self, stream: Any, payload: bytes) -> None:
        if self.tap is not None:
            self.tap.sent(payload)
        if not self.done:
            self.incoming.put(payload)  # at most one: the client waits for its OKAY

    def closed(self) -> None:
        self._close_upstream()
        self._finish()

    def _close_upstream(self) -> None:
        with self.lock:
            self.done = True
            sock, self.upstream = self.upstream, None
        self.incoming.put(None)
        self.opened.set()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the pump's recv
            except OSError:
                pass
            sock.close()

    def _finish(self) -> None:
        with self.lock:
            first, self.on_end = self.on_end, (lambda: None)
        first()
        if self.tap is not None:
            tap, self.tap = self.tap, None
            try:
                tap.ended()
            except Exception:  # noqa: BLE001 - the owner's bug must not leak a stream
                logger.exception("adb proxy: a stream tap failed")


class ForwardedPhone:
    """A real device as an adbd serves it: ``AdbDaemon(ForwardedPhone(...), port=P)``.

    Args:
        serial: the real device's serial (logs and messages name it).
        opener: ``open(service) -> socket`` of the device (:func:`adb_server_opener`).
        banner: the CNXN identity to announce (the real device's, see :func:`device_banner`).
        hooks: what the owner does with streams (None: forward everything untouched).
    """

    def __init__(self, serial: str, opener: Opener, banner: bytes, hooks: Optional[StreamHooks] = None):
        self.serial, self.opener, self._banner, self.hooks = serial, opener, banner, hooks
        self._open: dict[int, int] = {}  # id(connection) -> forwarded streams open on it
        self._lock = threading.Lock()

    def banner(self) -> bytes:
        return self._banner

    def open_service(self, name: str, connection: Any) -> Optional[Service]:
        """A :class:`Forward` for the stream, or None (refused) when the connection has
        ``MAX_FORWARDS`` open already or the name is not a service."""
        if not name or "\0" in name:
            raise ValueError("a service name with no text, or with a NUL inside it")
        key = id(connection)
        with self._lock:
            if self._open.get(key, 0) >= MAX_FORWARDS:
                raise ValueError(f"more than {MAX_FORWARDS} forwarded streams open on this connection")
            self._open[key] = self._open.get(key, 0) + 1

        def ended() -> None:
            with self._lock:
                left = self._open.get(key, 1) - 1
                if left:
                    self._open[key] = left
                else:
                    self._open.pop(key, None)

        tap = None
        if self.hooks is not None:
            try:
                tap = self.hooks.tap(name)
            except Exception:  # noqa: BLE001 - forward untouched rather than fail the stream
                logger.exception("adb proxy: the stream hook failed for {!r}", name[:200])
        return Forward(name, self.opener, tap, ended)


def device_banner(serial: str, host: str = "127.0.0.1", port: int = 5037) -> bytes:
    """The CNXN banner of device ``serial`` as the adb server knows it: its product properties
    and its features (so the client speaks to the proxy as it would to the device), less
    ``TRANSPORT_FEATURES``.

    Args:
        serial: the device.
        host: the adb server's address.
        port: its port.

    Returns:
        ``device::ro.product.name=…;ro.product.model=…;ro.product.device=…;features=…``.
    """
    import adbutils

    device = adbutils.AdbClient(host=host, port=port).device(serial)
    features = [f for f in device.get_features().split(",") if f and f not in TRANSPORT_FEATURES]
    props = {}
    for key in ("ro.product.name", "ro.product.model", "ro.product.device"):
        value = device.shell(f"getprop {key}").strip()
        if value and all(c not in value for c in ";:=\0"):
            props[key] = value
    return wire.banner(props, features)


__all__ = ["COMMAND_SERVICES", "Forward", "ForwardedPhone", "SERVICE_KINDS", "ServiceKind", "StreamHooks", "StreamTap", "adb_server_opener",
           "device_banner", "held_reply", "service_command", "service_kind"]
