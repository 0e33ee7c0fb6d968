"""The weights `ttir serve-model` gives the server: the shipped Q4_1 file requantised once to
Q8_0 into the cache (llama.cpp reads prompts faster from it on a CPU), the shipped file where
that copy cannot be written, and nothing written by `--print-only`. Needs the local-model extra
(skipped with one line without it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loguru import logger

from ttir.model import local_model
from ttir.model.local_model import available, requantized_path, serving_weights, weights_path


@pytest.fixture(autouse=True)
def _extra_installed():
    why = available()
    if why is not None:
        pytest.skip(f"live model: {why}")


def test_q8_0_is_written_once_and_then_reused(tmp_path):
    first = serving_weights("q8_0", tmp_path)
    assert first == requantized_path(weights_path(), tmp_path) and first.parent == tmp_path
    assert first.read_bytes()[:4] == b"GGUF"
    # Q8_0 spends 8.5 bits a weight against Q4_1's 5.7: a real requantisation, not a copy
    assert first.stat().st_size > 1.3 * weights_path().stat().st_size
    stamp = first.stat().st_mtime_ns
    assert serving_weights("q8_0", tmp_path) == first and first.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no partial file left behind


def test_q4_1_is_the_shipped_file_and_writes_nothing(tmp_path):
    assert serving_weights("q4_1", tmp_path) == weights_path()
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_cache_serves_the_shipped_file_and_says_why(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    said: list[str] = []
    sink = logger.add(lambda m: said.append(str(m)), level="WARNING")
    logger.enable("ttir")  # a library is quiet until its application (the `ttir` CLI) enables it
    try:
        assert serving_weights("q8_0", blocker / "models") == weights_path()
    finally:
        logger.disable("ttir")
        logger.remove(sink)
    assert any("serving the shipped Q4_1 weights" in s and "not-a-folder" in s for s in said), said


def test_a_failed_quantiser_leaves_no_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(local_model, "_REQUANTIZE", "import sys; open(sys.argv[2], 'wb').write(b'GG'); sys.exit(3)")
    assert serving_weights("q8_0", tmp_path) == weights_path()
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_weights_format_names_the_choices():
    with pytest.raises(ValueError, match="'q5_k' is not one of q8_0, q4_1"):
        serving_weights("q5_k")  # type: ignore[arg-type]


def test_print_only_names_the_copy_and_its_source_without_writing_it(tmp_path, monkeypatch, capsys):
    from ttir.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["serve-model", "--print-only"]) == 0
    out = capsys.readouterr().out
    assert f"--model {tmp_path / 'ttir' / 'models'}" in out and f"requantised from {weights_path()}" in out
    assert not (tmp_path / "ttir").exists()
    assert main(["serve-model", "--weights", "q4_1", "--print-only"]) == 0
    out = capsys.readouterr().out
    assert f"--model {weights_path()}" in out and "requantised" not in out


def test_a_bad_weights_choice_is_refused_by_the_command_line(capsys):
    from ttir.cli import main

    with pytest.raises(SystemExit):
        main(["serve-model", "--weights", "fp16", "--print-only"])
    assert "invalid choice: 'fp16'" in capsys.readouterr().err


def test_the_cache_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert local_model.cache_dir() == Path(tmp_path) / "ttir" / "models"


def test_a_port_in_use_is_refused_before_the_model_loads(capsys, monkeypatch):
    import os
    import socket

    from ttir.cli import main

    # the server found it only after loading, having printed "serving … on PORT"; its bind error was
    # one line in llama.cpp's log. execve is stubbed so that a failure of the check cannot start a server
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("the server was started on a port in use"))
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        assert main(["serve-model", "--weights", "q4_1", "--port", str(port)]) == 1
    captured = capsys.readouterr()
    assert f"cannot serve on 127.0.0.1:{port}: Address already in use" in captured.err
    assert "serving" not in captured.out and "export" not in captured.out


@pytest.mark.parametrize("context", ["256", "99999999"])
def test_a_context_outside_the_models_trained_length_is_refused(context, capsys):
    # --context 99999999 was handed to llama.cpp, whose KV cache for it is terabytes
    from ttir.cli import main

    assert main(["serve-model", "--context", context, "--print-only"]) == 2
    assert f"--context={context} must be between 512 and 8192 tokens (the model's trained context)" in \
        capsys.readouterr().err
