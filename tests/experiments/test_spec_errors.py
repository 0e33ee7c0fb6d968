"""A spec's errors, all at once: one ``file.yaml:LINE: key: message`` line per problem, each
with the closest valid name (top-level keys, dotted guard_config keys, perturbation params,
agent params, fixed values), plain words for union types, YAML syntax errors at the real file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from experiments.spec import ExperimentSpec
from ttir.core.config import TTIRConfig

FOUR_TYPOS = """\
name: x
taks: [SystemWifiTurnOn]
perturbations:
  - clean
  - rate_dialog: {trigger_stp: 2}
guard: [rules]
guard_config: {stuck_loop.windw: 3}
agents:
  - {name: a, kind: planner, params: {engage_probabilty: 0.5}}
"""


def _error(tmp_path: Path, text: str, name: str = "spec.yaml") -> tuple[Path, list[str]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        ExperimentSpec.from_yaml(path)
    lines = str(info.value).splitlines()
    assert lines[0] == "invalid experiment spec:"
    return path, [line.strip() for line in lines[1:]]


def test_four_typos_are_reported_at_once_each_with_a_suggestion(tmp_path):
    path, lines = _error(tmp_path, FOUR_TYPOS)
    assert len(lines) == 4, lines
    expected = [  # (line of the file, what is wrong, what was meant)
        (2, "taks", "did you mean 'tasks'?"),
        (5, "trigger_stp", "did you mean 'trigger_step'?"),
        (7, "stuck_loop.windw", "did you mean 'window'?"),
        (9, "engage_probabilty", "did you mean 'engage_probability'?"),
    ]
    for line, (number, typo, hint) in zip(lines, expected):
        assert line.startswith(f"{path}:{number}: "), line
        assert typo in line and hint in line, line
    assert not any("Extra inputs are not permitted" in line for line in lines)


def test_a_string_where_a_list_was_expected_is_said_in_plain_words(tmp_path):
    path, lines = _error(tmp_path, "name: x\nguard: [off]\ntasks: SystemWifiTurnOn\n")
    assert lines == [f"{path}:3: tasks: expected 'all' or a list, got the string 'SystemWifiTurnOn' "
                     "(for a list of one, write [SystemWifiTurnOn])"]
    for jargon in ("literal[", "list[str]", "Input should be"):
        assert jargon not in lines[0]


@pytest.mark.parametrize("key", ["seeds", "guard"])
def test_an_empty_list_of_seeds_or_guard_modes_is_refused_not_run_as_nothing(tmp_path, key):
    # `seeds: []` ran 0 episodes and printed "0 episodes run" as if the run were done
    path, lines = _error(tmp_path, f"name: x\ntasks: [SystemWifiTurnOn]\n{key}: []\n")
    assert lines == [f"{path}:3: {key}: List should have at least 1 item after validation, not 0 (got [])"]


def test_a_bad_item_inside_a_union_names_the_item_not_the_union(tmp_path):
    path, lines = _error(tmp_path, "name: x\ntasks:\n  - SystemWifiTurnOn\n  - [nested]\n")
    assert len(lines) == 1 and lines[0].startswith(f"{path}:4: tasks.1: "), lines
    assert "list[str]" not in lines[0] and "literal" not in lines[0]


def test_a_fixed_value_typo_says_which_value_was_meant(tmp_path):
    path, lines = _error(tmp_path, "name: x\ntasks: [SystemWifiTurnOn]\nagents:\n  - {name: a, kind: plannr}\n")
    assert len(lines) == 1 and lines[0].startswith(f"{path}:4: agents.0.kind: ")
    assert "did you mean 'planner'?" in lines[0]


def test_a_type_error_does_not_hide_the_name_errors_of_other_keys(tmp_path):
    text = "name: x\nworkers: many\ntasks: [SystemWifiTurnOnn]\nperturbations: [clean, popup_securty]\n"
    path, lines = _error(tmp_path, text)
    assert [line.split(": ", 2)[1] for line in lines] == ["workers", "tasks.0", "perturbations.1"], lines
    assert lines[0].startswith(f"{path}:2: ")
    assert "did you mean 'SystemWifiTurnOn'?" in lines[1] and "see `ttir tasks`" in lines[1]
    assert "did you mean 'popup_security'?" in lines[2]


def test_unknown_task_with_a_suggestion_is_no_wall_of_names(tmp_path):
    _, lines = _error(tmp_path, "name: x\ntasks: [SystemWifiTurnOnn]\n")
    assert "ContactsAddContact" not in lines[0] and "see `ttir tasks`" in lines[0]


def test_agent_params_of_each_kind_get_suggestions(tmp_path):
    _, lines = _error(tmp_path, "name: x\ntasks: [SystemWifiTurnOn]\nagents:\n"
                                "  - {name: r, kind: replay, params: {max_retrys: 2}}\n"
                                "  - {name: f, kind: reference, params: {speed: 2}}\n")
    assert len(lines) == 2
    assert "agents[0] (r, kind replay)" in lines[0] and "did you mean 'max_retries'?" in lines[0]
    assert "agents[1] (f, kind reference)" in lines[1] and "takes no params" in lines[1]


def test_the_perturbations_and_under_lines_carry_the_file_prefix(tmp_path):
    path, lines = _error(tmp_path, "name: x\ntasks: [SystemWifiTurnOn]\nperturbations: [clean, fontsize]\n"
                                   "under: [a11y_tree_emty]\n")
    assert lines[0].startswith(f"{path}:3: perturbations.1: ") and lines[1].startswith(f"{path}:4: under.0: ")
    assert "did you mean 'a11y_tree_empty'?" in lines[1]


def test_yaml_syntax_errors_point_at_the_real_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ntasks: [a\nb: c\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        ExperimentSpec.from_yaml(path)
    message = str(info.value)
    assert re.match(rf"{re.escape(str(path))}:3:\d+: not valid YAML", message), message
    assert "<unicode string>" not in message and f'in "{path}", line 2' in message


def test_a_guard_config_file_names_the_line_too(tmp_path):
    path = tmp_path / "ttir.yaml"
    path.write_text("recovery:\n  budget: 2\nstuck_loop:\n  windw: 3\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        TTIRConfig.from_yaml(path)
    assert f"{path}:4: stuck_loop.windw: unknown key" in str(info.value)
    assert "did you mean 'window'?" in str(info.value)


def test_dotted_guard_config_sections_get_suggestions():
    with pytest.raises(ValueError, match=r"'stuck_lop' is not a section; did you mean 'stuck_loop'\?"):
        TTIRConfig().override({"stuck_lop.window": 3})


def test_check_on_a_built_spec_lists_every_problem():
    spec = ExperimentSpec.model_validate({"tasks": ["Nope", "Nada"], "perturbations": ["clean"]})
    with pytest.raises(ValueError) as info:
        spec.check(source="mine.yaml")
    assert str(info.value).count("mine.yaml: tasks.") == 2


def test_a_name_in_another_case_is_suggested_exactly(tmp_path):
    _, lines = _error(tmp_path, "name: x\ntasks: [contactsaddcontact]\nperturbations: [clean, POPUP_SECURITY]\n")
    assert "did you mean 'ContactsAddContact'?" in lines[0] and "did you mean 'popup_security'?" in lines[1]


def test_an_agent_kind_in_another_case_is_accepted(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text("name: x\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\nagents: [{name: a, kind: Planner}]\n",
                    encoding="utf-8")
    assert ExperimentSpec.from_yaml(path).agents[0].kind == "planner"


@pytest.mark.parametrize("data", [None, [1], "tasks"])
def test_a_spec_that_is_no_mapping_is_one_clear_line(data):
    with pytest.raises(ValueError, match=r"spec: \(root\): Input should be a valid dictionary"):
        ExperimentSpec.from_dict(data)  # type: ignore[arg-type]
