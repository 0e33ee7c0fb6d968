"""What an adb stream can be opened to (the OPEN payload, AOSP SERVICES.TXT,
device side): ``shell:`` (legacy, raw), ``shell,v2,…:`` (the shell protocol:
stdout / stderr / exit status packets), ``exec:`` (raw output) and ``sync:``.

A service gets the stream's bytes through :meth:`Service.data` and answers with
:meth:`Stream.write` / :meth:`Stream.close` (the transport does the chunking
and flow control). Commands run at once under the phone's lock.
"""

from __future__ import annotations

import struct
from typing import Any, Optional, Protocol

from benchmark.devices.adbd.sync import SyncBudget, SyncError, SyncQuit, SyncSession

# shell protocol packet ids (AOSP shell_protocol.h)
ID_STDIN, ID_STDOUT, ID_STDERR, ID_EXIT, ID_CLOSE_STDIN, ID_WINDOW_SIZE_CHANGE = range(6)
_PACKET = struct.Struct("<BI")
MAX_INTERACTIVE_LINE = 64 * 1024
MAX_V2_PACKET = 1024 * 1024  # a shell protocol v2 packet: adb sends at most its max payload


class Stream(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Service:
    def start(self, stream: Stream) -> None:
        """Called once the stream is open."""

    def data(self, stream: Stream, payload: bytes) -> None:
        """Bytes the client wrote."""

    def closed(self) -> None:
        """The client closed the stream."""


def v2_packet(ident: int, data: bytes = b"") -> bytes:
    return _PACKET.pack(ident, len(data)) + data


class RawCommand(Service):
    """``exec:CMD`` and legacy ``shell:CMD``: run, send stdout and stderr as they came, close."""

    def __init__(self, phone: Any, command: str):
        self.phone, self.command = phone, command

    def start(self, stream: Stream) -> None:
        out = self.phone.run(self.command)
        stream.write(out.merged)
        stream.close()


class ShellV2Command(Service):
    """``shell,v2:CMD``: stdout and stderr packets, then the exit status."""

    def __init__(self, phone: Any, command: str, max_packet: int):
        self.phone, self.command, self.max_packet = phone, command, max_packet

    def start(self, stream: Stream) -> None:
        out = self.phone.run(self.command)
        packets = [v2_packet(ID_STDOUT if fd == 1 else ID_STDERR, data[i:i + self.max_packet])
                   for fd, data in out.chunks for i in range(0, len(data), self.max_packet)]
        # one write: the transport fills each WRTE to the payload limit (every WRTE waits for an OKAY)
        stream.write(b"".join(packets) + v2_packet(ID_EXIT, bytes([out.status & 0xFF])))
        stream.close()


class Interactive(Service):
    """``adb shell`` with no command: one shell reading lines, whose ``$?`` carries over;
    ``exit`` or the end of input ends it. On a terminal (``tty``) it prompts, echoes what
    is typed and ends lines with CR LF, as a pty does; from a pipe it just runs the script."""

    def __init__(self, phone: Any, *, v2: bool, tty: bool):
        self.phone, self.v2, self.tty = phone, v2, tty
        self.shell = phone.shell()
        self.line = bytearray()
        self.pending = bytearray()  # v2: packet bytes not yet complete
        self.prompt = f"{phone.env.get('HOSTNAME', 'phone')}:/ $ ".encode() if tty else b""
        self.done = False

    def _out(self, stream: Stream, data: bytes, fd: int = 1) -> None:
        if data:
            stream.write(v2_packet(ID_STDOUT if fd == 1 else ID_STDERR, data) if self.v2 else data)

    def _end(self, stream: Stream, status: int) -> None:
        if self.done:
            return
        self.done = True
        if self.v2:
            stream.write(v2_packet(ID_EXIT, bytes([status & 0xFF])))
        stream.close()

    def start(self, stream: Stream) -> None:
        self._out(stream, self.prompt)

    def data(self, stream: Stream, payload: bytes) -> None:
        if not self.v2:
            self._typed(stream, payload)
            return
        self.pending += payload
        while len(self.pending) >= _PACKET.size and not self.done:
            ident, length = _PACKET.unpack_from(self.pending)
            if length > MAX_V2_PACKET:  # a declared length is not a promise: refused before it is buffered
                self.pending.clear()
                self._out(stream, f"shell: a packet of {length} bytes (at most {MAX_V2_PACKET})\n".encode(), 2)
                self._end(stream, 1)
                return
            if len(self.pending) < _PACKET.size + length:
                return
            body = bytes(self.pending[_PACKET.size:_PACKET.size + length])
            del self.pending[:_PACKET.size + length]
            if ident == ID_STDIN:
                self._typed(stream, body)
            elif ident == ID_CLOSE_STDIN:
                if self.line:
                    self._run_line(stream)
                self._end(stream, self.shell.status)

    def _run_line(self, stream: Stream) -> None:
        line, self.line = self.line.decode("utf-8", "replace"), bytearray()
        with self.phone.lock:
            out = self.shell.run(line)
        for fd, data in out.chunks:
            self._out(stream, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n") if self.tty else data, fd)
        if out.exited:
            self._end(stream, out.status)
            return
        self._out(stream, self.prompt)

    def _typed(self, stream: Stream, keys: bytes) -> None:
        for b in keys:
            if self.done:
                return
            if b in (0x0D, 0x0A):
                if self.tty:
                    self._out(stream, b"\r\n")
                self._run_line(stream)
            elif b == 0x04 and not self.line and self.tty:  # Ctrl-D on an empty line
                self._end(stream, self.shell.status)
            elif b in (0x7F, 0x08) and self.tty:
                if self.line:
                    self.line = self.line[:-1]
                    self._out(stream, b"\b \b")
            elif b == 0x03 and self.tty:  # Ctrl-C: drop the line
                self.line = bytearray()
                self._out(stream, b"^C\r\n" + self.prompt)
            elif len(self.line) < MAX_INTERACTIVE_LINE:
                self.line.append(b)
                if self.tty:
                    self._out(stream, bytes([b]))


class Sync(Service):
    def __init__(self, phone: Any, budget: Optional[SyncBudget] = None):
        self.session = SyncSession(phone.files, phone.lock, budget)

    def closed(self) -> None:
        self.session.release()

    def data(self, stream: Stream, payload: bytes) -> None:
        try:
            reply = self.session.feed(payload)
        except SyncQuit:
            stream.close()
            return
        except SyncError as exc:
            stream.write(b"FAIL" + struct.pack("<I", len(str(exc).encode())) + str(exc).encode())
            self.session.release()
            stream.close()
            return
        if reply:
            stream.write(reply)


def open_service(phone: Any, name: str, max_payload: int, budget: Optional[SyncBudget] = None) -> Optional[Service]:
    """The service an OPEN names, or None if this phone has no such service (``budget``: the
    connection's bytes of pushes in flight, shared by its sync streams)."""
    if name.startswith("exec:"):
        return RawCommand(phone, name[len("exec:"):])
    if name.startswith("shell"):
        head, sep, command = name.partition(":")
        if not sep:
            return None
        args = head.split(",")[1:]
        if args and "v2" not in args and not all("=" in a or a in ("raw", "pty") for a in args):
            return None
        v2 = "v2" in args
        if not command:  # a shell reading its input: a terminal unless asked for raw
            return Interactive(phone, v2=v2, tty="raw" not in args)
        if v2:
            return ShellV2Command(phone, command, max_payload - _PACKET.size)
        return RawCommand(phone, command)
    if name == "sync:":
        return Sync(phone, budget)
    return None


__all__ = ["Service", "Stream", "open_service", "v2_packet"]
