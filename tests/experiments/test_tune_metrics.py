"""Metrics on hand-made data with known answers, and a user-written JSONL (XML
only, no screenshots) evaluated end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from experiments.tune.evaluate import Variant, evaluate_dataset, summarise
from experiments.tune.metrics import Confusion, score_outcomes
from experiments.tune.schema import read_rows
from ttir.core.config import TTIRConfig

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "dumps"


def outcome(label: dict[str, Any], verdict: str, problem: bool, *, pert: str = "popup", clean: bool = False,
            reason: str = "r") -> dict[str, Any]:
    return {"id": "x", "perturbation": pert, "clean": clean, "labels": label,
            "reasons": {"interference_present": reason},
            "results": {"rules": {"interference": {"verdict": verdict, "problem": problem}}}, "costs": {}}


def test_confusion_arithmetic() -> None:
    c = Confusion()
    for label, pred in [(True, True)] * 3 + [(True, False)] + [(False, True)] + [(False, False)] * 5:
        c.add(label, pred)
    assert (c.tp, c.fn, c.fp, c.tn, c.n) == (3, 1, 1, 5, 10)
    assert c.precision == 0.75 and c.recall == 0.75 and c.f1 == 0.75
    assert c.fpr == round(1 / 6, 4)
    assert Confusion().precision is None and Confusion().f1 is None


def test_scores_with_known_answers() -> None:
    yes, no = {"interference_present": True}, {"interference_present": False}
    outs = [
        outcome(yes, "true", True, pert="popup"),  # TP
        outcome(yes, "true", True, pert="popup"),  # TP
        outcome(yes, "uncertain", False, pert="banner", reason="banner"),  # FN (uncertain)
        outcome(no, "true", True, pert="clean", clean=True),  # FP on a clean step
        outcome(no, "false", False, pert="clean", clean=True),  # TN
        outcome(no, "false", False, pert="clean", clean=True),  # TN
        outcome(no, "false", False, pert="popup"),  # TN
        outcome({"interference_present": None}, "true", True, pert="popup"),  # not scored
    ]
    s = score_outcomes(outs, "rules", ["interference"])["interference"].to_dict()
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (2, 1, 1, 3)
    assert s["precision"] == round(2 / 3, 4) and s["recall"] == round(2 / 3, 4)
    assert s["uncertain_on_positive"] == 1 and s["unlabelled"] == 1
    assert s["clean"]["fpr"] == round(1 / 3, 4) and s["clean"]["steps"] == 3 and s["clean"]["alarms"] == 1
    assert s["by_perturbation"]["banner"]["recall"] == 0.0
    assert s["by_perturbation"]["popup"]["precision"] == 1.0
    assert s["by_reason"]["banner"]["fn"] == 1


def _user_dataset(tmp: Path) -> Path:
    """Rows as a user would write them for a real phone: XML only, partial labels."""
    for name in ("permission_dialog", "settings_security_list", "rate_dialog", "recipe_detail",
                 "recipe_delete_dialog", "contacts_list"):
        shutil.copy(DUMPS / f"{name}.xml", tmp / f"{name}.xml")
    rows = [
        {"goal": "Turn on Bluetooth", "observation": {"xml": "permission_dialog.xml"},
         "labels": {"interference_present": True}, "meta": {"perturbation": "popup"}},
        {"goal": "Turn on Bluetooth", "observation": {"xml": "settings_security_list.xml"},
         "labels": {"interference_present": False}, "meta": {"clean": True}},
        {"goal": "Delete the recipe Soup", "observation": {"xml": "rate_dialog.xml"},
         "labels": {"interference_present": True}},
        {"goal": "Delete the recipe Soup", "observation": {"xml": "recipe_delete_dialog.xml"},
         "history": [{"observation": {"xml": "recipe_detail.xml"}, "action": {"action_type": "click", "x": 1007, "y": 158},
                      "summary": "Tap \"Delete\""}],
         "labels": {"interference_present": False}},
        {"goal": "Open Amara's contact", "observation": {"xml": "contacts_list.xml"},
         "history": [{"observation": {"xml": "contacts_list.xml"}, "action": {"action_type": "click", "x": 613, "y": 326},
                      "summary": "Tap \"Amara Okafor\""}],
         "labels": {"previous_intended_effect_satisfied": "no"}},
    ]
    path = tmp / "my_phone.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_user_written_jsonl_without_screenshots_evaluates(tmp_path: Path) -> None:
    path = _user_dataset(tmp_path)
    variants = [Variant("rules", "rules", TTIRConfig())]
    outs = evaluate_dataset(path, variants)
    assert len(outs) == 5
    rep = summarise(outs, variants)
    inter = rep["variants"]["rules"]["diagnosers"]["interference"]
    assert (inter["tp"], inter["fp"], inter["fn"], inter["tn"]) == (2, 0, 0, 2)
    assert inter["unlabelled"] == 1 and inter["clean"]["fpr"] == 0.0
    effect = rep["variants"]["rules"]["diagnosers"]["action_effect"]
    assert (effect["tp"], effect["n"]) == (1, 1)
    assert rep["steps"] == 5 and "cascade_call_share" in rep


def test_bad_rows_name_the_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"goal": "x", "labels": {"task_alignment": "lost"}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"(?s)bad.jsonl:1.*labels.task_alignment"):
        list(read_rows(p))
    p.write_text('{"goal": "x", "observation": {"xml": "missing.xml"}}\n', encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="observation.xml='missing.xml'"):
        evaluate_dataset(p, [Variant("rules", "rules", TTIRConfig())])


@pytest.mark.parametrize("field, target, message", [
    ("xml", "/dev/zero", "observation.xml: screen dump file /dev/zero is not a regular file"),
    ("xml", "big.xml", "the screen dump file is larger than 8,388,608 bytes"),
    ("screenshot", "/dev/zero", "observation.screenshot: /dev/zero is not a regular file; expected a PNG or JPEG"),
    ("screenshot", "notes.png", "notes.png is no image PIL can read"),
])
def test_a_rows_files_are_read_within_bounds(tmp_path: Path, field: str, target: str, message: str) -> None:
    # a dataset is a user's file: its paths may name a device file or a huge one, which were read whole
    # (a worker ran out of memory on /dev/zero: BrokenProcessPool)
    if target.startswith("/dev/") and not Path(target).exists():
        pytest.skip(f"{target} is POSIX only")
    (tmp_path / "big.xml").write_bytes(b"<hierarchy>" + b" " * (8 * 1024 * 1024))
    (tmp_path / "notes.png").write_text("not an image", encoding="utf-8")
    p = tmp_path / "steps.jsonl"
    p.write_text(json.dumps({"goal": "x", "observation": {field: target}, "labels": {"interference_present": False}})
                 + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        evaluate_dataset(p, [Variant("rules", "rules", TTIRConfig())])
    assert message in str(info.value)


def test_a_line_longer_than_a_row_can_be_is_refused_not_read_whole(tmp_path: Path, monkeypatch) -> None:
    import experiments.tune.schema as schema

    monkeypatch.setattr(schema, "MAX_LINE_CHARS", 100)
    p = tmp_path / "steps.jsonl"
    p.write_text('{"goal": "x"}\n' + "x" * 500, encoding="utf-8")  # a line with no end, as /dev/zero's
    with pytest.raises(ValueError, match=r"steps.jsonl:2: the line is longer than 100 characters"):
        list(read_rows(p))


def test_cli_eval_json_on_a_user_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ttir.cli import main

    path = _user_dataset(tmp_path)
    assert main(["tune", "eval", str(path), "--json", "--workers", "1", "--no-progress"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["variants"]["rules"]["diagnosers"]["interference"]["tp"] == 2
    assert main(["tune", "eval", str(path), "--brief", "--workers", "1", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "interference" in text and "precision" in text and "cascade" in text
