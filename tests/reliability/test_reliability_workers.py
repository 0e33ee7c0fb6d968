"""Issue 14, items 7 and 8: worker processes die with the `ttir run` driver, and a run never
starts more workers than it has episodes or than the machine's cores can use."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from loguru import logger
from tests.support.reliability_support import alive, children, needs_linux, ttir_command, wait_until

from experiments.spec import ExperimentSpec

pytestmark = [pytest.mark.reliability, needs_linux]


def _spec_file(tmp_path: Path, seeds: int, workers: int) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(f"name: orphans\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\nagents: [{{name: p, kind: planner}}]\n"
                 f"guard: [off]\nseeds: {list(range(seeds))}\nworkers: {workers}\nscreenshots: none\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_workers_die_with_a_killed_driver(tmp_path, sig):
    out = tmp_path / "run"
    command, root = ttir_command("run", str(_spec_file(tmp_path, seeds=2000, workers=2)), "--out", str(out),
                                 "--no-progress")
    driver = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        assert wait_until(lambda: len(children(driver.pid)) >= 2 and (out / "episodes.jsonl").exists()
                          and (out / "episodes.jsonl").stat().st_size > 0, 60), "the run did not start its workers"
        workers = children(driver.pid)
        os.kill(driver.pid, sig)
        driver.wait(10)
        assert wait_until(lambda: not any(alive(p) for p in workers), 10), \
            f"workers {sorted(p for p in workers if alive(p))} outlived their driver"
    finally:
        for p in workers | ({driver.pid} if driver.poll() is None else set()):
            if alive(p):
                os.kill(p, signal.SIGKILL)
        driver.wait(10)


def test_workers_are_capped_at_the_episodes(tmp_path):
    from experiments.runner import run

    forks: list[int] = []
    counting = [True]
    os.register_at_fork(after_in_parent=lambda: forks.append(1) if counting[0] else None)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(str(m)), level="INFO")
    logger.enable("experiments")
    try:
        spec = ExperimentSpec.from_yaml(_spec_file(tmp_path, seeds=2, workers=40))
        summary = run(spec, tmp_path / "run", progress=False)
    finally:
        counting[0] = False
        logger.remove(sink)
        logger.disable("experiments")
    assert len(forks) <= 2  # not 40 processes forked for 2 episodes
    assert summary["ran"] == 2 and summary["workers"] == 2
    assert any("2 worker(s) instead of the 40 asked for: only 2 episode(s) to run" in ln for ln in lines)


def test_workers_are_capped_at_a_multiple_of_the_cores():
    from experiments.runner import WORKERS_PER_CORE, available_cores, worker_count

    cores = available_cores()
    n, why = worker_count(1000, 10_000, "local")
    assert n == WORKERS_PER_CORE * cores and why is not None and "core" in why
    assert worker_count(2, 10_000, "local") == (2, None)
    assert worker_count(64, 10, "ray") == (10, "only 10 episode(s) to run")  # a cluster is not this machine
    assert worker_count(8, 0, "local")[0] == 1
