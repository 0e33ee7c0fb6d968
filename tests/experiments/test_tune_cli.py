"""Every `ttir tune` command teaches through its --help."""

from __future__ import annotations

import pytest

from ttir.cli import main


@pytest.mark.parametrize("argv,needles", [
    (["tune"], ["build", "eval", "sweep", "prompts", "steps.jsonl", "labels"]),
    (["tune", "build"], ["ground truth", "--per-perturbation", "examples", "labels.py"]),
    (["tune", "eval"], ["precision", "clean", "TTIR_VLM_BASE_URL", "examples", "--fraction"]),
    (["tune", "sweep"], ["--param", "F1", "--max-fpr", "from_yaml", "examples"]),
    (["tune", "prompts"], ["--prompt", "diagnose.md", "TTIR_VLM_BASE_URL", "examples"]),
])
def test_help_teaches(argv: list[str], needles: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for n in needles:
        assert n in text, (argv, n)


def test_tune_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "tune" in capsys.readouterr().out


def test_bad_input_is_a_clear_error(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "eval", str(tmp_path / "nope.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["tune", "sweep", str(tmp_path), "--param", "stuck_loop.window"]) == 2
    assert "KEY=V1" in capsys.readouterr().err
    assert main(["tune", "eval", "--real", "--session-steps", "0"]) == 2
    assert "--session-steps must be at least 1" in capsys.readouterr().err


def test_a_rounds_fresh_check_scores_that_rounds_screens_and_each_half(capsys: pytest.CaptureFixture[str]) -> None:
    """`ttir tune eval --real --round N`: only collection round N's repositories, both splits by default,
    each half reported (the dev half is tuned on afterwards, the test half never)."""
    from experiments.real_screens.corpus import load_corpus

    screens = [s for s in load_corpus("all") if s.round == 14]  # a small round, both halves
    readable = [s for s in screens if not s.label.malformed]
    halves = sorted({s.split for s in screens})
    assert main(["tune", "eval", "--real", "--round", "14", "--session-steps", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Real screens (round 14, all split): {len(readable)} screens")
    for half in halves:
        n = sum(1 for s in readable if s.split == half and s.label.category == "interference")
        assert f"{half} half (rules tier): " in out and f" of {n} pop-ups" in out
    assert "labelled steps of real runs" not in out  # the steps are not per round


def test_a_round_or_split_without_real_or_an_unknown_round_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "eval", "--real", "--round", "999", "--no-progress"]) == 2
    assert "--round 999: no screen" in capsys.readouterr().err
    assert main(["tune", "eval", "some_dataset", "--round", "3"]) == 2
    assert "only with --real" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["--real", "--fraction", "0.1"], "--fraction: only without --real (for a DATASET's steps)"),
    (["--real", "--perturbation", "popup_permission", "--workers", "4"], "--perturbation, --workers: only without"),
    (["some_dataset", "--real"], "DATASET: only without --real"),
    (["some_dataset", "--cases"], "--cases: only with --real (for the screens of the real-screen corpus)"),
    (["some_dataset", "--session-steps", "2", "--plot", "p.png"], "--plot, --session-steps: only with --real"),
])
def test_an_option_of_the_other_source_is_refused_not_ignored(argv, says, capsys, tmp_path, monkeypatch) -> None:
    # `--real --fraction 0.1` scored every screen of the corpus, `DATASET --cases` listed nothing, without a word
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "eval", *argv, "--no-progress"]) == 2
    assert says in capsys.readouterr().err
