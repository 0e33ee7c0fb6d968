"""`ttir doctor`: plain-words checks, non-zero exit when something needed is missing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.adb_fake import FakeAdbServer, FakePhone, free_port
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb.doctor import CHECKS, run_checks
from ttir.cli import main


@pytest.fixture(autouse=True)
def no_env(monkeypatch, tmp_path):
    for var in ("ANDROID_SERIAL", "ANDROID_ADB_SERVER_HOST", "ANDROID_ADB_SERVER_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TTIR_STATE_DIR", str(tmp_path / "state"))


def _checks(phone: FakePhone, **kw) -> dict:
    kw.setdefault("journal_dir", None)
    out = {c.name: c for c in run_checks(adb_device=phone, settle_seconds=0, **kw)}
    assert adb_cleanup.registered() == 0
    return out


def test_unreachable_server_exits_non_zero_with_a_clear_message(capsys):
    port = free_port()
    rc = main(["doctor", "--host", "127.0.0.1", "--port", str(port), "--no-start-server"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert f"[FAIL] adb server: the adb server at 127.0.0.1:{port} is not reachable" in out
    assert "adb start-server" in out and "[skip] screencap" in out and "not ready" in err


def test_unreachable_server_from_a_real_process():
    port = free_port()
    proc = subprocess.run([sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main())", "doctor", "--port", str(port), "--no-start-server",
                           "--skip-knobs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "is not reachable" in proc.stdout and "knob" not in proc.stdout


@pytest.mark.parametrize(
    "devices,args,message",
    [
        ([], [], "no Android device is attached"),
        ([("R58M", "unauthorized")], [], "R58M is unauthorised: unlock the phone and accept the 'Allow USB debugging?'"),
        ([("A", "device"), ("B", "device")], [], "several devices are attached (A, B)"),
        ([("A", "device")], ["--serial", "Z"], "Z is not attached"),
    ],
)
def test_device_problems_exit_non_zero(capsys, devices, args, message):
    server = FakeAdbServer(devices)
    try:
        rc = main(["doctor", "--port", str(server.port), "--no-start-server", *args])
    finally:
        server.close()
    out, _ = capsys.readouterr()
    assert rc == 1
    assert "[ ok ] adb server: answers at 127.0.0.1" in out and "adb 1.0.41" in out
    assert "[FAIL] device: " in out and message in out


def test_help_explains_every_check(capsys):
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    out = capsys.readouterr().out
    for name in ("adb server", "device", "screencap", "uiautomator dump", "settings writable", "knob NAME",
                 "unauthorised", "exit code"):
        assert name in out


def test_a_healthy_phone_passes_and_is_left_as_it_was():
    phone = FakePhone()
    before = phone.state()
    checks = _checks(phone)
    assert set(checks) == set(CHECKS) - {"adb server", "device"}
    assert not [c for c in checks.values() if c.blocking]
    assert checks["uiautomator dump"].detail.startswith("6 nodes")
    assert checks["knob orientation"].status == "ok" and "restored" in checks["knob orientation"].detail
    assert checks["knob date_format"].status == "warn" and "locale" in checks["knob date_format"].detail
    assert phone.state() == before


def test_missing_capabilities_fail():
    phone = FakePhone()
    phone.responses["cmd uimode night"] = "cmd: Can't find service: uimode"
    phone.responses["screencap -p"] = "Error: screencap failed"
    phone.dump_failures = 99
    checks = _checks(phone)
    assert checks["knob dark_theme"].blocking and "Android 10" in checks["knob dark_theme"].detail
    assert checks["screencap"].blocking and "did not return a PNG" in checks["screencap"].detail
    assert checks["uiautomator dump"].blocking
    assert checks["knob font_scale"].status == "ok"


def test_a_knob_that_does_not_stick_fails():
    phone = FakePhone()
    phone.responses["wm density 462"] = ""  # accepted, silently ignored
    checks = _checks(phone)
    assert checks["knob density_scale"].blocking
    assert "wm_density is None, expected '462'" in checks["knob density_scale"].detail


def test_skip_knobs_changes_nothing():
    phone = FakePhone()
    checks = _checks(phone, knobs=False)
    assert not [n for n in checks if n.startswith("knob ")]
    assert not [c for c in phone.calls if c.startswith(("wm density ", "wm size ", "cmd uimode night "))]


def test_leftover_settings_are_reported_and_restored(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / f"FAKE0001.{pid}.json").write_text(json.dumps(
        {"serial": "FAKE0001", "pid": pid, "written": 1.0, "originals": {"font_scale": "1.0"}}))
    phone = FakePhone()
    phone.system["font_scale"] = "1.3"
    checks = _checks(phone, journal_dir=tmp_path, knobs=False)
    assert checks["leftover settings"].status == "warn" and str(pid) in checks["leftover settings"].detail
    assert phone.system["font_scale"] == "1.0"


def test_a_phone_that_stops_answering_is_reported():
    from adbutils.errors import AdbError

    phone = FakePhone()
    phone.errors = [AdbError("device unauthorized.")]
    checks = list(run_checks(adb_device=phone, settle_seconds=0, journal_dir=None))
    last = checks[-1]
    assert last.name == "device" and last.blocking and "accept the 'Allow USB debugging?' prompt" in last.detail
