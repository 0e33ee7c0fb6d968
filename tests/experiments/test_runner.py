"""The local runner: spec errors that name the key, resume after SIGKILL with exactly
one record per combination, an episode that raises is recorded and the device restored."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from experiments.runner import run
from experiments.spec import AgentSpec, ExperimentSpec
from experiments.store import RunStore, SpecChanged

SPEC_YAML = """\
name: killme
tasks: [SystemWifiTurnOn, ExpenseAddSingle, SimpleSmsSend]
perturbations: [clean, font_size_large, popup_permission, action_drop_random]
agents:
  - {name: planner, kind: planner}
guard: ["off", rules]
seeds: [0]
budget_multiplier: 4
workers: 2
screenshots: none
"""


def _write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


# ------------------------------------------------------------------------------ spec errors


@pytest.mark.parametrize("body, names", [
    ("workerz: 2\n", ["workerz", "unknown key", "valid keys here", "did you mean 'workers'"]),
    ("workers: 0\n", ["workers", "0"]),
    ("guard: [off, sometimes]\n", ["guard", "sometimes"]),
])
def test_spec_errors_name_the_key_and_the_value(tmp_path, body, names):
    text = "name: x\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\nagents: [{name: a, kind: replay}]\n" + body
    with pytest.raises(ValueError) as err:
        ExperimentSpec.from_yaml(_write(tmp_path, text))
    for n in names:
        assert n in str(err.value)


def test_unknown_task_and_perturbation_point_at_the_listing(tmp_path):
    base = "name: x\nagents: [{name: a, kind: replay}]\n"
    with pytest.raises(ValueError, match=r"spec.yaml:3: tasks.0: unknown task 'Nope'; see `ttir tasks`") as err:
        ExperimentSpec.from_yaml(_write(tmp_path, base + "tasks: [Nope]\nperturbations: [clean]\n"))
    assert "SystemWifiTurnOn" not in str(err.value)  # the pointer, not a wall of 48 names
    with pytest.raises(ValueError) as err:
        ExperimentSpec.from_yaml(_write(tmp_path, base + "tasks: [SystemWifiTurnOn]\nperturbations: [fontsize]\n", "b.yaml"))
    assert "fontsize" in str(err.value) and "did you mean 'font_size_" in str(err.value)
    assert "ttir perturbations" in str(err.value)


# ------------------------------------------------------------------------------ resume


def test_sigkill_midway_then_rerun_gives_one_record_per_combination(tmp_path):
    spec_path = _write(tmp_path, SPEC_YAML)
    spec = ExperimentSpec.from_yaml(spec_path)
    expected = {e.id for e in spec.episodes()}
    assert len(expected) == 3 * 4 * 2
    out = tmp_path / "run"
    cmd = [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main())", "run", str(spec_path), "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while len(_lines(out / "episodes.jsonl")) < 4:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no episode finished in time"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, mid-run
        proc.wait()
    first = _lines(out / "episodes.jsonl")
    assert 4 <= len(first) < len(expected), "the kill should land midway"

    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{len(first)} already done" in done.stdout
    records = RunStore(out).records()
    ids = [r["id"] for r in records]
    assert sorted(ids) == sorted(expected)  # every combination once, none twice
    assert all(r["status"] == "ok" for r in records)
    assert all((out / "episodes" / i / "trajectory.json").exists() for i in ids)

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and f"0 episodes run, {len(expected)} already done" in again.stdout
    assert len(_lines(out / "episodes.jsonl")) == len(expected)


def test_a_line_cut_short_is_ignored_and_trimmed(tmp_path):
    store = RunStore(tmp_path)
    store.append({"id": "a", "status": "ok"})
    with store.path.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "b", "sta')  # a crash in the middle of a write
    assert store.done_ids() == {"a"}
    store.append({"id": "c", "status": "ok"})
    assert [r["id"] for r in store.records()] == ["a", "c"]
    assert store.path.read_text(encoding="utf-8").count("\n") == 2


# ------------------------------------------------------------------------------ raising episodes


def _in_process_spec(monkeypatch, run_episode, name: str, perturbations: list[str]) -> ExperimentSpec:
    """A one-task, one-worker spec whose episodes go through ``run_episode`` (in this process)."""
    import benchmark
    import experiments.worker as worker

    monkeypatch.setattr(benchmark, "run_episode", run_episode)
    monkeypatch.setattr(worker, "_DEVICE", None)  # a fresh device for this test
    return ExperimentSpec(name=name, tasks=["SystemWifiTurnOn"], perturbations=perturbations,
                          agents=[AgentSpec(name="planner", kind="planner")], guard=["off"], workers=1,
                          screenshots="none", budget_multiplier=4)


def test_an_episode_that_raises_is_recorded_the_device_restored_and_the_run_goes_on(tmp_path, monkeypatch):
    import benchmark

    real_run_episode = benchmark.run_episode
    seen: dict[str, tuple] = {}

    def run_episode(env, task, agent, budget, **kw):
        result = real_run_episode(env, task, agent, budget, **kw)
        sim = env.inner
        seen[env.perturbations[0].name if env.perturbations else "clean"] = (sim, sim.settings.font_scale)
        if env.perturbations:
            raise RuntimeError("the harness failed after the episode, on purpose")
        return result

    spec = _in_process_spec(monkeypatch, run_episode, "raise", ["font_size_large", "clean"])
    summary = run(spec, tmp_path, progress=False)
    assert summary["ran"] == 2 and summary["errors_this_run"] == 1
    recs = {r["perturbation"]: r for r in RunStore(tmp_path).records()}
    bad = recs["font_size_large"]
    assert bad["status"] == "error" and bad["success"] is False
    assert "Traceback" in bad["error"] and "on purpose" in bad["error"]
    assert recs["clean"]["status"] == "ok" and recs["clean"]["success"] is True
    sim, font_during = seen["font_size_large"]
    assert font_during == pytest.approx(1.35)  # the perturbation was in force when the error escaped
    assert sim.settings.font_scale == pytest.approx(1.0)  # ... and was restored on the way out
    assert seen["clean"][1] == pytest.approx(1.0)


def test_retry_errors_reruns_only_the_episodes_that_raised_and_replaces_their_records(tmp_path, monkeypatch):
    import benchmark

    real_run_episode = benchmark.run_episode
    broken = {"on": True}

    def run_episode(env, task, agent, budget, **kw):
        if broken["on"] and env.perturbations:
            raise RuntimeError("a harness bug, fixed before the retry")
        return real_run_episode(env, task, agent, budget, **kw)

    spec = _in_process_spec(monkeypatch, run_episode, "retry", ["clean", "popup_permission"])
    first = run(spec, tmp_path, progress=False)
    assert first["errors_this_run"] == 1
    broken["on"] = False
    plain = run(spec, tmp_path, progress=False)
    assert plain["ran"] == 0  # an error is a finished episode: a plain resume keeps it
    again = run(spec, tmp_path, progress=False, retry_errors=True)
    assert again["ran"] == 1 and again["errors_this_run"] == 0
    recs = RunStore(tmp_path).records()
    assert sorted(r["perturbation"] for r in recs) == ["clean", "popup_permission"]  # one record each
    assert all(r["status"] == "ok" for r in recs)


# ------------------------------------------------------------------------------ one run, one spec per folder

TINY_YAML = """\
name: tiny
tasks: [SystemWifiTurnOn]
perturbations: [clean]
agents:
  - {name: replay, kind: replay}
