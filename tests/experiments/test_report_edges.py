"""The report and compare commands on the edges a first hour hits: unrelated runs, a missing
folder, the three-line summary report.md opens with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def _guarded_run():
    from tests.support.metrics_support import run_of

    perturbed = {"perturbation": "p", "component": "state"}
    return run_of([rec(task="A"), rec(task="A", guard="rules"),
                   rec(task="A", success=False, **perturbed), rec(task="A", guard="rules", **perturbed),
                   rec(task="B", success=False, **perturbed), rec(task="B", guard="rules", success=False, **perturbed),
                   rec(task="B"), rec(task="B", guard="rules")])


def test_the_summary_says_episodes_success_and_guard_effect_in_three_lines():
    from experiments.report import compute_metrics
    from experiments.reports.summary import summary_lines

    episodes, success, guard = summary_lines(compute_metrics(_guarded_run()))
    assert episodes.startswith("Episodes: 8 ") and "2 guard mode(s)" in episodes
    assert "guard off: clean 100.0 % (2/2), perturbed 0.0 % (0/2)" in success
    assert "guard rules: clean 100.0 % (2/2), perturbed 50.0 % (1/2)" in success
    assert "perturbed 2 → 1 (-50 %) with guard rules" in guard


def test_a_run_without_guard_off_says_the_effect_was_not_measured():
    from tests.support.metrics_support import run_of

    from experiments.report import compute_metrics
    from experiments.reports.summary import summary_lines

    lines = summary_lines(compute_metrics(run_of([rec(task="A", guard="rules")])))
    assert lines[2].startswith("Guard effect: not measured")


def test_report_md_opens_with_the_summary(tmp_path):
    from experiments.report import compute_metrics
    from experiments.reports.markdown import render_report
    from experiments.reports.summary import summary_lines

    m = compute_metrics(_guarded_run())
    md = render_report(m, plot_paths=[], out_dir=tmp_path)
    head = md.splitlines()
    assert head[0].startswith("# Report")
    bullets = [line for line in head[1:6] if line.startswith("- **")]
    assert [b[4:-2] for b in bullets] == summary_lines(m)


def _figures(monkeypatch, tmp_path, m):
    """The figures write_plots draws (kept open), by file stem."""
    pytest.importorskip("matplotlib")
    from experiments.reports import plots

    drawn = []
    monkeypatch.setattr(plots.plt, "close", lambda fig: drawn.append(fig))
    paths = plots.write_plots(m, tmp_path)
    return {p.stem: fig for p, fig in zip(paths, drawn)}


def _bar_colours(fig) -> dict[str, str]:
    from matplotlib.colors import to_hex

    out = {}
    for ax in fig.axes:
        for container in ax.containers:
            if getattr(container, "patches", None) and container.get_label():
                out[container.get_label()] = to_hex(container.patches[0].get_facecolor())
    return out


def test_every_figure_gives_each_meaning_one_colour(monkeypatch, tmp_path):
    from experiments.report import compute_metrics
    from experiments.reports.palette import CLEAN, GUARD_OFF, GUARD_ON

    figures = _figures(monkeypatch, tmp_path, compute_metrics(_guarded_run()))
    assert set(figures) == {"fig4_failed_planner", "per_type_planner", "components_delta"}
    colours = {stem: _bar_colours(fig) for stem, fig in figures.items()}
    assert colours["fig4_failed_planner"] == {"guard off": GUARD_OFF.lower(), "guard rules": GUARD_ON.lower()}
    assert colours["per_type_planner"] == {"clean (guard off)": CLEAN.lower(), "perturbed, guard off": GUARD_OFF.lower(),
                                           "perturbed, guard rules": GUARD_ON.lower()}
    assert {label.split(" · ")[1]: c for label, c in colours["components_delta"].items()} == {
        "guard off": GUARD_OFF.lower(), "guard rules": GUARD_ON.lower()}


def test_counts_get_whole_number_ticks_and_zero_bars_stay_visible(monkeypatch, tmp_path):
    from matplotlib.colors import to_hex

    from experiments.report import compute_metrics
    from experiments.reports.palette import GUARD_OFF, GUARD_ON

    fig = _figures(monkeypatch, tmp_path, compute_metrics(_guarded_run()))["fig4_failed_planner"]
    ax = fig.axes[0]
    fig.canvas.draw()
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    zero_marks = [line for line in ax.lines if list(line.get_ydata()) == [0, 0]]
    # clean: 0 failed with and without the guard (perturbed: 2 and 1) — two zero bars, each marked in its colour
    assert sorted(to_hex(line.get_color()) for line in zero_marks) == sorted([GUARD_OFF.lower(), GUARD_ON.lower()])


def test_report_md_shows_settings_in_words_not_parameter_dicts(tmp_path):
    """A perturbation with overrides and a dump style reads `rate_dialog (language: zh; focused-window dump)`
    in report.md's tables; the label stays the key of metrics.json."""
    from experiments.report import compute_metrics
    from experiments.reports.markdown import render_report
    from tests.support.metrics_support import run_of

    over = {"perturbation": "rate_dialog", "component": "transition", "overrides": {"language": "zh"},
            "dump": "focused_window"}
    records = [rec(task="A"), rec(task="A", guard="rules")]
    for guard in ("off", "rules"):
        r = rec(task="A", guard=guard, success=guard == "rules", perturbation="rate_dialog", component="transition")
        r.update(over)
        records.append(r)
    m = compute_metrics(run_of(records))
    assert "rate_dialog{language=zh}@focused_window" in m.perturbations
    md = render_report(m, plot_paths=[], out_dir=tmp_path)
    assert "rate_dialog (language: zh; focused-window dump)" in md
    assert "rate_dialog{language=zh}" not in md
