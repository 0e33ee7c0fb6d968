"""One adb transport connection, device side: the CNXN handshake, then streams.

The host (the adb server) opens streams with OPEN; each gets a local id and a
service (services.py). Data flows in WRTE messages of at most the negotiated
payload, one unacknowledged WRTE per stream at a time (the receiver answers
OKAY). Messages are handled on the connection's own thread, under
:attr:`Connection.lock`; a service that answers from a thread of its own (the
forwarding proxy, forward.py) writes under that lock too and waits for its
stream to drain (:meth:`_Stream.wait_drained`) before reading more; one with
``acks_itself`` acknowledges each client write when it has consumed it
(:meth:`_Stream.ack`), which holds the client to its pace. A phone
with an ``open_service(name, connection)`` method opens its own services
instead of services.py's. A stream whose request is malformed, or whose
service fails, is closed; a message that breaks the protocol closes the
connection. Neither stops the daemon.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from typing import Any, Optional

from loguru import logger

from benchmark.devices.adbd import wire
from benchmark.devices.adbd.services import Service, open_service
from benchmark.devices.adbd.sync import SyncBudget

MAX_SERVICE_NAME = 64 * 1024
MAX_STREAMS = 256
HANDSHAKE_TIMEOUT_S = 10.0  # from accepting a connection to its CNXN
MAX_SYNC_INFLIGHT = 48 * 1024 * 1024  # bytes of pushes being received on one connection, all its streams together


class _Stream:
    def __init__(self, conn: "Connection", local_id: int, remote_id: int, service: Service):
        self.conn, self.local_id, self.remote_id, self.service = conn, local_id, remote_id, service
        self.queue: deque[bytes] = deque()
        self.waiting_ack = False
        self.closing = False
        self.closed = False

    def write(self, data: bytes) -> None:
        with self.conn.lock:
            if self.closing or self.closed or not data:
                return
            size = self.conn.max_payload
            for i in range(0, len(data), size):
                self.queue.append(data[i:i + size])
            self.pump()

    def close(self) -> None:
        with self.conn.lock:
            self.closing = True
            self.pump()

    def pump(self) -> None:
        if self.closed or self.waiting_ack:
            return
        if self.queue:
            self.waiting_ack = True
            self.conn.send(wire.A_WRTE, self.local_id, self.remote_id, self.queue.popleft())
        elif self.closing:
            self.closed = True
            self.conn.send(wire.A_CLSE, self.local_id, self.remote_id)
            self.conn.streams.pop(self.local_id, None)
        if not self.waiting_ack:
            self.conn.drained.notify_all()

    def ack(self) -> None:
        """Acknowledge the client's last write (a service with ``acks_itself`` calls it once the
        bytes are consumed: the client sends nothing more on this stream until then)."""
        with self.conn.lock:
            if not (self.closing or self.closed):
                self.conn.send(wire.A_OKAY, self.local_id, self.remote_id)

    def wait_drained(self, timeout: float) -> bool:
        """Block (from a service's own thread) until the client has taken every byte written.

        Args:
            timeout: the most seconds to wait.

        Returns:
            True when drained; False when the stream closed or the client did not read in time.
        """
        with self.conn.lock:
            ok = self.conn.drained.wait_for(lambda: self.closed or not (self.queue or self.waiting_ack), timeout)
            return bool(ok) and not self.closed


class Connection:
    """``phone`` is a :class:`~benchmark.devices.adbd.phone.ServedPhone`."""

    def __init__(self, sock: socket.socket, phone: Any, peer: str = ""):
        self.sock = sock
        self.phone = phone
        self.peer = peer
        self.version = wire.A_VERSION_MIN
        self.max_payload = wire.MAX_PAYLOAD_V1
        self.online = False
        self.streams: dict[int, _Stream] = {}
        self._next_id = 1
        self._send_lock = threading.Lock()
        self.lock = threading.RLock()  # the streams' state: the connection's thread and service threads
        self.drained = threading.Condition(self.lock)
        self.host_features: list[str] = []
        self.sync_budget = SyncBudget(MAX_SYNC_INFLIGHT)

    # -- sending ------------------------------------------------------------------------------
    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        data = wire.encode(wire.Message(command, arg0, arg1, payload),
                           with_checksum=self.version < wire.A_VERSION_SKIP_CHECKSUM)
        with self._send_lock:
            self.sock.sendall(data)

    # -- receiving ----------------------------------------------------------------------------
    def _read(self, n: int) -> Optional[bytes]:
        buf = bytearray(n)  # one buffer of the declared size, filled in place (no growing copies)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.sock.recv_into(view[got:])
            if not k:
                return None
            got += k
        view.release()
        return bytes(buf)

    def serve(self) -> None:
        """Handle messages until the host hangs up or breaks the protocol. A client that does not
        connect (CNXN) within ``HANDSHAKE_TIMEOUT_S`` is hung up on; a connected one may idle for
        as long as it likes (the adb server keeps its transport open, silent, for hours)."""
        try:
            self.sock.settimeout(HANDSHAKE_TIMEOUT_S)
            while True:
                head = self._read(wire.HEADER_SIZE)
                if head is None:
                    return
                command, arg0, arg1, length, crc = wire.decode_header(head, max(wire.MAX_PAYLOAD, MAX_SERVICE_NAME))
                payload = self._read(length) if length else b""
                if payload is None:
                    return
                wire.check_payload(command, payload, crc, self.version)
                with self.lock:
                    self.handle(wire.Message(command, arg0, arg1, payload))
        except wire.ProtocolError as exc:
            logger.warning("adbd {}: closing the connection from {}: {}", self.phone.serial, self.peer, exc)
        except OSError as exc:
            logger.debug("adbd {}: connection from {} ended: {}", self.phone.serial, self.peer, exc)
        finally:
            with self.lock:
                for s in list(self.streams.values()):
                    self._closed_by_host(s)
            try:
                self.sock.close()
            except OSError:
                pass

    def handle(self, msg: wire.Message) -> None:
        if msg.command == wire.A_CNXN:
            self._connect(msg)
        elif not self.online:
            logger.debug("adbd {}: {} before CNXN ignored", self.phone.serial, msg)
        elif msg.command == wire.A_OPEN:
            self._open(msg)
        elif msg.command == wire.A_WRTE:
            self._write(msg)
        elif msg.command == wire.A_OKAY:
            stream = self.streams.get(msg.arg1)
            if stream is not None:
                stream.waiting_ack = False
                self._guarded(stream, stream.pump)
        elif msg.command == wire.A_CLSE:
            stream = self.streams.get(msg.arg1)
            if stream is not None:
                self._closed_by_host(stream)
        else:  # AUTH / STLS / SYNC: this phone never asked for them
            logger.debug("adbd {}: unexpected {} ignored", self.phone.serial, msg)

    def _connect(self, msg: wire.Message) -> None:
        for s in list(self.streams.values()):  # a new CNXN restarts the session
            self._closed_by_host(s)
        self.version = min(msg.arg0, wire.A_VERSION)
        self.max_payload = max(wire.MAX_PAYLOAD_V1, min(msg.arg1, wire.MAX_PAYLOAD))
        _, self.host_features = wire.parse_host_banner(msg.payload)
        self.online = True
        self.sock.settimeout(None)
        self.send(wire.A_CNXN, self.version, self.max_payload, self.phone.banner())
        logger.debug("adbd {}: connected to {} (version 0x{:08x}, max payload {})", self.phone.serial, self.peer,
                     self.version, self.max_payload)

    def _open(self, msg: wire.Message) -> None:
        remote_id = msg.arg0
        name = msg.payload.rstrip(b"\0").decode("utf-8", "replace")
        service: Optional[Service] = None
        try:
            if remote_id == 0:
                raise ValueError("OPEN with remote id 0")
            if len(self.streams) >= MAX_STREAMS:
                raise ValueError(f"more than {MAX_STREAMS} open streams")
            opener = getattr(self.phone, "open_service", None)
            service = (opener(name, self) if callable(opener)
                       else open_service(self.phone, name, self.max_payload, self.sync_budget))
        except Exception as exc:  # noqa: BLE001 - a bad request fails its stream only
            logger.warning("adbd {}: OPEN {!r} refused: {}", self.phone.serial, name[:200], exc)
        if service is None:
            logger.debug("adbd {}: no service {!r}", self.phone.serial, name[:200])
            self.send(wire.A_CLSE, 0, remote_id)
            return
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        stream = _Stream(self, local_id, remote_id, service)
        self.streams[local_id] = stream
        self.send(wire.A_OKAY, local_id, remote_id)
        self._guarded(stream, lambda: service.start(stream), name)

    def _write(self, msg: wire.Message) -> None:
        stream = self.streams.get(msg.arg1)
        if stream is None or stream.remote_id != msg.arg0:
            return
        if not getattr(stream.service, "acks_itself", False):
            self.send(wire.A_OKAY, stream.local_id, stream.remote_id)
        self._guarded(stream, lambda: stream.service.data(stream, msg.payload))

    def _guarded(self, stream: _Stream, fn: Any, what: str = "") -> None:
        """Run a service step; if it fails, tell the client why and close its stream."""
        try:
            fn()
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001 - the service's bug must not end the connection
            logger.exception("adbd {}: service {!r} failed", self.phone.serial, what[:200])
            stream.queue.clear()
            stream.write(f"error: the phone could not serve this request: {type(exc).__name__}: {exc}\n".encode())
            stream.close()

    def _closed_by_host(self, stream: _Stream) -> None:
        stream.closed = True
        self.streams.pop(stream.local_id, None)
        self.drained.notify_all()
        try:
            stream.service.closed()
        except Exception:  # noqa: BLE001
            logger.exception("adbd {}: closing a stream failed", self.phone.serial)
