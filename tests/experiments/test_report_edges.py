"""The report and compare commands on the edges a first hour hits: unrelated runs, a missing
folder, the three-line summary report.md opens with."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.metrics_support import rec

from experiments.reports.compare import NO_SHARED_SETTINGS
from ttir.cli import main


def _run_dir(root: Path, records: list[dict]) -> Path:
    root.mkdir(parents=True)
    (root / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return root


def test_compare_of_unrelated_runs_warns_instead_of_an_empty_table(tmp_path, capsys):
    a = _run_dir(tmp_path / "a", [rec(task="A", agent="alpha"), rec(task="A", agent="alpha", success=False)])
    b = _run_dir(tmp_path / "b", [rec(task="A", agent="beta")])
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "c")]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "share no setting" in err
    md = (tmp_path / "c" / "compare.md").read_text(encoding="utf-8")
    assert NO_SHARED_SETTINGS in md
    assert json.loads((tmp_path / "c" / "compare.json").read_text(encoding="utf-8"))["shared_settings"] == 0


def test_compare_of_related_runs_does_not_warn(tmp_path, capsys):
    a = _run_dir(tmp_path / "a", [rec(task="A"), rec(task="B", success=False)])
    b = _run_dir(tmp_path / "b", [rec(task="A"), rec(task="B")])
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "c")]) == 0
    assert "warning" not in capsys.readouterr().err
    assert NO_SHARED_SETTINGS not in (tmp_path / "c" / "compare.md").read_text(encoding="utf-8")


def test_report_of_a_missing_folder_says_it_does_not_exist(tmp_path, capsys):
    missing = tmp_path / "nonexistent"
    assert main(["report", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and str(missing) in err and "episodes.jsonl" not in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty)]) == 2
    assert "has no episodes.jsonl" in capsys.readouterr().err
