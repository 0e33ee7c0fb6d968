"""Prompt A/B and the model tiers of `tune eval`, against the local
OpenAI-compatible test server (real openai client over real HTTP)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterator

import pytest

import prompts
from experiments.tune.evaluate import Variant, evaluate_dataset, summarise
from experiments.tune.prompts_ab import compare
from ttir.core.config import TTIRConfig
from ttir.testing.server import RecordedRequest, Reply, VLMTestServer

DUMPS = Path(__file__).resolve().parents[1] / "fixtures" / "dumps"
INTERRUPTION_WORDS = ("Allow ", "Not now", "rate it")


def responder(req: RecordedRequest) -> Reply:
    """Judges from the UI tree in the prompt. A prompt carrying MODE-B gets a worse
    judge (it mistakes the task's own delete dialog for interference)."""
    screen = req.text.split("## The screen", 1)[-1].split("## Answer", 1)[0]
    if "MODE-B" in req.text:
        interference = "Delete recipe?" in screen
    else:
        interference = any(w in screen for w in INTERRUPTION_WORDS)
    return Reply.json({"repeat_failure_detected": False, "previous_intended_effect_satisfied": "uncertain",
                       "interference_present": interference, "task_alignment": "on_track",
                       "reason": "judged from the tree"})


@pytest.fixture()
def server() -> Iterator[VLMTestServer]:
    with VLMTestServer(responder=responder) as s:
        yield s


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    for name in ("permission_dialog", "settings_security_list", "rate_dialog", "recipe_detail", "recipe_delete_dialog"):
        shutil.copy(DUMPS / f"{name}.xml", tmp_path / f"{name}.xml")
    rows = [
        {"goal": "Turn on Bluetooth", "observation": {"xml": "permission_dialog.xml"}, "labels": {"interference_present": True}},
        {"goal": "Turn on Bluetooth", "observation": {"xml": "settings_security_list.xml"},
         "labels": {"interference_present": False}, "meta": {"clean": True}},
        {"goal": "Delete the recipe Soup", "observation": {"xml": "rate_dialog.xml"}, "labels": {"interference_present": True}},
        {"goal": "Delete the recipe Soup", "observation": {"xml": "recipe_delete_dialog.xml"},
         "history": [{"observation": {"xml": "recipe_detail.xml"}, "action": {"action_type": "click", "x": 1007, "y": 158},
                      "summary": "Tap \"Delete\""}], "labels": {"interference_present": False}},
    ]
    p = tmp_path / "steps.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def _prompt_b(tmp_path: Path) -> Path:
    p = tmp_path / "b.md"
    p.write_text(prompts.load("diagnose").text + "\nMODE-B: be brief.\n", encoding="utf-8")
    return p


def test_prompts_compared_on_the_same_steps(server: VLMTestServer, dataset: Path, tmp_path: Path) -> None:
    cfg = TTIRConfig().override({"vlm.base_url": server.base_url, "vlm.model": server.model, "vlm.timeout_s": 5.0})
    rep = compare(dataset, [str(prompts.path_of("diagnose")), str(_prompt_b(tmp_path))], config=cfg)
    a, b = rep["variants"]["vlm[diagnose]"], rep["variants"]["vlm[b]"]
    assert a["diagnosers"]["interference"]["f1"] == 1.0
    assert b["diagnosers"]["interference"]["tp"] == 0 and b["diagnosers"]["interference"]["fp"] == 1
    assert rep["winners"]["interference"] == "vlm[diagnose]"
    # one call per step and prompt, every call with tokens
    assert len(server.completions()) == 2 * 4
    assert a["cost"]["model_calls_per_step"] == 1.0 and a["cost"]["prompt_tokens_per_step"] > 0
    assert rep["variants"]["rules"]["cost"]["model_calls"] == 0
    texts = [r.text for r in server.completions()]
    assert sum("MODE-B" in t for t in texts) == 4  # prompt B really was sent


def test_cascade_calls_only_where_the_rules_are_unsure(server: VLMTestServer, dataset: Path) -> None:
    from diagnosers.vlm_judge import VLMJudge

    cfg = TTIRConfig().override({"vlm.base_url": server.base_url, "vlm.model": server.model})
    judge = VLMJudge(None, cfg)
    variants = [Variant("rules", "rules", cfg), Variant("cascade", "cascade", cfg, judge=judge)]
    outs = evaluate_dataset(dataset, variants)
    rep = summarise(outs, variants)
    would = rep["cascade_call_share"]["would_call"]
    assert rep["variants"]["cascade"]["cost"]["steps_with_a_call"] == would
    assert len(server.completions()) == would < len(outs)


def test_cli_prompts_needs_an_endpoint(dataset: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from ttir.cli import main

    monkeypatch.delenv("TTIR_VLM_BASE_URL", raising=False)
    assert main(["tune", "prompts", str(dataset), "--prompt", "diagnose"]) == 2
    assert "TTIR_VLM_BASE_URL" in capsys.readouterr().err


def test_cli_prompts_with_the_test_server(server: VLMTestServer, dataset: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ttir.cli import main

    monkeypatch.setenv("TTIR_VLM_BASE_URL", server.base_url)
    monkeypatch.setenv("TTIR_VLM_MODEL", server.model)
    assert main(["tune", "prompts", str(dataset), "--prompt", "diagnose", "--prompt", str(_prompt_b(tmp_path)),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "vlm[diagnose]" in out and "vlm[b]" in out and "best prompt per diagnoser" in out
