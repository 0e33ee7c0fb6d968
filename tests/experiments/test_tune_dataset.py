"""Ground truth recorded by the worker, and `tune build` on a tiny real run
(workers=1, 2 tasks x 3 perturbations, one agent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from experiments.runner import run
from experiments.spec import ExperimentSpec
from experiments.store import RunStore
from experiments.tune.dataset import build
from experiments.tune.evaluate import Variant, evaluate_dataset, summarise
from experiments.tune.schema import read_rows
from ttir.core.config import TTIRConfig

TASKS = ["SystemWifiTurnOn", "ContactsDeleteContact"]
pytestmark = pytest.mark.xdist_group("tune_tiny_run")  # one worker runs the tiny run once for all of them


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny_run")
    spec = ExperimentSpec.model_validate({
        "name": "tiny", "tasks": TASKS,
        "perturbations": ["clean", {"action_drop_random": {"magnitude.probability": 0.5}}, "popup_permission"],
        "agents": [{"name": "oracle", "kind": "oracle"}], "guard": ["off"], "budget_multiplier": 3,
        "workers": 1, "screenshots": "all", "save_xml": True,
    })
    run(spec, out, workers=1, progress=False)
    return out


def _trajectories(run_dir: Path) -> dict[str, dict[str, Any]]:
    store = RunStore(run_dir)
    return {r["id"]: store.trajectory(r["id"]) for r in store.records()}


def test_every_step_carries_ground_truth(tiny_run: Path) -> None:
    store = RunStore(tiny_run)
    records = store.records()
    assert len(records) == 6 and all(r["status"] == "ok" for r in records)
    assert all("truth" not in r for r in records)  # episode records unchanged
    kinds = set()
    for ep, traj in _trajectories(tiny_run).items():
        assert traj["task_info"]["apps"]
        for s in traj["trajectory"]:
            t = s["truth"]
            assert "truth_error" not in t, t
            assert t["screen_key"] and t["raw_foreground"]
            kinds |= {o["kind"] for o in t["overlays"]}
            if "popup_permission" in ep and t["overlays"]:
                assert t["overlays"][0]["type"] == "interruption"
    assert "popup_permission" in kinds


def test_build_labels_every_decision_step(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    summary = build(tiny_run, out)
    rows = list(read_rows(out))
    trajs = _trajectories(tiny_run)
    decisions = sum(1 for t in trajs.values() for s in t["trajectory"] if s.get("agent_step"))
    assert summary["rows"] == len(rows) == decisions and summary["episodes"] == 6
    for r in rows:
        for ref in [r.observation] + [h.observation for h in r.history]:
            assert ref.xml and (out / ref.xml).exists() and ref.screenshot and (out / ref.screenshot).exists()
        assert len(r.history) == min(r.meta["step"], 16)
    by_pert: dict[str, list] = {}
    for r in rows:
        by_pert.setdefault(r.perturbation, []).append(r)
    assert any(r.labels.interference_present for r in by_pert["popup_permission"])
    assert not any(r.labels.interference_present for r in by_pert["clean"])
    assert not any(r.labels.previous_intended_effect_satisfied == "no" for r in by_pert["clean"])
    dropped = [r for r in by_pert["action_drop_random"]
               if r.meta["label_reasons"]["previous_intended_effect_satisfied"] == "dropped"]
    assert dropped and all(r.labels.previous_intended_effect_satisfied == "no" for r in dropped)
    claims = [r for r in rows if r.pending is not None]
    assert claims and all(r.labels.task_alignment in ("on_track", "off_track") for r in claims)

    with pytest.raises(ValueError, match="--force"):
        build(tiny_run, out)
    sample = build(tiny_run, out, force=True, per_perturbation=1, seed=3, history=2)
    assert sample["episodes"] == 3  # one task instance per perturbation, one agent
    assert all(len(r.history) <= 2 for r in read_rows(out))


def test_eval_on_the_built_dataset(tiny_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    build(tiny_run, out)
    variants = [Variant("rules", "rules", TTIRConfig())]
    outs = evaluate_dataset(out, variants, workers=2)
    assert [o["id"] for o in outs] == [r.id for r in read_rows(out)]  # file order kept across workers
    rep = summarise(outs, variants)
    inter = rep["variants"]["rules"]["diagnosers"]["interference"]
    assert inter["tp"] >= 1 and inter["clean"]["fpr"] == 0.0
    assert 0.0 <= rep["cascade_call_share"]["share"] <= 1.0
    json.dumps(rep)  # the --json report is serialisable


def test_cli_build(tiny_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ttir.cli import main

    out = tmp_path / "cli_ds"
    assert main(["tune", "build", str(tiny_run), "--out", str(out), "--link", "copy"]) == 0
    text = capsys.readouterr().out
    assert "steps from 6 episodes" in text and "interference_present" in text
    assert (out / "steps.jsonl").exists() and (out / "build.json").exists()
    assert not (out / "files").resolve().is_symlink()


def test_rows_of_an_episode_extend_each_others_history(tiny_run: Path, tmp_path: Path) -> None:
    from experiments.tune.evaluate import stitched_histories

    build(tiny_run, tmp_path / "short", history=2)
    build(tiny_run, tmp_path / "long", history=64)
    short, long = list(read_rows(tmp_path / "short")), list(read_rows(tmp_path / "long"))
    groups: dict[str, list] = {}
    for r in short:
        groups.setdefault(r.group, []).append(r)
    stitched = {r.id: h for g in groups.values() for r, h in zip(g, stitched_histories(g, 64))}
    longer = 0
    for r_short, r_long in zip(short, long):
        h = stitched[r_short.id]
        assert (h if h is not None else r_short.history) == r_long.history
        longer += h is not None
    assert longer > 0


def test_build_refuses_the_run_folder_a_file_or_a_folder_of_other_things_as_out(tiny_run: Path, tmp_path: Path) -> None:
    from ttir.core.errors import ConfigError

    before = sorted(p.name for p in tiny_run.iterdir())
    with pytest.raises(ConfigError, match="is the run folder itself; choose another folder for the dataset"):
        build(tiny_run, tiny_run)
    assert sorted(p.name for p in tiny_run.iterdir()) == before  # no steps.jsonl or files/ in the run
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep")
    with pytest.raises(ConfigError, match="holds other files and no steps.jsonl"):
        build(tiny_run, tmp_path / "notes")
    assert [p.name for p in (tmp_path / "notes").iterdir()] == ["mine.txt"]
