"""The ``sync:`` service (AOSP file_sync_protocol.h, v1): STAT, LIST, RECV, SEND
(DATA … DONE) and QUIT, over the phone's file store.

Requests arrive as a byte stream that may be cut anywhere; :meth:`SyncSession.feed`
buffers, answers whole requests and returns the bytes to send back. A request
that breaks the protocol raises :class:`SyncError` (the stream is then closed).
"""

from __future__ import annotations

import struct
import threading
from typing import Any, Optional

from benchmark.devices.adbd.files import MAX_FILE_BYTES, FileError, FileStore

MAX_PATH = 1024
SYNC_DATA_MAX = 64 * 1024
_REQ = struct.Struct("<4sI")


class SyncError(ValueError):
    pass


class SyncQuit(Exception):
    """The client sent QUIT: close the stream."""


def _fail(message: str) -> bytes:
    data = message.encode("utf-8")
    return _REQ.pack(b"FAIL", len(data)) + data


class SyncBudget:
    """Bytes of pushes being received, shared by one connection's sync streams: a client
    sending many large pushes at once is refused past ``limit`` instead of growing memory."""

    def __init__(self, limit: int):
        self.limit, self.used = limit, 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Reserve ``n`` bytes; False (nothing reserved) when that would pass the limit."""
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True

    def give(self, n: int) -> None:
        """Release ``n`` bytes reserved earlier."""
        with self._lock:
            self.used = max(0, self.used - n)


class SyncSession:
    def __init__(self, files: FileStore, lock: Any, budget: Optional[SyncBudget] = None):
        self.files = files
        self.lock = lock
        self.budget = budget
        self.buffer = bytearray()
        self.receiving: Optional[tuple[str, int]] = None  # (path, mode) of a SEND in progress
        # a push's chunks as they came (joined once at DONE): one growing buffer would be copied
        # as it grows and leave holes the allocator cannot hand back
        self.incoming: list[bytes] = []
        self.incoming_bytes = 0

    def release(self) -> None:
        """The stream ended: what a push in progress had received is dropped and its bytes released."""
        if self.budget is not None:
            self.budget.give(self.incoming_bytes)
        self.incoming, self.incoming_bytes = [], 0
        self.receiving = None

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out = bytearray()
        while len(self.buffer) >= _REQ.size:
            ident, length = _REQ.unpack_from(self.buffer)
            if self.receiving is not None:
                if ident == b"DATA":
                    if length > SYNC_DATA_MAX:
                        raise SyncError(f"DATA chunk of {length} bytes exceeds {SYNC_DATA_MAX}")
                    if self.incoming_bytes + length > MAX_FILE_BYTES:
                        raise SyncError(f"SEND of more than {MAX_FILE_BYTES} bytes")
                    if len(self.buffer) < _REQ.size + length:
                        break
                    if self.budget is not None and not self.budget.take(length):
                        raise SyncError(f"more than {self.budget.limit} bytes of pushes being received on this "
                                        "connection at once")
                    self.incoming.append(bytes(self.buffer[_REQ.size:_REQ.size + length]))
                    self.incoming_bytes += length
                    del self.buffer[:_REQ.size + length]
                    continue
                if ident == b"DONE":
                    del self.buffer[:_REQ.size]
                    out += self._finish_send(mtime=length)
                    continue
                raise SyncError(f"expected DATA or DONE during SEND, got {ident!r}")
            if ident == b"QUIT":
                del self.buffer[:_REQ.size]
                raise SyncQuit()
            if ident not in (b"STAT", b"LIST", b"RECV", b"SEND"):
                raise SyncError(f"unknown sync request {bytes(ident)!r}")
            if length > MAX_PATH:
                raise SyncError(f"{ident.decode()} path of {length} bytes exceeds {MAX_PATH}")
            if len(self.buffer) < _REQ.size + length:
                break
            path = bytes(self.buffer[_REQ.size:_REQ.size + length]).decode("utf-8", "replace")
            del self.buffer[:_REQ.size + length]
            out += getattr(self, f"_{ident.decode().lower()}")(path)
        return bytes(out)

    def _stat(self, path: str) -> bytes:
        with self.lock:
            try:
                st = self.files.stat(path)
            except FileError:
                st = None
        mode, size, mtime = st or (0, 0, 0)
        return struct.pack("<4s3I", b"STAT", mode, size, mtime)

    def _list(self, path: str) -> bytes:
        out = bytearray()
        with self.lock:
            try:
                names = self.files.listdir(path)
            except FileError:
                names = []
            for name in names:
                mode, size, mtime = self.files.stat(f"{path.rstrip('/')}/{name}") or (0, 0, 0)
                raw = name.encode("utf-8")
                out += struct.pack("<4s4I", b"DENT", mode, size, mtime, len(raw)) + raw
        return bytes(out) + struct.pack("<4s4I", b"DONE", 0, 0, 0, 0)

    def _recv(self, path: str) -> bytes:
        with self.lock:
            try:
                data = self.files.read(path)
            except FileError as exc:
                return _fail(str(exc))
        out = bytearray()
        for i in range(0, len(data), SYNC_DATA_MAX):
            chunk = data[i:i + SYNC_DATA_MAX]
            out += _REQ.pack(b"DATA", len(chunk)) + chunk
        return bytes(out) + _REQ.pack(b"DONE", 0)

    def _send(self, spec: str) -> bytes:
        path, sep, mode = spec.rpartition(",")
        if not sep or not mode.isdigit():
            path, mode = spec, str(0o644)
        self.receiving = (path, int(mode))
        self.incoming, self.incoming_bytes = [], 0
        return b""

    def _finish_send(self, mtime: int) -> bytes:
        assert self.receiving is not None
        path, mode = self.receiving
        self.receiving = None
        data = b"".join(self.incoming)
        if self.budget is not None:
            self.budget.give(self.incoming_bytes)
        self.incoming, self.incoming_bytes = [], 0
        with self.lock:
            try:
                parent = path.rsplit("/", 1)[0] or "/"
                if not self.files.is_dir(parent):
                    self.files.mkdir(parent, parents=True)
                self.files.write(path, data, mode=mode, mtime=mtime)
            except FileError as exc:
                return _fail(f"couldn't create file: {exc}")
        return _REQ.pack(b"OKAY", 0)
