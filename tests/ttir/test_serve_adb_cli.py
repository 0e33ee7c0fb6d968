"""`ttir serve-adb` end to end: a served phone with a task and perturbations, reached
through the real adb server; its verdict and event log while it runs; a clean
stop on SIGTERM that writes the final verdicts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.support.served_support import adb_server, free_ports  # noqa: F401 - fixture
from benchmark.devices.adbd.spawn import READY, spawn


def _serve_adb(*args: str, preexec_fn=None) -> "subprocess.Popen[str]":
    """`ttir serve-adb ARGS…` in its own process, its output piped."""
    code = "import sys; from ttir.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, "serve-adb", *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn)


def _until_listening(proc: "subprocess.Popen[str]") -> None:
    assert proc.stdout is not None
    printed: list[str] = []
    while READY not in printed:
        line = proc.stdout.readline()
        assert line, "serve-adb ended before it listened"
        printed.append(line.strip())


def test_serve_a_task_with_perturbations_then_stop(adb_server, tmp_path, capsys):
    from ttir.cli import main

    port = free_ports(1)
    out = tmp_path / "verdicts.json"
    proc, printed = spawn(port, "--task", "SystemWifiTurnOn", "--perturb", "popup_permission", "--perturb",
                          "font_size_large", "--seed", "1", "--out", str(out))
    try:
        serial = f"127.0.0.1:{port}"
        assert f"adb connect {serial}" in printed and any(p.startswith("goal: ") for p in printed)
        adb_server.connect(serial)

        def shell(command: str) -> str:
            return adb_server.adb("-s", serial, "shell", command).stdout.decode()

        assert shell("settings get system font_scale") == "1.35\n"  # a state perturbation, visible to adb
        shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
        dump = shell("uiautomator dump /dev/tty")
        assert "com.android.settings" in dump and "permissioncontroller" in dump  # the pop-up is in the dump

        # a tap on the pop-up's decline button goes to the pop-up, which closes (the app stays)
        from ttir.core.types import Observation

        obs = Observation.from_xml(dump)
        deny = next(e for e in obs.elements if e.resource_id.endswith("permission_deny_button"))
        shell(f"input tap {deny.center[0]} {deny.center[1]}")
        after = shell("uiautomator dump /dev/tty")
        assert "permissioncontroller" not in after and "com.android.settings" in after

        assert main(["serve-adb", "--verdict", str(port), "--adb-port", str(adb_server.port)]) == 0
        verdict = json.loads(capsys.readouterr().out)
        assert (verdict["task"], verdict["success"]) == ("SystemWifiTurnOn", False)
        assert {"overlay_shown", "overlay_dismissed"} <= {e["event"] for e in verdict["events"]}

        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0
        assert f"{serial}: SystemWifiTurnOn success=False" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
    final = json.loads(out.read_text(encoding="utf-8"))
    assert final[0]["address"] == serial and final[0]["task"] == "SystemWifiTurnOn"
    assert any(e["event"] == "overlay_shown" for e in final[0]["events"])


def test_a_non_loopback_host_is_served_with_a_warning_that_names_the_risk():
    """Issue 31, item 4: --host 0.0.0.0 opens an unauthenticated shell to the network; it used to say nothing."""
    from ttir.cli.serve_adb import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("phone-host")
    proc = _serve_adb("--port", str(free_ports(1)), "--host", "0.0.0.0")
    try:
        _until_listening(proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert "WARNING: --host 0.0.0.0" in err and "no authentication" in err and "shell commands" in err


def test_ctrl_c_stops_a_command_started_with_sigint_ignored():
    """A script that starts `ttir serve-adb … &` (no job control) hands it SIGINT ignored, and Python then
    never raises KeyboardInterrupt: `kill -INT` did nothing and the command held its port until SIGKILL.
    The same holds for `ttir proxy` and `ttir watch`, which stop through the same StopSignal."""

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a script does to its child

    port = free_ports(1)
    proc = _serve_adb("--port", str(port), "--task", "SystemWifiTurnOn", preexec_fn=ignore_sigint)
    try:
        _until_listening(proc)
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"127.0.0.1:{port}: SystemWifiTurnOn success=False" in rest and "Traceback" not in err


def test_stop_signal_asks_on_the_first_ctrl_c_and_puts_back_what_sigint_did_before():
    import os
    import threading

    from ttir.cli.stopping import StopSignal

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set on the main thread only")
    before = signal.getsignal(signal.SIGINT)
    try:
        for inherited in (signal.SIG_IGN, signal.default_int_handler):
            signal.signal(signal.SIGINT, inherited)
            with StopSignal() as stop:
                os.kill(os.getpid(), signal.SIGINT)  # lands before any wait: not lost, and no exception
                assert stop.event.wait(5)
                stop.wait()  # returns at once
                with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C stops whatever runs
                    os.kill(os.getpid(), signal.SIGINT)
                    stop.event.wait(5)
                    time.sleep(5)
            assert signal.getsignal(signal.SIGINT) == inherited

        def own(signum, frame):  # a program's own handler is left alone
            pass

        signal.signal(signal.SIGINT, own)
        with StopSignal() as stop:
            assert signal.getsignal(signal.SIGINT) is own
        assert signal.getsignal(signal.SIGINT) is own and not stop.event.is_set()
    finally:
        signal.signal(signal.SIGINT, before)
