"""Figures that cannot drift (docs/contributing/figures.md): every cheap figure of docs/figures.yaml is
recomputed from the shipped data (the real-screen corpus, the specs, the registries, the screen model),
and every figure quoted in README.md or a docs page as ``<!--fig:ID-->VALUE<!--/fig-->`` must be the file's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from experiments import figures as F


@pytest.fixture(scope="module")
def table() -> dict[str, F.Figure]:
    return F.load()


@pytest.fixture(scope="module")
def computed() -> dict[str, str]:
    return F.recompute()


def test_every_computed_figure_is_what_the_shipped_data_gives(table, computed):
    assert F.drift(table, computed) == []
    assert {fid for fid, f in table.items() if f.check == "computed"} == set(F.COMPUTED)


def test_every_quote_in_the_readme_and_the_docs_is_the_files(table):
    assert F.check_files(table) == []
    quoted = {fid for p in F.quoting_files() for fid, _, _ in F.quotes(p.read_text(encoding="utf-8"))}
    assert {"corpus_files", "corpus_test_readable", "tasks", "real_recall_free"} <= quoted  # the docs do quote
    assert Path(F.ROOT / "README.md") in F.quoting_files() or not (F.ROOT / "README.md").exists()


def test_every_measured_figure_says_how_and_where(table):
    for fid, f in table.items():
        assert f.command.strip() and f.data.strip(), fid
        if f.check == "measured":
            assert f.machine, f"{fid}: a measurement names its machine"


def test_a_drifted_quote_an_unknown_id_and_an_open_marker_are_named(table):
    text = ("The corpus holds <!--fig:corpus_files-->798<!--/fig--> dumps.\n"
            "Tasks: <!--fig:taks-->48<!--/fig-->.\n"
            "Left <!--fig:tasks-->48 open.\n")
    problems = F.check_text(text, table, "README.md")
    assert any(p.startswith("README.md:1:") and "'798'" in p and table["corpus_files"].value in p for p in problems)
    assert any(p.startswith("README.md:2:") and "did you mean 'tasks'" in p for p in problems)
    assert any(p.startswith("README.md:3:") and "no closing" in p for p in problems)
    assert F.check_text("All <!--fig:tasks-->" + table["tasks"].value + "<!--/fig-->", table, "x") == []
    at_start = F.check_text("- ttir has\n  <!--fig:tasks-->" + table["tasks"].value + "<!--/fig--> tasks", table, "x")
    assert len(at_start) == 1 and at_start[0].startswith("x:2:") and "begins a line" in at_start[0]


def test_a_changed_shipped_figure_is_caught_and_rewritten(tmp_path, table, computed):
    path = tmp_path / "figures.yaml"
    shutil.copy(F.FIGURES_FILE, path)
    stale = path.read_text(encoding="utf-8").replace(f'value: "{computed["corpus_files"]}"', 'value: "798"', 1)
    path.write_text(stale, encoding="utf-8")
    assert any(p.startswith("corpus_files:") and "'798'" in p for p in F.drift(F.load(path), computed))
    assert F.write(path, computed) == ["corpus_files"]
    assert path.read_text(encoding="utf-8") == F.FIGURES_FILE.read_text(encoding="utf-8")  # only that line changed
    assert F.drift(F.load(path), computed) == []


def test_a_bad_entry_names_the_file_and_the_figure(tmp_path):
    path = tmp_path / "figures.yaml"
    path.write_text("tasks:\n  value: '48'\n  what: x\n  command: ttir tasks\n  data: d\n  check: guessed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"figures.yaml: figure 'tasks'.*check"):
        F.load(path)
