"""Issue 14, items 2 and 12: users' YAML is loaded with limits, and a spec is checked whole
before any episode runs. Every case ends in a clear error (naming the file, the key, the
value) or a safe result, within its bound."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from textwrap import indent

import pytest
from tests.support.reliability_support import Raised, bounded, needs_linux, ttir_command

from experiments.spec import ExperimentSpec
from ttir.core.config import TTIRConfig

pytestmark = [pytest.mark.reliability, needs_linux]

BASE = "name: x\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\nagents: [{name: p, kind: planner}]\nguard: [off]\n"


def alias_bomb(levels: int = 9, key: str = "bomb") -> str:
    """The billion-laughs of YAML: ~1 KB that stands for 9**levels strings."""
    lines = [f'{key}0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"{key}{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _write(tmp_path: Path, text, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


def _spec_error(path: Path) -> str:
    """The ValueError a spec raises on load, within 20 s and 1 GB more memory."""
    def load(p: str) -> str:
        ExperimentSpec.from_yaml(p)
        return "loaded"

    with pytest.raises(Raised) as info:
        bounded(20, load, str(path))
    assert info.value.kind in ("ValueError", "FileNotFoundError"), info.value.message
    return info.value.message


# --------------------------------------------------------------- item 2: YAML bombs


def test_an_alias_bomb_in_a_spec_is_refused(tmp_path):
    bomb = alias_bomb()
    assert len(bomb) < 1200
    message = _spec_error(_write(tmp_path, BASE + "extra:\n" + indent(bomb, "  ")))  # (an unknown key, too)
    assert "alias" in message and "spec.yaml" in message


def test_an_alias_bomb_in_agent_params_is_refused(tmp_path):
    bomb = indent(alias_bomb(), "      ")
    text = BASE.replace("agents: [{name: p, kind: planner}]\n", f"agents:\n  - name: p\n    kind: planner\n    params:\n{bomb}")
    message = _spec_error(_write(tmp_path, text))
    assert "alias" in message and "expand" in message


def test_an_alias_bomb_in_a_guard_config_is_refused(tmp_path):
    path = _write(tmp_path, "stuck_loop:\n" + indent(alias_bomb(), "  "), "ttir.yaml")

    def load(p: str) -> str:
        TTIRConfig.from_yaml(p)
        return "loaded"

    with pytest.raises(Raised) as info:
        bounded(20, load, str(path))
    assert info.value.kind == "ValueError" and "alias" in info.value.message


def test_deep_nesting_and_huge_files_are_refused(tmp_path):
    assert "nest" in _spec_error(_write(tmp_path, BASE + "deep: " + "[" * 5000 + "]" * 5000 + "\n"))
    assert "larger than" in _spec_error(_write(tmp_path, BASE + "# " + "x" * (2 << 20) + "\n", "big.yaml"))


def test_ordinary_anchors_still_work(tmp_path):
    text = BASE.replace("agents: [{name: p, kind: planner}]\n", "agents:\n  - &p {name: p, kind: planner}\n"
                        "  - {<<: *p, name: q}\n")
    spec = ExperimentSpec.from_yaml(_write(tmp_path, text))
    assert [a.name for a in spec.agents] == ["p", "q"]


# ------------------------------------------------------------------- item 12: specs


@pytest.mark.parametrize("text", ["", "# only a comment\n\n# and another\n", "---\n"])
def test_an_empty_spec_is_an_error_not_the_full_default_run(tmp_path, text):
    message = _spec_error(_write(tmp_path, text))
    assert "empty" in message and "spec.yaml" in message


@pytest.mark.parametrize("extra, key", [
    ("tasks: [SystemWifiTurnOn, SystemWifiTurnOn]\n", "tasks"),
    ("seeds: [0, 1, 0]\n", "seeds"),
    ("guard: [off, rules, off]\n", "guard"),
])
def test_duplicate_tasks_seeds_and_guard_modes_are_refused(tmp_path, extra, key):
    text = BASE.replace("tasks: [SystemWifiTurnOn]\n", "").replace("guard: [off]\n", "") + extra
    message = _spec_error(_write(tmp_path, text))
    assert key in message and "more than once" in message


@pytest.mark.parametrize("replace, with_, names", [
    ("perturbations: [clean]\n", "perturbations: [clean, {popup_security: {trigger_stp: 3}}]\n",
     ["perturbations", "popup_security", "trigger_stp", "trigger_step"]),
    ("perturbations: [clean]\n", "perturbations: [{action_drop_random: {probability: 7}}]\n",
     ["action_drop_random", "probability", "7"]),
    ("agents: [{name: p, kind: planner}]\n", "agents: [{name: p, kind: planner, params: {engage_probabilty: 0.5}}]\n",
     ["agents[0]", "planner", "engage_probabilty"]),
    ("agents: [{name: p, kind: planner}]\n", "agents: [{name: o, kind: oracle, params: {max_rewinds: lots}}]\n",
     ["agents[0]", "oracle", "max_rewinds", "lots"]),
    ("agents: [{name: p, kind: planner}]\n", "agents: [{name: r, kind: reference, params: {speed: 2}}]\n",
     ["agents[0]", "reference", "speed"]),
    ("guard: [off]\n", "guard: [off, rules]\nguard_config: {stuck_loop.windw: 4}\n",
     ["guard_config", "stuck_loop.windw", "window"]),
    ("guard: [off]\n", "guard: [rules]\nguard_config: {recovery.budget: 0}\n", ["guard_config", "budget", "0"]),
])
def test_every_nested_parameter_is_built_at_load(tmp_path, replace, with_, names):
    message = _spec_error(_write(tmp_path, BASE.replace(replace, with_)))
    for n in names:
        assert n in message, (n, message)


@pytest.mark.parametrize("name", ["../../x", "..", ".hidden", "a/b", "runs\\..\\x"])
def test_a_spec_name_cannot_leave_the_run_directory(tmp_path, name):
    message = _spec_error(_write(tmp_path, BASE.replace("name: x", f"name: {json.dumps(name)}")))
    assert "name" in message and repr(name) in message


def test_a_non_utf8_spec_is_named_clearly(tmp_path):
    path = _write(tmp_path, BASE.encode() + b"# caf\xe9 latin-1\n")
    message = _spec_error(path)
    assert "not UTF-8" in message and str(path) in message and "line 6" in message


def test_an_unknown_top_level_key_lists_the_valid_ones(tmp_path):
    message = _spec_error(_write(tmp_path, BASE + "perturbation: [clean]\n"))
    assert "perturbation" in message and "valid keys here" in message and "did you mean 'perturbations'?" in message
    assert "budget_multiplier" in message


def test_unknown_config_keys_say_what_was_meant():
    with pytest.raises(ValueError) as info:
        TTIRConfig.from_dict({"stuck_lop": {"window": 3}})
    assert "did you mean 'stuck_loop'?" in str(info.value)
    with pytest.raises(ValueError) as info:
        TTIRConfig.from_dict({"stuck_loop": {"windw": 3}})
    assert "stuck_loop.windw" in str(info.value) and "did you mean 'window'?" in str(info.value)


def test_a_validation_error_does_not_print_a_huge_value(tmp_path):
    message = _spec_error(_write(tmp_path, BASE + f"workers: [{', '.join(['1'] * 20000)}]\n"))
    assert "workers" in message and len(message) < 2000


def test_the_cli_reports_a_bad_spec_in_one_line(tmp_path):
    path = _write(tmp_path, BASE.encode() + b"\xff\xfe\n")
    command, root = ttir_command("run", str(path), "--out", str(tmp_path / "out"))
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=root)
    assert proc.returncode == 2
    assert "not UTF-8" in proc.stderr and str(path) in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_bad_records_in_episodes_jsonl_do_not_crash_the_report(tmp_path):
    from experiments.report import write_report
    from experiments.runner import run

    spec = ExperimentSpec.from_yaml(_write(tmp_path, BASE))
    out = tmp_path / "run"
    run(spec, out, workers=1, progress=False)
    good = (out / "episodes.jsonl").read_text(encoding="utf-8")
    with (out / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        for bad in ({"id": ["a", "list"], "task": "SystemWifiTurnOn"}, {"id": "../../outside", "success": True},
                    {"id": {"k": 1}}, {"id": "ok-id", "task": ["SystemWifiTurnOn"]}, ["not", "an", "object"],
                    {"id": "x" * 10, "guard": {"mode": "off"}}):
            fh.write(json.dumps(bad) + "\n")
        fh.write("{not json\n" + "[" * 100000 + "\n")
    written = write_report(out, plots=False)
    assert (out / "report.md").exists() and written
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["episodes"] == len(good.splitlines()) == 1
