"""A served simulated phone through the REAL adb server (adbutils' bundled adb on a
private port) and real adbutils / AdbDevice: listing, shell (v1 and v2), exec-out,
pull / push, `ttir doctor`, observation equality, settings restore (also on SIGTERM)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from benchmark import SimDevice
from benchmark.devices import AdbDevice
from benchmark.devices.adb import cleanup as adb_cleanup
from benchmark.devices.adb.parse import parse_setting
from tests.support.served_support import adb_server, served  # noqa: F401 - fixtures
from ttir.core.types import Observation

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def device(adb_server, served, tmp_path):
    d = AdbDevice(served.address, port=adb_server.port, settle_seconds=0, action_settle_seconds=0,
                  journal_dir=tmp_path / "journal")
    yield d
    adb_cleanup.unregister(id(d))


def test_adb_connect_lists_the_phone_as_a_device(adb_server, served):
    listing = adb_server.adb("devices", "-l").stdout.decode()
    line = next(ln for ln in listing.splitlines() if ln.startswith(served.address))
    assert line.split()[1] == "device"
    assert "model:ttir_sim_phone" in line and "product:ttir_sim" in line


def test_adb_shell_input_tap_acts_on_the_phone(adb_server, served):
    contacts = next(e for e in served.phone.observe().elements if e.text == "Contacts")
    res = adb_server.adb("-s", served.address, "shell", "input", "tap", *map(str, contacts.center))
    assert res.returncode == 0 and res.stdout == b""
    assert served.phone.observe().package == "com.google.android.contacts"


def test_shell_v2_exit_status_and_stderr(adb_server, served):
    res = adb_server.adb("-s", served.address, "shell", "nosuchtool; echo after=$?")
    assert res.stdout == b"after=127\n" and res.stderr == b"/system/bin/sh: nosuchtool: not found\n"
    assert adb_server.adb("-s", served.address, "shell", "nosuchtool").returncode == 127
    assert adb_server.adb("-s", served.address, "shell", "false").returncode == 1


def test_exec_out_screencap_is_the_simulated_screenshot(adb_server, served):
    png = adb_server.adb("-s", served.address, "exec-out", "screencap", "-p").stdout
    img = Image.open(io.BytesIO(png))
    assert img.format == "PNG" and img.size == (1080, 2400)
    assert img.convert("RGB").tobytes() == SimDevice().observe().screenshot.tobytes()


def test_uiautomator_dump_and_pull_give_the_observation(adb_server, served, tmp_path):
    res = adb_server.adb("-s", served.address, "shell", "uiautomator", "dump")
    assert res.stdout == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    local = tmp_path / "dump.xml"
    pulled = adb_server.adb("-s", served.address, "pull", "/sdcard/window_dump.xml", str(local))
    assert pulled.returncode == 0, pulled.stderr
    expected = SimDevice().observe()
    obs = Observation.from_xml(local.read_text(encoding="utf-8"))
    assert obs.elements == expected.elements and obs.screen_size == expected.screen_size


def test_push_then_read_back_through_the_shell(adb_server, served, tmp_path):
    src = tmp_path / "note.txt"
    src.write_bytes(b"pushed over adb\n" * 5000)
    assert adb_server.adb("-s", served.address, "push", str(src), "/sdcard/Download/note.txt").returncode == 0
    assert served.phone.files.read("/sdcard/Download/note.txt") == src.read_bytes()
    res = adb_server.adb("-s", served.address, "shell", "ls /sdcard/Download && wc -l /sdcard/Download/note.txt")
    assert res.stdout == b"note.txt\n5000\n"


def test_an_unknown_service_fails_its_stream_not_the_phone(adb_server, served):
    res = adb_server.adb("-s", served.address, "reverse", "--list")
    assert res.returncode != 0
    assert adb_server.adb("-s", served.address, "shell", "echo", "still", "here").stdout == b"still here\n"


def test_adbdevice_observes_what_the_simulator_shows(device):
    sim = SimDevice()
    obs, expected = device.observe(), sim.observe()
    assert obs.elements == expected.elements
    assert obs.foreground == expected.foreground
    assert obs.screenshot.tobytes() == expected.screenshot.tobytes()
    contacts = next(e for e in obs.elements if e.text == "Contacts")
    from ttir.core.types import Action

    device.execute(Action(action_type="click", x=contacts.center[0], y=contacts.center[1]))
    sim.execute(Action(action_type="click", x=contacts.center[0], y=contacts.center[1]))
    assert device.observe().elements == sim.observe().elements


def test_doctor_passes_every_check(adb_server, served, monkeypatch, tmp_path, capsys):
    from ttir.cli import main

    monkeypatch.setenv("TTIR_STATE_DIR", str(tmp_path))
    rc = main(["doctor", "--serial", served.address, "--port", str(adb_server.port), "--settle", "0"])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert "[FAIL]" not in printed and "[skip]" not in printed
    assert printed.count("[ ok ]") >= 15 and "ready:" in printed


def test_settings_snapshot_and_restore_round_trip(device, served):
    sim = served.phone.sim
    before = sim.settings
    device.configure(font_scale=1.35, orientation="landscape", density_scale=0.85, dark_theme=True)
    assert (sim.settings.font_scale, sim.settings.orientation, sim.settings.dark_theme) == (1.35, "landscape", True)
    assert device.observe().screen_size == (2400, 1080)
    device.close()
    assert sim.settings == before
    assert parse_setting(device.shell("settings get system font_scale")) == "1.0"
    assert device.shell("wm density").strip() == "Physical density: 420"


CHILD = r"""
import sys, time
from benchmark.devices import AdbDevice
serial, port, journal = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = AdbDevice(serial, port=port, settle_seconds=0, action_settle_seconds=0, journal_dir=journal)
d.configure(font_scale=1.35, orientation="landscape", size_scale=0.8)
print("configured", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_restores_the_served_phone(adb_server, served, tmp_path):
    sim = served.phone.sim
    before = sim.settings
    proc = subprocess.Popen([sys.executable, "-c", CHILD, served.address, str(adb_server.port), str(tmp_path)],
                            cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "configured", proc.stderr.read()
        assert (sim.settings.font_scale, sim.settings.orientation, sim.settings.size_scale) == (1.35, "landscape", 0.8)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sim.settings == before
    assert not list(tmp_path.glob("*.json"))  # the journal is gone: nothing left to restore


def test_a_script_piped_into_adb_shell(adb_server, served):
    res = subprocess.run([adb_server.binary, "-P", str(adb_server.port), "-s", served.address, "shell"],
                         input=b"getprop ro.build.version.sdk\nnosuchtool\necho status=$?\nexit 3\necho never\n",
                         capture_output=True, timeout=60)
    assert res.stdout == b"34\nstatus=127\n" and res.returncode == 3
    assert res.stderr == b"/system/bin/sh: nosuchtool: not found\n"


def test_tasks_run_phone_side_only_on_a_served_phone(device, served, tmp_path):
    from tests.support.adb_fake import FakePhone
    from benchmark import make_task
    from benchmark.device import DeviceError
    from benchmark.devices.phone_task import PhoneTask, for_device

    task = make_task("SystemWifiTurnOff", seed=2)
    assert for_device(task, SimDevice()) is task
    real = AdbDevice(adb_device=FakePhone(), settle_seconds=0, action_settle_seconds=0, journal_dir=None)
    assert for_device(task, real) is task  # `cmd: Can't find service: ttir` on a real phone
    with pytest.raises(DeviceError, match="serve-adb"):
        real.reset(task)
    here = for_device(task, device)
    assert isinstance(here, PhoneTask) and here.goal == task.goal
    obs = device.reset(here)
    assert served.phone.task.task.params == task.params and obs.package == "com.google.android.apps.nexuslauncher"
    assert here.verify(device) is task.verify(served.phone.sim) is False
    served.phone.sim.system.wifi = False  # done on the phone: the verdict comes from its state
    assert here.verify(device) is True
