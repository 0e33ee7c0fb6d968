"""The adb transport's wire format (AOSP packages/modules/adb, protocol.txt).

A message is a 24-byte little-endian header — command, arg0, arg1, payload
length, payload checksum, magic (command XOR 0xffffffff) — and a payload.
Pure functions: no sockets here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER = struct.Struct("<6I")
HEADER_SIZE = HEADER.size

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453
NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY", A_CLSE: "CLSE",
         A_WRTE: "WRTE", A_STLS: "STLS"}

A_VERSION_MIN = 0x01000000
A_VERSION_SKIP_CHECKSUM = 0x01000001  # from this version on, payload checksums are neither sent nor checked
A_VERSION = 0x01000001
MAX_PAYLOAD_V1 = 4 * 1024
MAX_PAYLOAD = 1024 * 1024  # what adbd offers since Android 9; the host may ask for less


class ProtocolError(ValueError):
    """A message that breaks the protocol: the connection it came on is closed."""


@dataclass(frozen=True)
class Message:
    command: int
    arg0: int
    arg1: int
    payload: bytes = b""

    @property
    def name(self) -> str:
        return NAMES.get(self.command, f"0x{self.command:08x}")

    def __repr__(self) -> str:
        return f"Message({self.name}, {self.arg0}, {self.arg1}, {len(self.payload)} bytes)"


def checksum(payload: bytes) -> int:
    """The legacy payload checksum: the sum of its bytes."""
    return sum(payload) & 0xFFFFFFFF


def encode(msg: Message, *, with_checksum: bool) -> bytes:
    crc = checksum(msg.payload) if with_checksum else 0
    return HEADER.pack(msg.command, msg.arg0, msg.arg1, len(msg.payload), crc, msg.command ^ 0xFFFFFFFF) + msg.payload


def decode_header(raw: bytes, max_payload: int) -> tuple[int, int, int, int, int]:
    """(command, arg0, arg1, length, checksum) of a header; ProtocolError if it is not one."""
    if len(raw) != HEADER_SIZE:
        raise ProtocolError(f"short header: {len(raw)} of {HEADER_SIZE} bytes")
    command, arg0, arg1, length, crc, magic = HEADER.unpack(raw)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic 0x{magic:08x} for command 0x{command:08x}")
    if command not in NAMES:
        raise ProtocolError(f"unknown command 0x{command:08x}")
    if length > max_payload:
        raise ProtocolError(f"{NAMES[command]} payload of {length} bytes exceeds the maximum of {max_payload}")
    return command, arg0, arg1, length, crc


def check_payload(command: int, payload: bytes, crc: int, version: int) -> None:
    """Old protocol versions checksum every payload; newer ones send 0 and skip the check."""
    if version < A_VERSION_SKIP_CHECKSUM and checksum(payload) != crc:
        raise ProtocolError(f"{NAMES.get(command, command)} payload checksum mismatch")


def banner(properties: dict[str, str], features: list[str]) -> bytes:
    """The CNXN identity string of a device: ``device::prop=value;…;features=a,b``."""
    props = "".join(f"{k}={v};" for k, v in properties.items())
    return f"device::{props}features={','.join(features)}".encode()


def parse_host_banner(payload: bytes) -> tuple[str, list[str]]:
    """(system type, features) of the host's CNXN string (``host::features=…``)."""
    text = payload.rstrip(b"\0").decode("utf-8", "replace")
    kind, _, rest = text.partition(":")
    features: list[str] = []
    for item in rest.split(":", 1)[-1].split(";"):
        key, _, value = item.partition("=")
        if key == "features":
            features = [f for f in value.split(",") if f]
    return kind, features
