"""A sweep on two `ttir serve-adb` phones (devices: {kind: adb}) under the Ray executor,
through the real adb server, gives the same per-episode outcomes as the simulated
phones (devices: {kind: sim}) for the same seeds. The served phones set each task
up and give its verdict (`cmd ttir`); the perturbations run in the runner, as on
any real phone."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xdist_group("ray")]  # one Ray instance at a time, on one test worker

ray = pytest.importorskip("ray")

from experiments.runner import run as run_spec  # noqa: E402
from experiments.spec import AgentSpec, DeviceSpec, ExperimentSpec  # noqa: E402
from tests.support.served_support import adb_server, free_ports  # noqa: E402,F401 - fixture
from benchmark.devices.adbd.spawn import spawn  # noqa: E402

OUTCOME = ("status", "success", "steps", "termination", "events")


@pytest.fixture(scope="module")
def served_phones(adb_server):
    base = free_ports(2)
    proc, _ = spawn(base, "--phones", "2")
    try:
        serials = [f"127.0.0.1:{base}", f"127.0.0.1:{base + 1}"]
        for s in serials:
            adb_server.connect(s)
        yield serials
        proc.send_signal(signal.SIGTERM)  # `ttir serve-adb` stops cleanly on SIGTERM
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]


def test_served_phones_under_ray_match_the_simulator(adb_server, served_phones, tmp_path):
    base = dict(name="served", tasks=["SystemWifiTurnOn"],  # one task: 12 episodes, successes and failures
                # a notification whose Reply opens "Messages" (the SMS app, by the simulator's name), a
                # settings perturbation through `settings put`
                perturbations=["clean", "notification_message", "font_size_large"],
                agents=[AgentSpec(name="planner", kind="planner"), AgentSpec(name="reference", kind="reference")],
                guard=["off", "rules"], seeds=[0], workers=2, screenshots="failures", screenshot_width=96,
                budget_multiplier=4)
    sim = ExperimentSpec(**base)
    phones = ExperimentSpec(**base, devices=DeviceSpec(kind="adb", serials=served_phones, options={
        "port": adb_server.port, "settle_seconds": 0, "action_settle_seconds": 0,
        "journal_dir": str(tmp_path / "journal")}))
    run_spec(sim, tmp_path / "sim", workers=2, progress=False)
    summary = run_spec(phones, tmp_path / "adb", executor="ray", progress=False)
    assert summary["ran"] == len(phones.episodes()) and summary["errors_this_run"] == 0

    local = {r["id"]: r for r in lines(tmp_path / "sim")}
    remote = {r["id"]: r for r in lines(tmp_path / "adb")}
    assert sorted(remote) == sorted(local) == sorted(e.id for e in sim.episodes())
    for eid, rec in local.items():
        assert {k: remote[eid].get(k) for k in OUTCOME} == {k: rec.get(k) for k in OUTCOME}, eid
    assert {r["device"] for r in remote.values()} == {f"adb:{s}" for s in served_phones}  # both phones served
    assert any(not r["success"] for r in local.values()), "the spec should include a failure"
    assert any(r["success"] for r in local.values())
    assert any(r["events"].get("app_launched") for r in remote.values())  # "Messages" opened on the phone
