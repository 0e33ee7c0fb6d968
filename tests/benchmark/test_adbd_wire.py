"""The served phone's transport against malformed and old-protocol hosts — what the
real adb server never sends, so a raw socket plays the host here. Every case
ends with the daemon still serving a well-behaved connection."""

from __future__ import annotations

import socket
import struct

import pytest

from benchmark.devices.adbd import AdbDaemon, ServedPhone
from benchmark.devices.adbd import wire
from benchmark.devices.adbd.host import RawHost


class Host(RawHost):
    """A raw host on a daemon's port."""

    def __init__(self, daemon: AdbDaemon, version: int = wire.A_VERSION, checksums: bool = False):
        super().__init__(daemon.port, version, checksums)


@pytest.fixture
def daemon():
    d = AdbDaemon(ServedPhone(), port=0).start()
    yield d
    d.close()


def still_serving(daemon: AdbDaemon) -> None:
    host = Host(daemon)
    assert host.connect().command == wire.A_CNXN
    assert host.run("shell:echo ok") == b"ok\n"


def test_handshake_banner_and_negotiated_payload(daemon):
    reply = Host(daemon).connect(maxdata=4096)
    assert (reply.command, reply.arg0, reply.arg1) == (wire.A_CNXN, wire.A_VERSION, 4096)
    assert reply.payload.startswith(b"device::ro.product.name=ttir_sim;ro.product.model=ttir_sim_phone;")
    assert reply.payload.endswith(b";features=shell_v2")


def test_output_is_cut_to_the_negotiated_payload_one_unacknowledged_write_at_a_time(daemon):
    host = Host(daemon)
    host.connect(maxdata=4096)
    host.send(wire.A_OPEN, 3, 0, b"exec:screencap -p\0")
    okay = host.recv()
    assert okay.command == wire.A_OKAY and okay.arg1 == 3
    first = host.recv()
    assert first.command == wire.A_WRTE and len(first.payload) == 4096
    host.sock.settimeout(0.3)
    with pytest.raises(socket.timeout):  # nothing more until this write is acknowledged
        host.recv()
    host.sock.settimeout(10)
    host.send(wire.A_OKAY, 3, first.arg0)
    assert host.recv().command == wire.A_WRTE


def test_an_old_host_gets_and_must_send_checksums(daemon):
    old = Host(daemon, version=wire.A_VERSION_MIN, checksums=True)
    assert old.connect().arg0 == wire.A_VERSION_MIN
    assert old.run("shell:echo checked") == b"checked\n"
    bad = Host(daemon, version=wire.A_VERSION_MIN, checksums=True)
    bad.connect()
    msg = wire.encode(wire.Message(wire.A_OPEN, 5, 0, b"shell:echo x\0"), with_checksum=True)
    bad.sock.sendall(msg[:16] + struct.pack("<I", 12345) + msg[20:])  # a wrong checksum
    with pytest.raises(EOFError):
        bad.recv()
    still_serving(daemon)


@pytest.mark.parametrize("garbage", [b"\x00" * 24, b"NOPE" + b"\x00" * 20, b"GET / HTTP/1.1\r\n\r\n" + b"x" * 8])
def test_a_broken_message_closes_only_its_connection(daemon, garbage):
    host = Host(daemon)
    host.connect()
    host.sock.sendall(garbage)
    with pytest.raises((EOFError, ConnectionResetError)):
        host.recv()
    still_serving(daemon)


def test_unknown_services_and_bad_streams_fail_alone(daemon):
    host = Host(daemon)
    host.connect()
    host.send(wire.A_OPEN, 9, 0, b"reboot:\0")
    refused = host.recv()
    assert (refused.command, refused.arg0, refused.arg1) == (wire.A_CLSE, 0, 9)
    host.send(wire.A_WRTE, 9, 4242, b"to no stream")  # ignored
    host.send(wire.A_OKAY, 9, 4242)  # ignored
    assert host.run("shell,v2,raw:echo v2", local_id=11) == b"\x01\x03\x00\x00\x00v2\n\x03\x01\x00\x00\x00\x00"
    host.send(wire.A_OPEN, 12, 0, b"sync:\0")
    opened = host.recv()
    host.send(wire.A_WRTE, 12, opened.arg0, b"JUNK\x01\x00\x00\x00x")
    assert host.recv().command == wire.A_OKAY  # the write was taken ...
    reply = host.recv()
    assert reply.command == wire.A_WRTE and reply.payload.startswith(b"FAIL")  # ... and refused
    host.send(wire.A_OKAY, 12, opened.arg0)
    assert host.recv().command == wire.A_CLSE
    assert host.run("shell:echo same connection", local_id=13) == b"same connection\n"


def test_a_failing_command_closes_its_stream_with_an_error(daemon, monkeypatch):
    def broken(call):
        raise RuntimeError("boom")

    monkeypatch.setitem(daemon.phone.tools, "getprop", broken)
    host = Host(daemon)
    host.connect()
    assert host.run("shell:getprop").startswith(b"error: the phone could not serve this request: RuntimeError: boom")
    assert host.run("shell:echo fine", local_id=8) == b"fine\n"
