"""The prompt files and their loader."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import prompts
from diagnosers.judgment import Judgment
from ttir.core.types import Action

SHIPPED = ["action_space", "agent", "alternative_action", "data_notice", "diagnose", "dismiss_interference",
           "re_orientation", "reask"]
PARTS = ["action_space", "data_notice"]  # rendered into the others; no variables of their own
RECOVERIES = ["alternative_action", "dismiss_interference", "re_orientation"]


def _filled(template: prompts.PromptTemplate) -> dict[str, str]:
    return {v: f"<<{v}>>" for v in template.variables}


def test_every_shipped_prompt_is_listed():
    assert prompts.available() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_prompt_loads_and_renders(name):
    template = prompts.load(name)
    text = template.render(**_filled(template))
    for v in template.variables:
        assert f"<<{v}>>" in text
    assert "$" not in text.replace("$$", "")  # no placeholder left unfilled


@pytest.mark.parametrize("name", [n for n in SHIPPED if n not in PARTS])
def test_missing_variables_are_named_with_the_file(name):
    template = prompts.load(name)
    values = _filled(template)
    dropped = template.variables[-1]
    del values[dropped]
    with pytest.raises(prompts.PromptError) as info:
        template.render(**values)
    assert dropped in str(info.value) and str(template.path) in str(info.value)


def test_diagnose_asks_for_exactly_the_judgment_fields():
    template = prompts.load("diagnose")
    assert set(template.variables) == {"data_notice", "goal", "step", "history", "pending", "screen"}
    example = json.loads(re.search(r"^\{.*\}$", template.text, re.MULTILINE).group(0))
    assert set(example) == set(Judgment.model_fields)
    Judgment.model_validate(example)
    for field in Judgment.model_fields:
        if field != "reason":
            assert template.text.count(field) >= 2, f"{field} is not explained"


@pytest.mark.parametrize("name", RECOVERIES + ["agent"])
def test_action_prompts_show_a_valid_action_example(name):
    text = prompts.load(name).text
    example = json.loads(re.search(r"^\{.*\}$", text, re.MULTILINE).group(0))
    assert set(example) == {"thought", "summary", "action"}
    Action(**example["action"])


def test_action_space_examples_are_valid_actions():
    text = prompts.load("action_space").render()
    examples = [json.loads(m) for m in re.findall(r'\{"action_type"[^{}]*\}', text)]
    assert {e["action_type"] for e in examples} >= set(Action.model_fields["action_type"].annotation.__args__)
    for e in examples:
        if "…" not in json.dumps(e):
            Action(**e)


@pytest.mark.parametrize(
    "name, must_say",
    [
        ("dismiss_interference", ["Do NOT engage", "Close, decline or navigate past"]),
        ("re_orientation", ["Do NOT try to complete the task", "shortest action"]),
        ("alternative_action", ["Do NOT retry the failed action", "$failed_action", "$intended_effect"]),
    ],
)
def test_recovery_prompts_declare_problem_target_and_constraints(name, must_say):
    text = prompts.load(name).text
    for heading in ("## Diagnosed problem", "## Recovery target condition", "## Constraints"):
        assert heading in text
    for phrase in must_say:
        assert phrase in text


def test_a_user_file_path_works(tmp_path: Path):
    mine = tmp_path / "my_diagnose.md"
    mine.write_text("Goal: $goal\nCost: $$5\n${screen}!", encoding="utf-8")
    template = prompts.load(str(mine))
    assert template.name == "my_diagnose" and template.variables == ["goal", "screen"]
    assert template.render(goal="call Bob", screen="home", unused="ignored") == "Goal: call Bob\nCost: $5\nhome!"
    assert prompts.load(mine).path == mine
    with pytest.raises(prompts.PromptError, match="screen") as info:
        template.render(goal="x")
    assert str(mine) in str(info.value)


def test_bad_files_and_names_are_reported(tmp_path: Path):
    with pytest.raises(prompts.PromptError, match="available: .*diagnose"):
        prompts.load("diagnoze")
    with pytest.raises(prompts.PromptError, match="does not exist"):
        prompts.load(str(tmp_path / "nope.md"))
    bad = tmp_path / "bad.md"
    bad.write_text("line one\nprice $5 is too much", encoding="utf-8")
    with pytest.raises(prompts.PromptError, match=r"line 2.*\$5"):
        prompts.load(bad)
    empty = tmp_path / "empty.md"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(prompts.PromptError, match="empty"):
        prompts.load(empty)


def test_a_file_that_is_no_prompt_is_named_and_read_within_a_bound(tmp_path: Path):
    # /dev/zero "did not exist" (and a bare path to it was read for ever); a huge file was read whole
    with pytest.raises(prompts.PromptError, match="is not a regular file"):
        prompts.load(str(tmp_path) + "/")
    huge = tmp_path / "huge.md"
    huge.write_bytes(b"a" * (prompts.MAX_PROMPT_BYTES + 1))
    with pytest.raises(prompts.PromptError, match="is larger than 1,048,576 bytes; a prompt is a few KB"):
        prompts.load(huge)


def test_prompts_package_imports_nothing_from_the_project():
    code = ("import sys, prompts; prompts.load('diagnose'); "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('ttir', 'benchmark', 'perturb', 'diagnosers', 'recoveries', 'experiments')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(prompts.__file__).parent.parent)
