"""AdbDaemon: a served phone listening for adb on TCP, like ``adbd`` after
``adb tcpip``: ``adb connect HOST:PORT`` then lists it as a device.

One thread accepts, one thread per connection serves it (transport.py), at most
``MAX_CONNECTIONS`` at once. When all are taken, the oldest one that has not yet connected
(no CNXN) is hung up on to make room, so a flood of silent sockets cannot lock a real client
out; when every one has connected, the newcomer is refused (logged). A connection that fails
is dropped; the daemon goes on until :meth:`close`.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Optional

from loguru import logger

from benchmark.devices.adbd.transport import Connection

MAX_CONNECTIONS = 64  # per phone: the adb server needs one, a test suite a few


def _hang_up(conn: socket.socket) -> None:
    """Close a connection another thread may be reading (shutdown wakes its recv)."""
    try:
        conn.shutdown(socket.SHUT_RDWR)
        conn.close()
    except OSError:
        pass


class AdbDaemon:
    """``phone``: a ServedPhone. ``port=0`` picks a free port (see :attr:`port`)."""

    def __init__(self, phone: Any, *, host: str = "127.0.0.1", port: int = 0):
        if not 0 <= int(port) < 65536:
            raise ValueError(f"port={port!r} is not a TCP port (1..65535, or 0 for any free one)")
        self.phone = phone
        self.host = host
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, int(port)))
        except OSError as exc:
            self._sock.close()
            raise OSError(f"cannot serve a phone on {host}:{port}: {exc.strerror or exc}") from exc
        self._sock.listen(128)  # a burst of connects waits in the queue, not in SYN retries of a second
        self.port: int = self._sock.getsockname()[1]
        self._conns: dict[socket.socket, Connection] = {}  # oldest first
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: Optional[threading.Thread] = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> "AdbDaemon":
        if self._thread is None:
            self._thread = threading.Thread(target=self._accept, name=f"adbd-{self.port}", daemon=True)
            self._thread.start()
        return self

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, addr = self._sock.accept()
            except OSError:
                return
            peer = f"{addr[0]}:{addr[1]}"
            connection = Connection(conn, self.phone, peer)
            with self._lock:
                victim = None
                if len(self._conns) >= MAX_CONNECTIONS:
                    victim = next((s for s, c in self._conns.items() if not c.online), None)
                    if victim is not None:
                        del self._conns[victim]
                full = len(self._conns) >= MAX_CONNECTIONS
                if not full:
                    self._conns[conn] = connection
            if victim is not None:  # silent since it was accepted: it gives its place up
                logger.debug("adbd {}: hanging up on a connection that never connected, for {}", self.phone.serial, peer)
                _hang_up(victim)
            if full:  # no client may hold a thread per connection without end
                logger.warning("adbd {}: refusing a connection from {}: {} connected already", self.phone.serial,
                               peer, MAX_CONNECTIONS)
                conn.close()
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn, connection), daemon=True,
                             name=f"adbd-{self.port}-{addr[1]}").start()

    def _serve(self, conn: socket.socket, connection: Connection) -> None:
        try:
            connection.serve()
        except Exception:  # noqa: BLE001 - one connection's failure is logged, the daemon goes on
            logger.exception("adbd {}: connection from {} failed", self.phone.serial, connection.peer)
        finally:
            with self._lock:
                self._conns.pop(conn, None)

    def close(self) -> None:
        """Stop listening and hang up every connection (the adb server then lists the phone offline)."""
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked in the other thread
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
        with self._lock:
            conns, self._conns = list(self._conns), {}
        for c in conns:
            _hang_up(c)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "AdbDaemon":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()
