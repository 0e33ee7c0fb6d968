"""``python -m experiments.perf adb``: one step on a served phone through the real adb
server vs the same step in-process, measured in one run.

A ``ttir serve-adb`` process serves the phone (another process, as a phone is
another machine); adbutils' bundled adb server runs on a private port;
AdbDevice drives the phone through it. Both phones replay the same tasks'
reference solutions side by side, so every action lands on the same screen.
The step the issue names is tap + ``screencap -p`` + ``uiautomator dump``
(AdbDevice.execute + screenshot + dump_xml); AdbDevice.observe() adds the
foreground app (``dumpsys window``) to that, and is reported too.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from contextlib import contextmanager
from typing import Any, Iterator

from benchmark.devices.adbd.spawn import free_port as _free_port  # one free-port rule for every tool
from benchmark.devices.adbd.spawn import start_adb_server

TASKS = ["ContactsAddContact", "SystemWifiTurnOn", "SimpleSmsSend", "ExpenseAddSingle", "ClockTimerEntry",
         "MarkorCreateNote", "FilesDeleteFile", "SystemBrightnessMax"]
ROUNDS = 2


@contextmanager
def private_adb_server() -> Iterator[tuple[str, int]]:
    """A private adb server (adbutils' bundled binary on a free port) for a bench: yields (adb binary,
    port); the server is killed on exit, however the bench ends."""
    from adbutils import adb_path

    adb = adb_path()
    port = start_adb_server(adb)
    try:
        yield adb, port
    finally:
        subprocess.run([adb, "-P", str(port), "kill-server"], capture_output=True, timeout=60)


def _ms(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median_ms": round(statistics.median(values), 2) if values else 0.0,
            "p95_ms": round(sorted(values)[int(0.95 * (len(values) - 1))], 2) if values else 0.0}


def measure_adb() -> dict[str, Any]:
    from adbutils import adb_path

    from benchmark import SimDevice, TASKS as KNOWN, make_task
    from benchmark.devices import AdbDevice
    from benchmark.devices.phone_task import PhoneTask
    from benchmark.plan import ground
    from benchmark.devices.adbd.spawn import spawn

    names = [t for t in TASKS if t in KNOWN]
    load_before = os.getloadavg()[0]
    adb, server_port, phone_port = adb_path(), _free_port(), _free_port()
    subprocess.run([adb, "-P", str(server_port), "start-server"], check=True, capture_output=True, timeout=60)
    phone, _ = spawn(phone_port)
    try:
        serial = f"127.0.0.1:{phone_port}"
        subprocess.run([adb, "-P", str(server_port), "connect", serial], check=True, capture_output=True, timeout=60)
        device = AdbDevice(serial, port=server_port, settle_seconds=0, action_settle_seconds=0,
                           journal_dir=tempfile.mkdtemp(prefix="ttir-perf-adb-"))
        sim = SimDevice()
        step: list[float] = []  # tap + screencap + dump over adb
        observe_step: list[float] = []  # tap + AdbDevice.observe() (screencap + dump + foreground)
        local: list[float] = []  # the same tap + observe in-process
        calls: dict[str, list[float]] = {"tap": [], "screencap": [], "uiautomator dump": [], "foreground": []}
        for _ in range(ROUNDS):
            for name in names:
                task = make_task(name)
                device.reset(PhoneTask(task))
                obs = sim.reset(task)
                for plan_step in task.reference_solution():
                    action = ground(plan_step, obs)
                    if action is None:
                        break
                    if action.action_type != "click":
                        try:
                            device.execute(action)
                            sim.execute(action)
                        except Exception:  # noqa: BLE001 - a timing run, not a correctness run
                            pass
                        obs = sim.observe()
                        continue
                    t0 = time.perf_counter()
                    device.execute(action)
                    t1 = time.perf_counter()
                    device.screenshot()
                    t2 = time.perf_counter()
                    device.dump_xml()
                    t3 = time.perf_counter()
                    device.foreground()
                    t4 = time.perf_counter()
                    step.append((t3 - t0) * 1000)
                    observe_step.append((t4 - t0) * 1000)
                    for key, a, b in (("tap", t0, t1), ("screencap", t1, t2), ("uiautomator dump", t2, t3),
                                      ("foreground", t3, t4)):
                        calls[key].append((b - a) * 1000)
                    t5 = time.perf_counter()
                    sim.execute(action)
                    obs = sim.observe()
                    local.append((time.perf_counter() - t5) * 1000)
        device.close()
    finally:
        phone.terminate()
        try:
            phone.wait(timeout=30)
        except subprocess.TimeoutExpired:
            phone.kill()
        subprocess.run([adb, "-P", str(server_port), "kill-server"], capture_output=True, timeout=60)
    adb_step, in_process = _ms(step), _ms(local)
    return {
        "served_step_tap_screencap_dump": adb_step,
        "served_step_with_foreground": _ms(observe_step),
        "in_process_step": in_process,
        "ratio_served_to_in_process": round(adb_step["median_ms"] / in_process["median_ms"], 1)
        if in_process["median_ms"] else None,
        "per_call_median_ms": {k: _ms(v)["median_ms"] for k, v in calls.items()},
        "acceptance_150ms": adb_step["median_ms"] <= 150.0,
        # three processes (agent, adb server, phone) take turns per call: an oversubscribed machine shows here
        "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "cpus": os.cpu_count(),
        "tasks": names,
    }
