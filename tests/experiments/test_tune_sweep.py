"""Threshold sweeps: the best setting under the false-positive ceiling, written as
YAML that TTIRConfig.from_yaml loads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from experiments.tune.sweep import grids, parse_param, sweep, write_best
from ttir.core.config import TTIRConfig

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "dumps"
TAP = {"action_type": "click", "x": 540, "y": 1200}


def _row(repeats: int, label: bool, clean: bool) -> dict:
    same = {"xml": "screen.xml"}
    hist = [{"observation": same, "action": TAP, "summary": 'Tap "Security"', "thought": "open security"}
            for _ in range(repeats)]
    return {"goal": "Open the security settings", "observation": same, "history": hist,
            "labels": {"repeat_failure_detected": label},
            "meta": {"perturbation": "clean" if clean else "trap_state_deadlock", "clean": clean}}


@pytest.fixture()
def loops(tmp_path: Path) -> Path:
    """Window 2 catches both loops but alarms on a clean double tap; window 3
    misses the short loop; window 4 misses both."""
    shutil.copy(DUMPS / "settings_security_list.xml", tmp_path / "screen.xml")
    rows = [_row(2, True, False), _row(3, True, False), _row(2, False, True), _row(0, False, True)]
    p = tmp_path / "loops.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def test_parse_and_grid() -> None:
    assert parse_param("stuck_loop.window=2, 3,4") == ("stuck_loop.window", [2, 3, 4])
    assert parse_param("interference.min_score=0.5,0.7")[1] == [0.5, 0.7]
    g = grids([("stuck_loop.window", [2, 3]), ("stuck_loop.tolerance_px", [10, 30]),
               ("interference.min_score", [0.5])])
    assert len(g["stuck_loop"]) == 4 and len(g["interference"]) == 1  # per-diagnoser grids, not one product
    with pytest.raises(ValueError, match="stuck_loop.window"):
        parse_param("stuck_loop.window=1")  # below the allowed minimum, named
    with pytest.raises(ValueError, match="section 'recovery'"):
        parse_param("recovery.budget=2,3")
    with pytest.raises(ValueError, match="KEY=V1"):
        parse_param("stuck_loop.window")


def test_best_respects_the_false_positive_ceiling(loops: Path, tmp_path: Path) -> None:
    params = [parse_param("stuck_loop.window=2,3,4")]
    strict = sweep(loops, params, max_fpr=0.01)
    by_window = {p["params"]["stuck_loop.window"]: p for p in strict["points"]}
    assert (by_window[2]["tp"], by_window[2]["fp"]) == (2, 1) and not by_window[2]["feasible"]
    assert (by_window[3]["tp"], by_window[3]["fn"]) == (1, 1) and by_window[3]["feasible"]
    assert by_window[4]["tp"] == 0
    assert strict["best"]["stuck_loop"] == {"stuck_loop.window": 3}
    loose = sweep(loops, params, max_fpr=1.0)
    assert loose["best"]["stuck_loop"] == {"stuck_loop.window": 2}  # the higher F1 once the ceiling allows it

    out = write_best(strict, tmp_path / "best.yaml", dataset=str(loops))
    cfg = TTIRConfig.from_yaml(out)
    assert cfg.stuck_loop.window == 3
    assert cfg.interference == TTIRConfig().interference  # untouched sections keep the base values


def test_base_config_is_kept_when_nothing_meets_the_ceiling(loops: Path, tmp_path: Path) -> None:
    base = TTIRConfig().override({"stuck_loop.window": 5})
    res = sweep(loops, [parse_param("stuck_loop.window=2")], base=base, max_fpr=0.01)
    assert res["best"]["stuck_loop"] is None and res["config"].stuck_loop.window == 5


def test_cli_sweep_writes_a_loadable_config(loops: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ttir.cli import main

    best = tmp_path / "tuned.yaml"
    assert main(["tune", "sweep", str(loops), "--param", "stuck_loop.window=2,3,4", "--best", str(best),
                 "--workers", "1", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "BEST" in text and "over FP ceiling" in text
    assert TTIRConfig.from_yaml(best).stuck_loop.window == 3
    assert main(["tune", "eval", str(loops), "--config", str(best), "--brief", "--workers", "1", "--no-progress"]) == 0


def test_a_setting_that_changes_nothing_is_flagged(loops: Path) -> None:
    res = sweep(loops, [parse_param("action_effect.region_pad_px=10,60")], max_fpr=1.0)
    assert "action_effect" in res["notes"]
