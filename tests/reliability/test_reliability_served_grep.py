"""Issue 31, item 2: one client's runaway ``grep`` must not freeze the other phones of a
``serve-adb`` process (Python's ``re`` holds the interpreter for a whole match)."""

from __future__ import annotations

import threading
import time

import pytest

from benchmark import SimDevice
from benchmark.devices.adbd import ServedPhone
from tests.support.reliability_support import needs_linux

pytestmark = pytest.mark.reliability

RUNAWAY = "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! | grep -E '(a+)+$'"


@needs_linux
def test_a_runaway_grep_is_stopped_and_does_not_hold_another_phone():
    hostile, other = ServedPhone(SimDevice()), ServedPhone(SimDevice())
    result: dict[str, object] = {}

    def attack() -> None:
        result["run"] = hostile.run(RUNAWAY)

    attacker = threading.Thread(target=attack)
    attacker.start()
    waits = []
    try:
        while attacker.is_alive() and len(waits) < 200:
            started = time.monotonic()
            assert other.run("echo hi").stdout == b"hi\n"
            waits.append(time.monotonic() - started)
            time.sleep(0.05)
    finally:
        attacker.join(60)
    assert not attacker.is_alive(), "the runaway grep was never stopped"
    run = result["run"]
    assert run.status == 2 and b"took longer than" in run.merged  # type: ignore[attr-defined]
    assert len(waits) >= 5 and max(waits) < 1.0  # the other phone answered all along


def test_plain_and_regex_greps_still_match():
    phone = ServedPhone(SimDevice())
    assert phone.run("echo 'a.b' | grep -F .").stdout == b"a.b\n"
    assert phone.run("getprop | grep -c -E 'ro.build.version.(sdk|release)'").stdout == b"2\n"  # in a process of its own
    assert phone.run("echo 'x1 y22' | grep -o -E '[0-9]+'").stdout == b"1\n22\n"
    assert phone.run("echo hi | grep -q nothing").status == 1
