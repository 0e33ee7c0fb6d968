"""Issue 31, item 3: what one client can make a served phone hold is bounded: connections
(and how long one may stay silent before its handshake), a shell v2 packet's declared size,
the bytes of pushes in flight on a connection, and the settings a client puts."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from benchmark.devices.adbd import AdbDaemon, ServedPhone, daemon as daemon_module, transport, wire
from tests.benchmark.test_adbd_wire import Host, still_serving
from tests.support.served_support import closed_by_peer

pytestmark = pytest.mark.reliability


@pytest.fixture
def daemon():
    d = AdbDaemon(ServedPhone(), port=0).start()
    yield d
    d.close()




def test_idle_connections_are_capped_and_timed_out_and_a_good_client_is_served(daemon, monkeypatch):
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 8)
    monkeypatch.setattr(transport, "HANDSHAKE_TIMEOUT_S", 3.0)
    idle = [socket.create_connection(("127.0.0.1", daemon.port), timeout=5) for _ in range(20)]
    try:
        deadline = time.monotonic() + 2.0
        closed: set[int] = set()
        while time.monotonic() < deadline and len(closed) < 12:
            closed |= {i for i, s in enumerate(idle) if i not in closed and closed_by_peer(s, 0.01)}
        assert len(closed) == 12  # over the cap: hung up on at once, long before the handshake timeout
        still_serving(daemon)  # while eight silent sockets hold every place: the oldest silent one gives way
        open_ = [s for i, s in enumerate(idle) if i not in closed]
        assert sum(closed_by_peer(s, 0.01) for s in open_) == 1
        assert all(closed_by_peer(s, 10) for s in open_)  # silent: timed out
        still_serving(daemon)
    finally:
        for s in idle:
            s.close()


def test_a_full_house_of_connected_clients_refuses_the_next(daemon, monkeypatch):
    monkeypatch.setattr(daemon_module, "MAX_CONNECTIONS", 3)
    hosts = [Host(daemon) for _ in range(3)]
    for h in hosts:
        assert h.connect().command == wire.A_CNXN
    late = socket.create_connection(("127.0.0.1", daemon.port), timeout=5)
    assert closed_by_peer(late, 5)  # nobody to make room: the newcomer is refused
    assert all(h.run("shell:echo still here") == b"still here\n" for h in hosts)


def test_a_connected_client_may_stay_silent(daemon, monkeypatch):
    monkeypatch.setattr(transport, "HANDSHAKE_TIMEOUT_S", 0.3)
    host = Host(daemon)
    host.connect()
    time.sleep(0.8)  # the adb server holds its transport open, silent, for hours
    assert host.run("shell:echo still here") == b"still here\n"


def test_a_shell_v2_packet_declaring_gigabytes_is_refused_not_buffered(daemon):
    host = Host(daemon)
    host.connect()
    host.send(wire.A_OPEN, 5, 0, b"shell,v2,raw:\0")
    opened = host.recv()
    assert opened.command == wire.A_OKAY
    host.send(wire.A_WRTE, 5, opened.arg0, struct.pack("<BI", 0, 0xFFFFFFF0) + b"x" * 1000)
    out = b""
    while True:
        msg = host.recv()
        if msg.command == wire.A_WRTE:
            out += msg.payload
            host.send(wire.A_OKAY, 5, msg.arg0)
        elif msg.command == wire.A_CLSE:
            break
    assert b"a packet of 4294967280 bytes" in out
    assert host.run("shell:echo ok", local_id=9) == b"ok\n"


def test_pushes_in_flight_on_one_connection_share_one_budget(daemon, monkeypatch):
    monkeypatch.setattr(transport, "MAX_SYNC_INFLIGHT", 100_000)
    host = Host(daemon)
    host.connect()
    replies = {}
    for local, path in ((21, b"/sdcard/a.bin"), (22, b"/sdcard/b.bin")):
        host.send(wire.A_OPEN, local, 0, b"sync:\0")
        opened = host.recv()
        spec = path + b",0644"
        chunk = b"y" * 60_000
        host.send(wire.A_WRTE, local, opened.arg0, b"SEND" + struct.pack("<I", len(spec)) + spec
                  + b"DATA" + struct.pack("<I", len(chunk)) + chunk)
        replies[local] = []
        msg = host.recv()
        assert msg.command == wire.A_OKAY
        host.sock.settimeout(0.5)
        try:
            while True:
                msg = host.recv()
                replies[local].append(msg)
                if msg.command == wire.A_WRTE:
                    host.send(wire.A_OKAY, local, msg.arg0)
        except (socket.timeout, TimeoutError):
            pass
        host.sock.settimeout(10)
    assert not any(m.command == wire.A_WRTE for m in replies[21])  # the first push is under way
    fail = b"".join(m.payload for m in replies[22] if m.command == wire.A_WRTE)
    assert fail.startswith(b"FAIL") and b"pushes being received" in fail


def test_settings_a_client_puts_are_bounded():
    phone = ServedPhone()
    assert phone.run("settings put global ttir_probe small").status == 0
    big = phone.run("settings put global ttir_big " + "v" * 20_000)
    assert big.status == 1 and b"a value of at most 16384" in big.merged
    assert phone.run("settings get global ttir_big").stdout == b"null\n"


def test_the_file_store_counts_its_bytes_and_files_as_they_change(monkeypatch):
    from benchmark.devices.adbd import files as files_module
    from benchmark.devices.adbd.files import FileError, FileStore

    monkeypatch.setattr(files_module, "MAX_FILES", 50)
    store = FileStore(["/sdcard"])
    for i in range(50):
        store.write(f"/sdcard/f{i}", b"x" * i)
    assert store.total_bytes == sum(range(50))
    with pytest.raises(FileError, match="No space left"):
        store.write("/sdcard/one-more", b"")
    store.write("/sdcard/f10", b"y" * 3)  # an existing file may be rewritten
    store.write("/sdcard/f10", b"z", append=True)
    store.remove("/sdcard/f0")
    assert store.total_bytes == sum(len(e.data) for e in store.files.values())
    store.write("/sdcard/one-more", b"ok")  # one slot freed
    store.remove("/sdcard", recursive=True)
    assert store.total_bytes == 0 and not store.files


def test_the_settings_key_cap_counts_every_namespace(monkeypatch):
    from benchmark.devices.adbd.settings import NAMESPACES
    from benchmark.devices.adbd.tools import system

    phone = ServedPhone()
    held = sum(phone.settings.count(n) for n in NAMESPACES)
    monkeypatch.setattr(system, "MAX_SETTINGS", held + 2)
    assert phone.run("settings put system probe_a 1").status == 0
    assert phone.run("settings put secure probe_b 1").status == 0
    full = phone.run("settings put global probe_c 1")  # a third namespace does not bring room of its own
    assert full.status == 1 and b"system, secure and global together" in full.merged
    assert phone.run("settings put system probe_a 2").status == 0  # an existing key may change
