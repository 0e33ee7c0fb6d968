"""``ttir report RUN_DIR``: compute every metric of a run and write report.md, metrics.json,
PNG plots (when matplotlib is installed) and viewer.html."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from loguru import logger
from pydantic import BaseModel

from experiments.reports.words import human_size, load_text  # noqa: F401 - part of this module's API
from experiments.metrics.adr import ADRRow, adr_pairs, adr_table
from experiments.metrics.attribution import Attribution, attribute_run
from experiments.metrics.episodes import MODEL_FREE_KINDS, RunData
from experiments.store import EPISODES
from ttir.core.errors import ConfigError
from experiments.metrics.guardstats import GuardStatsRow, TriggerCheck, guard_stats
from experiments.metrics.passk import PassAtKRow, pass_at_k_table
from experiments.metrics.safety import SafetyRow, safety_table
from experiments.metrics.success import (DeltaRow, FailureCountRow, SuccessRow, delta_table, failure_counts,
                                         success_rates)

REPORT_MD = "report.md"
METRICS_JSON = "metrics.json"
VIEWER_HTML = "viewer.html"


class AgentInfo(BaseModel):
    name: str
    kind: str
    model_free: bool
    model: Optional[str] = None
    behaviour: str = ""

    @property
    def label(self) -> str:
        from experiments.reports.tables import agent_label

        return agent_label(self.name, self.kind, self.model_free)


class RunMetrics(BaseModel):
    """Everything the report shows, serialisable to metrics.json."""

    run: str
    root: str
    episodes: int
    errors: int
    agents: list[AgentInfo]
    guards: list[str]
    perturbations: list[str]
    success: list[SuccessRow]
    components: list[DeltaRow]
    layers: list[DeltaRow]
    per_type: list[DeltaRow]
    failures: list[FailureCountRow]
    pass_at_k: list[PassAtKRow]
    adr: list[ADRRow]
    safety: list[SafetyRow]
    guard: list[GuardStatsRow]
    trigger_checks: list[TriggerCheck]
    attribution: list[Attribution]

    def agent(self, name: str) -> AgentInfo:
        return next(a for a in self.agents if a.name == name)

    def label(self, agent: str) -> str:
        return self.agent(agent).label


def agent_infos(run: RunData) -> list[AgentInfo]:
    from experiments.agents import AGENT_DOCS

    specs = {a.get("name"): a for a in (run.spec or {}).get("agents", [])}
    out = []
    for name in run.agents():
        kind = run.agent_kind(name)
        params = (specs.get(name) or {}).get("params") or {}
        out.append(AgentInfo(name=name, kind=kind, model_free=kind in MODEL_FREE_KINDS,
                             model=params.get("model") if kind not in MODEL_FREE_KINDS else None,
                             behaviour=AGENT_DOCS.get(kind, "")))
    return out


def compute_metrics(run: RunData | Path | str) -> RunMetrics:
    data = run if isinstance(run, RunData) else RunData.load(run)
    recs = data.records
    guard_rows, checks = guard_stats(data)
    return RunMetrics(
        run=data.name, root=str(data.root) if data.root else "", episodes=len(recs),
        errors=sum(r.status == "error" for r in recs), agents=agent_infos(data), guards=data.guards(),
        perturbations=data.perturbations(), success=success_rates(recs),
        components=delta_table(recs, "component"), layers=delta_table(recs, "layer"),
        per_type=delta_table(recs, "perturbation"), failures=failure_counts(recs), pass_at_k=pass_at_k_table(recs),
        adr=adr_table(data, adr_pairs(data)), safety=safety_table(data), guard=guard_rows, trigger_checks=checks,
        attribution=attribute_run(data))


def write_report(run_dir: Path | str, out_dir: Optional[Path | str] = None, *, plots: bool = True,
                 viewer: bool = True, self_contained: bool = False) -> list[Path]:
    """Write report.md, metrics.json, the PNG plots (if matplotlib is installed) and viewer.html
    into ``out_dir`` (default: the run directory). Returns the written paths. ``self_contained``:
    viewer.html embeds its screenshots (downscaled), so the one file can be shared.

    Raises:
        ConfigError: ``out_dir`` is another run's folder (its own report would be replaced).
    """
    from experiments.reports.markdown import render_report

    run = RunData.load(run_dir)
    out = Path(out_dir) if out_dir is not None else run.root
    assert out is not None
    if out_dir is not None and (out / EPISODES).is_file() and out.resolve() != Path(run_dir).resolve():
        # the other run's own report.md, metrics.json and viewer.html would be replaced by this one's
        raise ConfigError(f"--out {out} is the folder of another run (it holds {EPISODES}); its own report would be "
                          f"replaced by the report of {run_dir}. Choose a new folder, or leave --out out to write "
                          f"into {run_dir}")
    out.mkdir(parents=True, exist_ok=True)
    metrics = compute_metrics(run)
    written: list[Path] = []
    plot_paths: Optional[list[Path]] = None
    if plots:
        try:
            from experiments.reports.plots import write_plots

            plot_paths = write_plots(metrics, out)
            written.extend(plot_paths)
        except ImportError as exc:
            logger.warning("plots skipped: {}", exc)
            plot_paths = None
    else:
        plot_paths = []
    viewer_path = None
    if viewer:
        from experiments.viewer import write_viewer

        viewer_path = write_viewer(run, metrics, out / VIEWER_HTML, self_contained=self_contained, report=REPORT_MD)
        if self_contained:
            logger.info("{}: one self-contained file, {} (screenshots embedded)", viewer_path,
                        human_size(viewer_path.stat().st_size))
    md = out / REPORT_MD
    from experiments.checkpoints.report import recovery_section

    md.write_text(render_report(metrics, plot_paths=plot_paths, out_dir=out, viewer=viewer_path,
                                viewer_embedded=self_contained) + (recovery_section(run) or ""), encoding="utf-8")
    written.insert(0, md)
    js = out / METRICS_JSON
    js.write_text(json.dumps(metrics.model_dump(mode="json"), indent=1, default=str), encoding="utf-8")
    written.insert(1, js)
    if viewer_path is not None:
        written.append(viewer_path)
    return written


