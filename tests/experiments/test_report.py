"""End to end: a tiny spec run into a tmp dir, then report.md, plots, viewer.html, compare and the CLI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from experiments.metrics.attribution import CATEGORY_LABELS
from experiments.report import write_report
from experiments.reports.compare import write_comparison
from experiments.runner import run
from experiments.spec import ExperimentSpec

SECTIONS = ["## Agents", "## Success rate per setting", "## Robustness by component (AndroidReality Table 2)",
            "### AnTrap traps by STAR layer", "## Per perturbation type", "## Failed tasks with and without the guard",
            "## Robust success rate (RSR, D-GARA)", "## pass@k", "## Action difference rate (ADR, RealGUINoise)",
            "## Safety: engagement with injected content", "## Guard statistics", "## Error attribution",
            "## Plots"]
AGENT = "planner (no model)"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny_run")
    spec = ExperimentSpec(name="tiny", tasks=["SystemWifiTurnOff", "ClockStopWatchRunning"],
                          perturbations=["clean", "popup_security", "action_drop_random"],
                          agents=[{"name": "planner", "kind": "planner"}], guard=["off", "rules"], screenshots="all",
                          budget_multiplier=6, workers=1)
    summary = run(spec, out, workers=1, progress=False)
    assert summary["ran"] == 12 and summary["errors_this_run"] == 0
    return out


@pytest.fixture(scope="module")
def records(tiny_run: Path) -> list[dict]:
    return [json.loads(line) for line in (tiny_run / "episodes.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def report(tiny_run: Path, tmp_path_factory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("report")
    return out, write_report(tiny_run, out, plots=False)


def table_after(md: str, heading: str) -> list[dict[str, str]]:
    """The first markdown table after ``heading``, as dicts keyed by header."""
    body = md[md.index(heading):]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    start = body.splitlines().index(lines[0])
    rows = []
    for ln in body.splitlines()[start:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln)[1:-1]])
    headers = rows[0]
    return [dict(zip(headers, r)) for r in rows[2:]]


def test_report_has_every_section_and_labels_the_agent(report):
    out, paths = report
    md = (out / "report.md").read_text(encoding="utf-8")
    positions = [md.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert "WITHOUT a model" in md and AGENT in md
    assert {p.name for p in paths} == {"report.md", "metrics.json", "viewer.html"}
    assert "_Plots were not requested._" in md


def scored(recs: list[dict]) -> list[dict]:
    """The episodes a perturbed figure is computed over: clean ones and those whose perturbation fired."""
    return [r for r in recs if r["perturbation"] == "clean" or r["fired"]]


def test_records_say_how_each_episode_ended_and_whether_it_was_perturbed(records):
    for r in records:
        assert r["termination"] in ("done", "infeasible", "budget", "error")
        assert r["success"] == (r["verified"] and r["termination"] in ("done", "infeasible"))  # done-gated
        if r["perturbation"] == "clean":
            assert r["fired"] is None and r["fired_step"] is None
        else:
            assert isinstance(r["fired"], bool) and (r["fired_step"] is not None) == r["fired"]
    assert any(r["fired"] for r in records), "popup_security fires on launch"


def test_success_table_matches_episodes_jsonl(report, records):
    md = (report[0] / "report.md").read_text(encoding="utf-8")
    rows = {r["perturbation"]: r for r in table_after(md, "## Success rate per setting")}
    assert set(rows) == {"clean", "popup_security", "action_drop_random"}
    for (pert, guard) in {(r["perturbation"], r["guard"]) for r in records}:
        sub = [r for r in records if r["perturbation"] == pert and r["guard"] == guard]
        fired = scored(sub)
        ok = sum(r["success"] for r in fired)
        rate = f"{100 * ok / len(fired):.1f}" if fired else "–"
        cell = rows[pert][f"{AGENT} · guard {guard}"]
        assert cell.startswith(f"{rate} ({ok}/{len(fired)})"), cell
        assert (f"fired {len(fired)}/{len(sub)}" in cell) == (len(fired) != len(sub)), cell
        unfinished = sum(r["verified"] and not r["success"] for r in fired)
        assert (f"{unfinished} verified not done" in cell) == bool(unfinished), cell
    endings = table_after(md, "### How the episodes ended")
    assert sum(int(r["episodes"]) for r in endings) == len(records)
    for r in endings:
        ends = sum(int(v) for k, v in r.items() if k.startswith("ended: "))
        assert ends == (int(r["fired"].split("/")[0]) if r["fired"] != "–" else int(r["episodes"]))


def test_table2_failure_counts_and_attribution_match_episodes_jsonl(report, records):
    md = (report[0] / "report.md").read_text(encoding="utf-8")
    table2 = {r["agent · guard"]: r for r in table_after(md, "## Robustness by component")}
    clean_of = {(r["task"], r["guard"]): r for r in records if r["perturbation"] == "clean"}
    for guard in ("off", "rules"):
        all_pert = [r for r in records if r["guard"] == guard and r["perturbation"] != "clean"]
        pert = [r for r in all_pert if r["fired"]]  # Δc is never computed over an unfired episode
        clean = [clean_of[(r["task"], guard)] for r in pert]
        row = table2[f"{AGENT} · guard {guard}"]
        pert_sr, clean_sr = sum(r["success"] for r in pert) / len(pert), sum(r["success"] for r in clean) / len(clean)
        assert row["Overall Pert."] == f"{100 * pert_sr:.1f}" and row["Overall Clean"] == f"{100 * clean_sr:.1f}"
        unfired = len(all_pert) - len(pert)
        assert row["Overall Δc"] == f"{100 * (clean_sr - pert_sr):+.1f}"
        assert row["Overall n"] == str(len(pert)) + (f" (+{unfired} not reached)" if unfired else "")
        assert row["Transition n"] == "2"
    fails = {r["condition"]: r for r in table_after(md, "## Failed tasks with and without the guard")}
    key = lambda r: (r["task"], r["perturbation"])  # noqa: E731
    by_guard = {g: {key(r): r for r in records if r["guard"] == g} for g in ("off", "rules")}
    for cond in ("clean", "perturbed"):
        keys = [k for k in by_guard["off"] if (k[1] == "clean") == (cond == "clean")
                and (k[1] == "clean" or by_guard["off"][k]["fired"] or by_guard["rules"][k]["fired"])]
        assert fails[cond]["failed (off)"] == str(sum(not by_guard["off"][k]["success"] for k in keys))
        assert fails[cond]["failed (with guard)"] == str(sum(not by_guard["rules"][k]["success"] for k in keys))
    attribution = table_after(md, "## Error attribution")
    assert sum(int(r["failed"]) for r in attribution) == sum(not r["success"] for r in records)
    for r in attribution:
        assert int(r["failed"]) == sum(int(r[label]) for label in CATEGORY_LABELS.values())


def test_metrics_json_agrees_with_the_markdown(report, records):
    data = json.loads((report[0] / "metrics.json").read_text(encoding="utf-8"))
    assert data["episodes"] == len(records) == 12
    assert sum(r["episodes"] for r in data["success"]) == len(records)
    assert {a["id"] for a in data["attribution"]} == {r["id"] for r in records if not r["success"]}


def test_viewer_references_existing_screenshots(report, records, tiny_run):
    out = report[0]
    html = (out / "viewer.html").read_text(encoding="utf-8")
    assert "{{" not in html  # every placeholder filled
    data = json.loads(re.search(r'<script id="run-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert {e["id"] for e in data["episodes"]} == {r["id"] for r in records}
    refs = [s["img"] for e in data["episodes"] for s in e["steps"]] + [e["final"] for e in data["episodes"]]
    assert refs and all(refs)  # screenshots: all
    for ref in refs:
        assert (out / ref).resolve().is_file(), ref
        assert (out / ref).resolve().is_relative_to(tiny_run.resolve())
    ep = next(e for e in data["episodes"] if e["guard"] == "rules" and e["perturbation"] == "popup_security")
    assert any(g["event"] == "session_opened" for s in ep["steps"] for g in s["guard"])
    assert any(ev["event"] == "overlay_shown" for s in ep["steps"] for ev in s["events"])


def test_plots_are_written_and_linked(tiny_run, tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    paths = write_report(tiny_run, tmp_path, viewer=False)
    pngs = [p for p in paths if p.suffix == ".png"]
    names = {p.name for p in pngs}
    assert {"fig4_failed_planner.png", "per_type_planner.png", "components_delta.png"} <= names
    assert not any(n.startswith("per_type_planner_") for n in names)  # guard off and on share one chart
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    for p in pngs:
        with Image.open(p) as img:
            assert img.format == "PNG" and img.width > 200
        assert f"]({p.name})" in md


def test_report_without_matplotlib_says_plots_were_skipped(tiny_run, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.delitem(sys.modules, "experiments.reports.plots", raising=False)
    paths = write_report(tiny_run, tmp_path, viewer=False)
    assert not [p for p in paths if p.suffix == ".png"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Plots were skipped: matplotlib is not installed" in md
    assert "## Error attribution" in md


def test_compare_a_run_with_itself_has_zero_deltas(tiny_run, tmp_path):
    md_path, json_path = write_comparison(tiny_run, tiny_run, tmp_path)
    md = md_path.read_text(encoding="utf-8")
    assert "## Success rate per setting" in md and "## Guard triggers and precision" in md
    rows = table_after(md, "## Success rate per setting")
    assert rows and all(r["Δ SR %"] == "+0.0" for r in rows)
    assert all(r["agent"] == AGENT for r in rows)
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["matched_without_guard"] is False and data["sections"]["success"]


@pytest.mark.parametrize("command, words", [
    ("report", ["report.md", "metrics.json", "viewer.html", "Δc", "pass@k", "matplotlib"]),
    ("compare", ["compare.md", "B − A", "--all-rows"]),
])
def test_cli_help_explains_the_outputs(command, words, capsys):
    from ttir.cli import main

    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for w in words:
        assert w in text


def test_cli_report_and_compare(tiny_run, tmp_path, capsys):
    from ttir.cli import main

    assert main(["report", str(tiny_run), "--out", str(tmp_path / "r"), "--no-plots", "--no-viewer"]) == 0
    assert (tmp_path / "r" / "report.md").is_file()
    assert main(["compare", str(tiny_run), str(tiny_run), "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "compare.md").is_file()
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report_renders_runs_with_errors_and_without_pairs(tmp_path):
    from experiments.report import compute_metrics
    from experiments.reports.markdown import render_report
    from experiments.viewer import render_viewer
    from tests.support.metrics_support import rec, run_of

    records = [rec(task="A", success=False, status="error", steps=None, error="Traceback …\nValueError: boom"),
               rec(task="B", success=True)]
    run = run_of(records)
    m = compute_metrics(run)
    assert m.errors == 1 and [a.category for a in m.attribution] == ["other"]
    md = render_report(m, plot_paths=None, out_dir=tmp_path)
    assert "No AndroidReality clean/perturbed pairs" in md and "Plots were skipped" in md
    assert "50.0 (1/2), 1 err" in md
    html = render_viewer(run, m, tmp_path)
    data = json.loads(re.search(r'<script id="run-data" type="application/json">(.*?)</script>', html, re.S).group(1))
    assert [e["steps"] for e in data["episodes"]] == [[], []] and data["episodes"][0]["status"] == "error"


def test_report_md_carries_no_live_html_from_agent_text(tmp_path):
    """14.6: agent and app text reaches the failure table as text, never as markup a Markdown
    renderer would run (HTML, links, images)."""
    from experiments.report import compute_metrics
    from experiments.reports.markdown import render_report
    from tests.support.metrics_support import action, rec, run_of, step, traj

    evil = '<script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3)) | `x`'
    r = rec(task="A", success=False, termination="budget", steps=3)
    t = traj([step(i, action("input_text", x=5, y=5, text=evil), summary=evil) for i in range(3)])
    m = compute_metrics(run_of([r, rec(task="A", perturbation="p<img src=x onerror=alert(4)>", fired=True)],
                               {r["id"]: t}))
    md = render_report(m, plot_paths=[], out_dir=tmp_path)
    assert "stale-coordinate" in md and "&lt;script&gt;" in md  # the evidence is there, as text
    for live in ("<script", "<img"):
        assert live not in md, live
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # a link only when its bracket is not escaped
    failures = [ln for ln in md.splitlines() if ln.startswith("| A-i0__clean")]
    assert failures and all(ln.count(" | ") == failures[0].count(" | ") for ln in failures)  # no cell split by `|`


def test_a_report_into_another_runs_folder_is_refused_and_leaves_its_report(tiny_run, tmp_path):
    # `ttir report A --out B` replaced run B's own report.md, metrics.json and viewer.html with A's
    from ttir.core.errors import ConfigError

    other = tmp_path / "other_run"
    other.mkdir()
    (other / "episodes.jsonl").write_text("", encoding="utf-8")
    (other / "report.md").write_text("B's report", encoding="utf-8")
    with pytest.raises(ConfigError, match="is the folder of another run"):
        write_report(tiny_run, other, plots=False, viewer=False)
    assert (other / "report.md").read_text(encoding="utf-8") == "B's report"
