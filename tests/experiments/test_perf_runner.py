"""``python -m experiments.perf runner``: the worker counts it times, a spec's subset of tasks,
and the figures it reports (today's 1- and 2-worker keys kept). No timed assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from experiments import perf


def test_worker_counts_double_up_to_the_cores_and_end_on_them():
    assert perf.worker_counts(1) == [1]
    assert perf.worker_counts(2) == [1, 2]
    assert perf.worker_counts(6) == [1, 2, 4, 6]
    assert perf.worker_counts(16) == [1, 2, 4, 8, 16]


def test_a_subset_of_a_spec_runs_each_kept_task_as_the_whole_spec_does():
    path = str(Path(__file__).resolve().parents[2] / "experiments" / "specs" / "androidreality.yaml")
    whole = {e.id for e in perf._spec_for_runner(path, None).episodes()}
    assert len(whole) == 384
    some = perf._spec_for_runner(path, 24).episodes()
    assert len(some) == 192 and {e.id for e in some} <= whole  # pairing: paper keeps each task's perturbation
    assert len({e.task for e in some}) == 24
    assert len(perf._spec_for_runner(None, None).episodes()) == 128  # the built-in sweep, as before


def test_the_runner_section_reports_every_count_and_the_figures_of_before(tmp_path, capsys):
    assert perf.main(["runner", "--tasks", "1", "--workers", "2,1", "--rounds", "1", "--json", str(tmp_path / "r.json")]) == 0
    out = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["runner"]
    assert out["episodes"] == 8 and out["baseline_workers"] == 1 and out["rounds"] == 1 and out["cores"] >= 1
    assert set(out["workers"]) == set(out["speedup"]) == set(out["efficiency_vs_linear"]) == {"1", "2"}
    assert all(v > 0 for v in out["workers"].values())
    assert out["speedup"]["1"] == 1.0 and out["efficiency_vs_linear"]["2"] == pytest.approx(out["speedup"]["2"] / 2)
    assert set(out["machine_speedup"]) == {"2"}
    for key in ("episodes_per_s_1_worker", "episodes_per_s_2_workers", "speedup_2_vs_1", "machine_speedup_2_vs_1",
                "parallel_efficiency"):
        assert isinstance(out[key], float), key
    assert out["episodes_per_s_2_workers"] == out["workers"]["2"]
    assert "2 worker(s): 8 episodes in" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["runner", "--workers", "two"], "--workers 'two'"),
    (["runner", "--workers", "0,2"], "1 or more"),
    (["runner", "--rounds", "0"], "1 or more"),
    (["runner", "--tasks", "1", "--workers", "64"], "workers=64: the runner would start"),
    (["runner", "--spec", "no-such-spec.yaml"], "no-such-spec.yaml"),
])
def test_bad_runner_options_are_refused_before_anything_runs(argv, says, capsys):
    with pytest.raises(SystemExit) as exc:
        perf.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
