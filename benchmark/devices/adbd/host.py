"""A raw adb host: the other end of the wire, one socket, no adb server.

The real adb server never sends a malformed message, a 4 GB packet or two thousand idle
connections; probes and tests that must (``tests/benchmark/test_adbd_*``,
``python -m experiments.perf adbd_limits``) speak to a served phone through :class:`RawHost`.
"""

from __future__ import annotations

import socket

from benchmark.devices.adbd import wire


class RawHost:
    """One connection to a served phone, messages sent and read by hand.

    Args:
        port: the phone's TCP port on 127.0.0.1.
        version: the protocol version the host announces in its CNXN.
        checksums: whether payloads carry (and replies are checked for) checksums, as old hosts do.
        timeout: seconds a socket operation may block.
    """

    def __init__(self, port: int, version: int = wire.A_VERSION, checksums: bool = False, timeout: float = 10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.checksums = checksums
        self.version = version

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        """Send one message (CNXN always checksummed: before the handshake both sides speak the oldest version)."""
        checked = self.checksums or command == wire.A_CNXN
        self.sock.sendall(wire.encode(wire.Message(command, arg0, arg1, payload), with_checksum=checked))

    def recv(self) -> wire.Message:
        """Read one message.

        Raises:
            EOFError: the phone closed the connection.
            ValueError: an old-protocol reply's checksum is wrong.
        """
        head = self._read(wire.HEADER_SIZE)
        command, arg0, arg1, length, crc = wire.decode_header(head, wire.MAX_PAYLOAD)
        payload = self._read(length)
        if self.checksums and wire.checksum(payload) != crc:
            raise ValueError("an old-protocol host gets checksummed payloads; this one's checksum is wrong")
        return wire.Message(command, arg0, arg1, payload)

    def _read(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise EOFError("connection closed")
            buf += chunk
        return buf

    def connect(self, maxdata: int = wire.MAX_PAYLOAD) -> wire.Message:
        """The handshake: send CNXN, return the phone's CNXN."""
        self.send(wire.A_CNXN, self.version, maxdata, b"host::features=shell_v2,cmd\0")
        return self.recv()

    def run(self, service: str, local_id: int = 7) -> bytes:
        """OPEN a stream, acknowledge every WRTE, return what came before CLSE."""
        self.send(wire.A_OPEN, local_id, 0, service.encode() + b"\0")
        data = b""
        while True:
            msg = self.recv()
            if msg.command == wire.A_WRTE:
                data += msg.payload
                self.send(wire.A_OKAY, local_id, msg.arg0)
            elif msg.command == wire.A_CLSE:
                return data

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()


__all__ = ["RawHost"]
