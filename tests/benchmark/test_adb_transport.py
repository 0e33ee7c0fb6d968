"""Finding the adb server and choosing the device, with errors that say what to do."""

from __future__ import annotations

import pytest

from tests.support.adb_fake import FakeAdbServer, free_port
from benchmark.device import DeviceError
from benchmark.devices.adb.transport import connect, ensure_server, pick_serial, server_address


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    for var in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_HOST", "ANDROID_ADB_SERVER_PORT"):
        monkeypatch.delenv(var, raising=False)


def test_pick_the_only_ready_device():
    assert pick_serial(None, [("emulator-5554", "device")]) == "emulator-5554"
    assert pick_serial(None, [("A", "offline"), ("B", "device")]) == "B"


def test_pick_by_serial_or_android_serial(monkeypatch):
    attached = [("A", "device"), ("B", "device")]
    assert pick_serial("B", attached) == "B"
    monkeypatch.setenv("ANDROID_SERIAL", "A")
    assert pick_serial(None, attached) == "A"
    assert pick_serial("B", attached) == "B"  # an explicit serial wins over the environment


def test_several_devices_and_none_chosen_lists_them():
    with pytest.raises(DeviceError, match=r"several devices are attached \(A, B\).*ANDROID_SERIAL"):
        pick_serial(None, [("A", "device"), ("B", "device")])


def test_missing_unauthorised_offline_and_absent_devices_are_explained():
    with pytest.raises(DeviceError, match="no Android device is attached.*USB debugging"):
        pick_serial(None, [])
    with pytest.raises(DeviceError, match="R58M is unauthorised.*Allow USB debugging"):
        pick_serial(None, [("R58M", "unauthorized")])
    with pytest.raises(DeviceError, match="emulator-5554 is offline"):
        pick_serial("emulator-5554", [("emulator-5554", "offline")])
    with pytest.raises(DeviceError, match=r"XYZ is not attached.*Attached devices: A \(device\)"):
        pick_serial("XYZ", [("A", "device")])


def test_server_address_from_arguments_and_environment(monkeypatch):
    assert server_address() == ("127.0.0.1", 5037)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "5099")
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "10.0.0.2")
    assert server_address() == ("10.0.0.2", 5099)
    assert server_address("h", 6000) == ("h", 6000)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "abc")
    with pytest.raises(ValueError, match="ANDROID_ADB_SERVER_PORT='abc'"):
        server_address()
    with pytest.raises(ValueError, match="port=70000"):
        server_address("h", 70000)


def test_unreachable_server_without_starting_one():
    port = free_port()
    with pytest.raises(DeviceError, match=f"127.0.0.1:{port} is not reachable.*adb start-server"):
        ensure_server("127.0.0.1", port, start=False)


def test_connect_through_a_real_adb_protocol_exchange():
    server = FakeAdbServer([("emulator-5554", "device")])
    try:
        device = connect(host="127.0.0.1", port=server.port, start_server=False)
        assert device.serial == "emulator-5554"
        with pytest.raises(DeviceError, match="other is not attached"):
            connect("other", host="127.0.0.1", port=server.port, start_server=False)
    finally:
        server.close()
    assert "host:devices" in server.requests


def test_a_missing_local_server_is_started_with_the_bundled_adb(monkeypatch):
    import socket

    import adbutils

    from benchmark.devices.adb import transport as adb_transport

    port = free_port()
    started: list[list[str]] = []
    listener = socket.socket()

    def fake_run(argv, **kw):
        started.append(list(argv))
        listener.bind(("127.0.0.1", port))  # "the server is up"
        listener.listen(1)

    monkeypatch.setattr(adbutils, "adb_path", lambda: "/opt/adbutils/adb")
    monkeypatch.setattr(adb_transport.subprocess, "run", fake_run)
    try:
        ensure_server("127.0.0.1", port, start=True)
    finally:
        listener.close()
    assert started == [["/opt/adbutils/adb", "-P", str(port), "start-server"]]


def test_a_remote_server_is_never_started(monkeypatch):
    from benchmark.devices.adb import transport as adb_transport

    monkeypatch.setattr(adb_transport, "server_listening", lambda host, port, timeout=1.0: False)
    monkeypatch.setattr(adb_transport.subprocess, "run", lambda *a, **k: pytest.fail("must not start adb"))
    with pytest.raises(DeviceError, match="10.1.2.3:5037 is not reachable: check that it runs there"):
        ensure_server("10.1.2.3", 5037, start=True)