guard: ["off"]
budget_multiplier: 4
workers: 1
screenshots: none
"""


def test_two_runs_on_one_folder_record_no_episode_twice(tmp_path):
    spec_path = _write(tmp_path, SPEC_YAML)
    expected = {e.id for e in ExperimentSpec.from_yaml(spec_path).episodes()}
    out = tmp_path / "run"
    cmd = [sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main())", "run", str(spec_path),
           "--out", str(out), "--no-progress"]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while "pid" not in ((out / ".run.lock").read_text(encoding="utf-8") if (out / ".run.lock").exists() else ""):
            assert first.poll() is None and time.monotonic() < deadline, "the first run never took the folder"
            time.sleep(0.02)
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert first.poll() is None, "the first run ended before the second started: nothing was tested"
    finally:
        first.wait(timeout=600)
    assert second.returncode == 2
    assert f"in use by ttir run pid {first.pid}" in second.stderr and "--out" in second.stderr
    assert "Traceback" not in second.stderr
    ids = [r["id"] for r in RunStore(out).records()]
    assert sorted(ids) == sorted(expected)  # every episode once: the second run recorded none


def test_a_changed_spec_is_refused_and_force_keeps_the_earlier_one(tmp_path):
    out = tmp_path / "run"
    spec = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML))
    assert run(spec, out, progress=False)["ran"] == 1
    recorded = (out / "spec.json").read_text(encoding="utf-8")

    faster = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML.replace("workers: 1", "workers: 2"), "b.yaml"))
    assert run(faster, out, progress=False)["skipped"] == 1  # how fast is not what: resumed

    changed = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML.replace("budget_multiplier: 4", "budget_multiplier: 8"),
                                              "c.yaml"))
    with pytest.raises(SpecChanged, match=r"budget_multiplier: 4\.0 -> 8\.0.*new --out.*--force"):
        run(changed, out, progress=False)
    assert json.loads((out / "spec.json").read_text(encoding="utf-8"))["budget_multiplier"] == 4.0  # not overwritten

    done = subprocess.run([sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main())", "run",
                           str(tmp_path / "c.yaml"), "--out", str(out), "--no-progress"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "budget_multiplier" in done.stderr and "Traceback" not in done.stderr

    assert run(changed, out, progress=False, force=True)["skipped"] == 1
    assert json.loads((out / "spec.1.json").read_text(encoding="utf-8"))["budget_multiplier"] == 4.0
    assert json.loads((out / "spec.json").read_text(encoding="utf-8"))["budget_multiplier"] == 8.0
    assert recorded != (out / "spec.json").read_text(encoding="utf-8")


def test_an_out_folder_that_cannot_be_made_is_one_line_naming_it(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", "import sys; from ttir.cli import main; sys.exit(main())", "run",
                           str(_write(tmp_path, TINY_YAML)), "--out", str(blocker / "run"), "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "Not a directory" in done.stderr and str(blocker) in done.stderr


@pytest.mark.parametrize("workers", [0, -2, True, 1.5])
def test_a_worker_count_below_one_is_refused_before_anything_is_written(tmp_path, workers):
    # --workers 0 used to run silently with the spec's count; -2 failed only after the folder was claimed
    spec = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML))
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=re.escape(f"workers={workers!r} must be") + r".*"
                       + re.escape(f"the spec's `workers` ({spec.workers})")):
        run(spec, out, workers=workers, progress=False)
    assert not out.exists()


@pytest.mark.parametrize("executor, options, message", [
    ("rey", {}, "executor='rey' is unknown; expected local or ray; did you mean 'ray'?"),
    ("local", {"address": "auto"}, "executor option(s) address: the local executor takes none"),
    ("ray", {"adress": "auto"}, "executor option(s) adress: the Ray executor takes address"),
    ("local", {"wokers": 2}, "wokers: not an argument of run, nor an option of its executor; did you mean 'workers'?"),
])
def test_an_unknown_executor_or_option_is_refused_before_anything_is_written(tmp_path, executor, options, message):
    # 'rey' failed only after the run folder was claimed; an option the local executor does not take was dropped
    spec = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML))
    out = tmp_path / "run"
    with pytest.raises(ValueError) as info:
        run(spec, out, executor=executor, progress=False, **options)
    assert message in str(info.value)
    assert not out.exists()


def test_a_run_folders_spec_or_trajectory_that_is_no_json_is_named(tmp_path, capsys):
    from experiments.metrics.episodes import RunData
    from ttir.cli import main

    out = tmp_path / "run"
    run(ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML)), out, progress=False)
    data = RunData.load(out)
    (traj,) = list((out / "episodes").glob("*/trajectory.json"))
    traj.write_text('{"steps": [', encoding="utf-8")  # cut short
    with pytest.raises(ValueError, match=re.escape(f"{traj} is not valid JSON")):
        data.trajectory(data.records[0])
    (out / "spec.json").write_text("{not json", encoding="utf-8")
    # the parser's position alone reached the terminal: "Expecting property name … line 1 column 2"
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 2
    err = capsys.readouterr().err
    assert f"ttir report: error: {out / 'spec.json'} is not valid JSON (Expecting property name" in err


def test_an_address_without_the_ray_executor_is_refused_on_the_command_line(tmp_path, capsys):
    from ttir.cli import main

    # the command line dropped --address unless --executor ray was given: the run went to local workers
    out = tmp_path / "run"
    assert main(["run", str(_write(tmp_path, TINY_YAML)), "--out", str(out), "--address", "auto",
                 "--no-progress"]) == 2
    assert "executor option(s) address: the local executor takes none" in capsys.readouterr().err
    assert not out.exists()


def test_a_ray_address_where_no_head_node_answers_is_refused_at_once(tmp_path, capsys):
    import socket

    from ttir.cli import main

    # ray.init retried such an address for minutes, a warning every few seconds, before failing
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once the socket closes: nothing listens there
    out = tmp_path / "run"
    assert main(["run", str(_write(tmp_path, TINY_YAML)), "--out", str(out), "--executor", "ray",
                 "--address", f"127.0.0.1:{port}", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"no Ray head node answers at 127.0.0.1:{port}" in err and "ray start --head" in err
    assert not out.exists()


def test_real_phones_on_the_local_executor_are_refused_before_anything_is_written(tmp_path):
    # the refusal came from the executor, after the run folder had been made and spec.json written
    spec = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML + "devices: {kind: adb}\n"))
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"devices.kind='adb' runs on the Ray executor"):
        run(spec, out, progress=False)
    assert not out.exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"spec": 42}, "spec=42 (int): expected the path of a spec file, a mapping of one or an ExperimentSpec"),
    ({"agents": ["mine"]}, "agents=['mine'] (list): expected {agent name: factory}"),
])
def test_the_python_run_names_a_spec_or_agents_of_the_wrong_kind(tmp_path, kwargs, message):
    import experiments

    kwargs = {"spec": _write(tmp_path, TINY_YAML), **kwargs}
    with pytest.raises(TypeError) as info:
        experiments.run(kwargs.pop("spec"), tmp_path / "run", progress=False, **kwargs)
    assert message in str(info.value)
    assert not (tmp_path / "run").exists()


def test_an_out_path_that_is_a_file_is_refused_and_left_as_it_was(tmp_path, capsys):
    from ttir.cli import main

    mine = tmp_path / "notes.txt"
    mine.write_text("mine", encoding="utf-8")
    assert main(["run", str(_write(tmp_path, TINY_YAML)), "--out", str(mine), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "the run folder is an existing file" in err and str(mine) in err, err
    assert mine.read_text(encoding="utf-8") == "mine"


def test_a_guard_config_that_applies_to_no_episode_is_warned_of(tmp_path):
    # guard_config with every guard mode off changed nothing, without a word
    from loguru import logger

    warnings: list[str] = []
    sink = logger.add(lambda m: warnings.append(str(m)), level="WARNING")
    logger.enable("experiments")
    try:
        spec = ExperimentSpec.from_yaml(_write(tmp_path, TINY_YAML + "guard_config: {stuck_loop: {window: 3}}\n"))
        assert run(spec, tmp_path / "run", progress=False)["ran"] == 1
    finally:
        logger.remove(sink)
        logger.disable("experiments")
    assert any("guard_config is set, and every guard mode of the spec is off" in w for w in warnings), warnings


def test_an_empty_spec_mapping_is_refused_as_an_empty_spec_file_is(tmp_path, monkeypatch):
    # experiments.run({}) ran every task under every perturbation (3,360 episodes) into runs/experiment
    import experiments

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="the spec is empty; expected a mapping of spec keys"):
        experiments.run({}, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_of_other_files_is_refused_as_a_run_folder_and_left_as_it_was(tmp_path, capsys):
    from ttir.cli import main

    spec = _write(tmp_path, TINY_YAML)
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("mine", encoding="utf-8")
    assert main(["run", str(spec), "--out", str(mine), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"the run folder {mine} holds other files (todo.txt) and none of a run's" in err, err
    assert [p.name for p in mine.iterdir()] == ["todo.txt"]
    # an empty folder (a hidden file and the spec itself aside) is a new run's, and a run's folder is resumed
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".DS_Store").write_text("")
    (tmp_path / "empty" / "spec.yaml").write_text(spec.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["run", str(tmp_path / "empty" / "spec.yaml"), "--out", str(tmp_path / "empty"), "--no-progress"]) == 0
    assert main(["run", str(spec), "--out", str(tmp_path / "empty"), "--no-progress"]) == 0
