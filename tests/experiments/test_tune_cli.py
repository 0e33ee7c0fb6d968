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
