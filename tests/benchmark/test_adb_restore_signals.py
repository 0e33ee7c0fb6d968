"""A process that changed a phone's settings restores them when it is stopped:
SIGTERM, SIGINT, a previous handler of its own, or a plain exit without close().

Each case runs a child Python process whose AdbDevice drives a FakePhone that
appends every shell command to a log file, which the test then reads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

CHILD = r"""
import signal, sys, time
from tests.support.adb_fake import FakePhone
from benchmark.devices import AdbDevice

log, journal, mode = sys.argv[1:4]
if mode == "chain":
    def own_handler(signum, frame):
        open(log + ".handler", "w").write("the program's own handler ran")
        sys.exit(3)
    signal.signal(signal.SIGTERM, own_handler)
if mode == "ignored":  # a mark in the phone's log: every signal sent before it has been handled
    signal.signal(signal.SIGUSR1, lambda signum, frame: open(log, "a").write("checkpoint\n"))
phone = FakePhone(log_path=log)
device = AdbDevice(adb_device=phone, settle_seconds=0, action_settle_seconds=0, journal_dir=journal)
device.configure(font_scale=1.35, orientation="landscape", size_scale=0.8)
print("configured", flush=True)
if mode == "exit":
    sys.exit(0)  # no close(): atexit must restore
time.sleep(60)
"""

RESTORES = {
    "settings put system font_scale 1.0",
    "settings put system accelerometer_rotation 1",
    "settings put system user_rotation 0",
    "wm size reset",
}


def _sigint(disposition: Any) -> Callable[[], None]:
    """Start the child with this SIGINT disposition, whatever the suite was started with (a
    suite started with `&` from a script hands its children SIGINT ignored)."""
    return lambda: signal.signal(signal.SIGINT, disposition)


def _run_child(tmp_path: Path, mode: str, sig: signal.Signals | None,
               then: tuple[signal.Signals, ...] = ()) -> tuple[int, list[str], Path]:
    """Run CHILD; send it ``sig`` once it has configured the phone (and ``then``, in order, right
    after). Mode "ignored" starts it with SIGINT ignored, as `cmd &` in a script does; the
    others with Python's own Ctrl-C."""
    log = tmp_path / "commands.log"
    journal = tmp_path / "journal"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(log), str(journal), mode], cwd=str(ROOT), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=None if sys.platform == "win32"
                            else _sigint(signal.SIG_IGN if mode == "ignored" else signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "configured", proc.stderr.read() if proc.stderr else line
        for s in (sig, *then):
            if s is not None:
                proc.send_signal(s)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return rc, log.read_text(encoding="utf-8").splitlines(), journal


def _after_configure(lines: list[str]) -> list[str]:
    return lines[lines.index("wm size 864x1920") + 1:]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_restores_then_terminates(tmp_path):
    rc, lines, journal = _run_child(tmp_path, "default", signal.SIGTERM)
    assert RESTORES <= set(_after_configure(lines))
    assert rc == -signal.SIGTERM  # still "killed by SIGTERM" for whoever waits on it
    assert not list(journal.glob("*.json"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_restores_then_interrupts(tmp_path):
    rc, lines, _ = _run_child(tmp_path, "default", signal.SIGINT)
    assert RESTORES <= set(_after_configure(lines))
    assert rc != 0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_ignored_sigint_leaves_the_settings_to_the_run_that_goes_on(tmp_path):
    # `sweep.py &` from a script ignores SIGINT: a Ctrl-C in that terminal does not stop the sweep,
    # and restoring then took the settings from under the episodes it went on running
    rc, lines, journal = _run_child(tmp_path, "ignored", signal.SIGINT, then=(signal.SIGUSR1, signal.SIGTERM))
    after = _after_configure(lines)
    mark = after.index("checkpoint")  # handled after SIGINT (Python runs handlers in signal order)
    assert not RESTORES & set(after[:mark]), after  # SIGINT changed nothing
    assert RESTORES <= set(after[mark + 1:])  # SIGTERM stops the program: then it restores
    assert rc == -signal.SIGTERM
    assert not list(journal.glob("*.json"))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_chains_to_the_programs_own_handler(tmp_path):
    rc, lines, _ = _run_child(tmp_path, "chain", signal.SIGTERM)
    assert RESTORES <= set(_after_configure(lines))
    assert rc == 3 and (tmp_path / "commands.log.handler").exists()


def test_exit_without_close_restores_at_interpreter_exit(tmp_path):
    rc, lines, journal = _run_child(tmp_path, "exit", None)
    assert rc == 0
    assert RESTORES <= set(_after_configure(lines))
    assert not list(journal.glob("*.json"))
