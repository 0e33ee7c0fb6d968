"""The screens the agent pulls through the proxy, kept so the guard need not dump again.

- :class:`ScreenCache` — the last UI dump the agent itself pulled, with the number of
  inputs forwarded before it was taken; it is *fresh* while no input has been forwarded
  since (and it is younger than ``max_age_s``: a screen can change by itself, a pop-up
  arriving while the agent thinks);
- :class:`ReplyReader` — the stdout of one ``shell`` / ``shell,v2`` / ``exec`` stream,
  the v2 packet framing taken off, bounded;
- :class:`SyncReader` — the files a ``sync:`` stream receives (``RECV``), bounded.

A screenshot (``screencap -p``) is not kept: the checks read the UI tree (the
screenshot is only their fallback when there is no tree), and decoding a PNG on every
input would cost more than the whole check. An agent that only pulls screenshots makes
the proxy dump the tree itself.
"""

from __future__ import annotations

import struct
import threading
import time
from typing import Callable, Optional

from ttir.core.dump import DumpError
from ttir.core.types import Observation

MAX_DUMP_BYTES = 8 * 1024 * 1024  # a UI dump larger than this is not kept (the proxy dumps itself)
V2_HEADER = struct.Struct("<BI")
V2_STDOUT = 1
SYNC_HEADER = struct.Struct("<4sI")


def extract_dump(text: str) -> Optional[str]:
    """The ``<hierarchy>`` document inside a command's output (a status line may come first)."""
    start = text.find("<?xml")
    if start == -1:
        start = text.find("<hierarchy")
    end = text.rfind("</hierarchy>")
    if start == -1 or end == -1 or end < start:
        return None
    return text[start:end + len("</hierarchy>")]


class ScreenCache:
    """The last UI dump the agent pulled (see the module docstring).

    Args:
        max_age_s: how long a pulled screen stays fresh at most, in seconds.
        clock: the time source.
    """

    def __init__(self, max_age_s: float = 5.0, clock: Callable[[], float] = time.monotonic):
        self.max_age_s = max_age_s
        self.clock = clock
        self.inputs = 0  # inputs (the agent's and the guard's own) sent to the device so far
        self._lock = threading.Lock()
        self._xml: Optional[str] = None
        self._taken_after = -1  # the value of `inputs` when it was taken
        self._at = 0.0
        self._obs: Optional[Observation] = None  # the parsed dump, made once
        self.kept = 0  # dumps pulled by the agent and kept

    def changed(self) -> None:
        """An input is about to reach the device: what was pulled before is stale."""
        with self._lock:
            self.inputs += 1

    def put(self, xml: str, inputs_when_taken: int) -> bool:
        """Keep a dump the agent pulled; ``inputs_when_taken``: :attr:`inputs` when its command
        started. Returns whether it was kept (an input went through since: not kept)."""
        with self._lock:
            if inputs_when_taken != self.inputs:
                return False
            self._xml, self._taken_after, self._at, self._obs = xml, inputs_when_taken, self.clock(), None
            self.kept += 1
            return True

    def fresh(self) -> Optional[Observation]:
        """The pulled screen, parsed, when it is fresh; else None."""
        with self._lock:
            if self._xml is None or self._taken_after != self.inputs or self.clock() - self._at > self.max_age_s:
                return None
            if self._obs is None:
                try:
                    self._obs = Observation.from_xml(self._xml)
                except DumpError:
                    self._xml = None
                    return None
            return self._obs


class ReplyReader:
    """The stdout of one shell / exec stream, as it comes (``v2``: packets unwrapped), at most
    ``MAX_DUMP_BYTES``; past that it keeps nothing."""

    def __init__(self, v2: bool):
        self.v2 = v2
        self.out = bytearray()
        self.pending = bytearray()
        self.overflow = False

    def feed(self, data: bytes) -> None:
        if self.overflow:
            return
        if not self.v2:
            self._keep(data)
            return
        self.pending += data
        while len(self.pending) >= V2_HEADER.size and not self.overflow:
            ident, length = V2_HEADER.unpack_from(self.pending)
            if length > MAX_DUMP_BYTES:
                self._drop()
                return
            if len(self.pending) < V2_HEADER.size + length:
                if len(self.pending) > MAX_DUMP_BYTES:
                    self._drop()
                return
            if ident == V2_STDOUT:
                self._keep(bytes(self.pending[V2_HEADER.size:V2_HEADER.size + length]))
            del self.pending[:V2_HEADER.size + length]

    def _keep(self, data: bytes) -> None:
        if len(self.out) + len(data) > MAX_DUMP_BYTES:
            self._drop()
            return
        self.out += data

    def _drop(self) -> None:
        self.overflow = True
        self.out, self.pending = bytearray(), bytearray()

    def dump(self) -> Optional[str]:
        """The UI dump in what was read, if any."""
        if self.overflow or b"</hierarchy>" not in self.out:
            return None
        return extract_dump(self.out.decode("utf-8", "replace"))


class SyncReader:
    """The ``sync:`` protocol as it passes: which file each ``RECV`` (v1) or uncompressed
    ``RCV2`` asks for (client side), and its ``DATA`` chunks until ``DONE`` (device side). Only
    ``.xml`` files are kept, each at most ``MAX_DUMP_BYTES``; anything it cannot follow (a
    compressed ``RCV2``, a push, a reply it does not expect) stops it, and the bytes still pass
    unchanged."""

    def __init__(self) -> None:
        self.asked: list[str] = []  # paths requested, oldest first
        self.client = bytearray()
        self.device = bytearray()
        self.file = bytearray()
        self.files: list[tuple[str, bytes]] = []
        self.lost = False
        self._v2_path: Optional[str] = None  # an RCV2 whose flags are still to come

    def sent(self, data: bytes) -> None:
        if self.lost:
            return
        self.client += data
        while len(self.client) >= SYNC_HEADER.size and not self.lost:
            ident, length = SYNC_HEADER.unpack_from(self.client)
            if self._v2_path is not None:  # RCV2's second half: {RCV2, flags}; compressed data is not read
                del self.client[:SYNC_HEADER.size]
                if ident != b"RCV2" or length != 0:
                    self.lost = True
                    return
                self.asked.append(self._v2_path)
                self._v2_path = None
                continue
            if ident in (b"QUIT", b"DONE"):
                del self.client[:SYNC_HEADER.size]
                continue
            if ident in (b"DATA", b"SEND", b"SND2") or length > 4096:  # a push: nothing on its way back to read
                self.lost = True
                return
            if len(self.client) < SYNC_HEADER.size + length:
                return
            path = bytes(self.client[SYNC_HEADER.size:SYNC_HEADER.size + length]).decode("utf-8", "replace")
            del self.client[:SYNC_HEADER.size + length]
            if ident == b"RECV":
                self.asked.append(path)
            elif ident == b"RCV2":
                self._v2_path = path

    def received(self, data: bytes) -> None:
        if self.lost or not self.asked:
            return  # a STAT / LIST reply, or a reader that lost its place: not followed
        self.device += data
        while len(self.device) >= SYNC_HEADER.size and self.asked:
            ident, length = SYNC_HEADER.unpack_from(self.device)
            if ident == b"DATA":
                if len(self.device) < SYNC_HEADER.size + length:
                    if len(self.device) > MAX_DUMP_BYTES:
                        self.lost = True
                    return
                if self.asked[0].endswith(".xml") and len(self.file) + length <= MAX_DUMP_BYTES:
                    self.file += self.device[SYNC_HEADER.size:SYNC_HEADER.size + length]
                del self.device[:SYNC_HEADER.size + length]
            elif ident == b"DONE":
                del self.device[:SYNC_HEADER.size]
                path = self.asked.pop(0)
                if path.endswith(".xml") and self.file:
                    self.files.append((path, bytes(self.file)))
                self.file = bytearray()
            else:  # FAIL, or a STAT / DENT reply interleaved: this reader only follows RECV
                self.lost = True
                return

    def dump(self) -> Optional[str]:
        """The last UI dump received, if any."""
        for _, data in reversed(self.files):
            if b"</hierarchy>" in data:
                return extract_dump(data.decode("utf-8", "replace"))
        return None


__all__ = ["MAX_DUMP_BYTES", "ReplyReader", "ScreenCache", "SyncReader", "extract_dump"]
