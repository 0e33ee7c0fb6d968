"""viewer.html: an offline trajectory viewer for a run.

One HTML file with its CSS and JS inlined from ``experiments/templates/`` and the run's
episodes embedded as JSON (escaped for a ``<script>`` element: ``reports.escape``). Episodes
are listed by task, then setting (perturbation, agent, guard); the page opens on the first
failed episode (or, when none failed, the first one the guard recovered) at the step where
its trouble began. Per step: the screenshot with the action drawn on it (scaled from
screen pixels to the stored screenshot's size), the perturbation events, the guard's
findings and recovery sessions, in words (``recovery session 1 closed: resolved``);
filters by task, perturbation, agent, guard, result, how the episode ended and error
category. Its header opens with the run's three-line summary (``reports.summary``) and
links report.md; settings read as words (``rate_dialog (language: zh)``). Steps are counted
as ``ttir demo`` and episodes.jsonl count them: an action on the phone is a step; the
agent's closing declaration ends the episode and is not one.

Screenshots are referenced by relative path (the run keeps them under ``episodes/<id>/``),
or, with ``self_contained``, downscaled and embedded once each (identical frames of a
stuck agent are stored once), so the one file can be shared.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from experiments.metrics.episodes import (GUARD_ORDER, Record, RunData, fired, ordered, perturbation_label, succeeded,
                                          termination_of, verified)
from experiments.metrics.steps import is_recovery_step
from experiments.records import GuardEvent, Trajectory, TrajectoryStep
from experiments.reports.escape import script_json
from ttir.guarded.report import GUARD_EVENT_NAMES

if TYPE_CHECKING:
    from experiments.report import RunMetrics

TEMPLATES = Path(__file__).parent / "templates"
# the guard's events a step shows as they are (findings are summarised; a resting model is not a step's story)
SHOWN_GUARD_EVENTS = tuple(t for t in GUARD_EVENT_NAMES if t not in ("finding", "model_resting"))
EMBED_WIDTH = 240  # px: screenshots embedded by ``self_contained`` (the run keeps them at 360)
EMBED_QUALITY = 60
PLACEHOLDER = re.compile(r"\{\{title\}\}|/\*\{\{css\}\}\*/|/\*\{\{js\}\}\*/|\{\{data\}\}")


class LinkedImages:
    """Screenshots by relative path from the viewer's folder to the run's episode folders."""

    def __init__(self, run: RunData, out_dir: Path):
        self.run, self.out_dir = run, out_dir

    def ref(self, rec: Record, name: Optional[str]) -> Optional[str]:
        path = self._path(rec, name)
        return None if path is None else Path(os.path.relpath(path, self.out_dir)).as_posix()

    def _path(self, rec: Record, name: Optional[str]) -> Optional[Path]:
        if not name or self.run.root is None:
            return None
        path = self.run.episode_dir(rec) / name
        return path if path.is_file() else None

    def table(self) -> Optional[dict[str, str]]:
        return None


class EmbeddedImages(LinkedImages):
    """Screenshots downscaled to ``width`` and embedded as data URIs, each distinct image once."""

    def __init__(self, run: RunData, out_dir: Path, width: int = EMBED_WIDTH, quality: int = EMBED_QUALITY):
        super().__init__(run, out_dir)
        self.width, self.quality = width, quality
        self.images: dict[str, str] = {}

    def ref(self, rec: Record, name: Optional[str]) -> Optional[str]:
        from PIL import Image

        path = self._path(rec, name)
        if path is None:
            return None
        with Image.open(path) as img:
            img = img.convert("RGB")
            if img.width > self.width:
                img = img.resize((self.width, max(1, round(img.height * self.width / img.width))))
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=self.quality)
        data = buf.getvalue()
        key = hashlib.blake2b(data, digest_size=8).hexdigest()
        self.images.setdefault(key, "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii"))
        return key

    def table(self) -> Optional[dict[str, str]]:
        return self.images


def _guard_events(step: TrajectoryStep) -> list[dict[str, Any]]:
    out = []
    for g in step.guard_events:
        if g.event == "finding":
            if g.problem:
                out.append(_finding_view(g))
        elif g.event in SHOWN_GUARD_EVENTS:
            out.append(g.to_json())
    return out


def _finding_view(g: GuardEvent) -> dict[str, Any]:
    """The keys of a finding the viewer shows, those it has."""
    keys = ("event", "diagnoser", "verdict", "tier", "confidence", "evidence", "claim")
    values = {k: getattr(g, k, None) for k in keys}
    return {k: v for k, v in values.items() if v is not None}


def _focus(rec: Record, steps: list[dict[str, Any]], onset: Optional[int]) -> int:
    """The step the viewer opens an episode on: where its trouble began."""
    if not succeeded(rec) and onset is not None:
        return onset
    opened = next((s["i"] for s in steps if any(g.get("event") == "session_opened" for g in s["guard"])), None)
    if opened is not None:
        return int(opened)
    return int(rec.fired_step or 0)


def episode_view(run: RunData, rec: Record, images: LinkedImages, category: Optional[str] = None,
                 onset: Optional[int] = None) -> dict[str, Any]:
    traj = run.trajectory(rec) or Trajectory()
    steps = []
    for st in traj.trajectory:
        obs, a = st.observation, st.agent_step
        steps.append({
            "i": st.index, "img": images.ref(rec, obs.ref), "fg": obs.foreground,
            "size": list(obs.screen_size) if obs.screen_size is not None else None, "orientation": obs.orientation,
            "action": a.action.to_json() if a.action is not None else None,
            "thought": a.thought, "summary": a.summary, "error": st.action_error,
            "source": "recovery" if is_recovery_step(st) else "agent",
            "events": [e.to_json() for e in st.perturbation_events], "guard": _guard_events(st),
        })
    sessions = traj.guard.sessions if traj.guard is not None else []
    summary = rec.guard_summary
    acted = bool((summary is not None and (summary.sessions or summary.blocked_claims)) or sessions)
    ok = succeeded(rec)
    return {
        "id": rec.id, "task": rec.task, "goal": rec.goal or traj.goal,
        "perturbation": setting_text(rec), "component": rec.component, "layer": rec.layer,
        "agent": rec.agent, "kind": rec.agent_kind, "guard": rec.guard, "seed": rec.seed,
        "repeat": rec.repeat, "status": rec.status, "success": ok, "verified": verified(rec),
        "termination": termination_of(rec), "fired": None if rec.is_clean else fired(rec),
        "fired_step": rec.fired_step, "acted": acted, "recovered": acted and ok,
        "steps_used": rec.steps, "budget": rec.budget,
        "error": (rec.error or "")[-2000:] or None, "category": category,
        "final": images.ref(rec, "final.jpg"),
        "final_screen": traj.final_screen.to_json() if traj.final_screen is not None else None,
        "reset_events": traj.reset_events, "steps": steps, "focus": _focus(rec, steps, onset),
        "sessions": [s.to_json() for s in sessions],
        "guard_summary": summary.to_json() if summary is not None else None,
    }


def setting_text(rec: Record) -> str:
    """A perturbation setting in words: ``rate_dialog (language: zh; focused-window dump)``, not a
    parameter dict (``rate_dialog{language=zh}@focused_window``)."""
    parts = [f"{k}: {_value_text(rec.overrides[k])}" for k in sorted(rec.overrides or {})]
    if rec.dump:
        parts.append(f"{rec.dump.replace('_', '-')} dump")
    return rec.perturbation + (f" ({'; '.join(parts)})" if parts else "")


def _value_text(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_value_text(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "/".join(_value_text(x) for x in v)
    return str(v)


def ordered_records(run: RunData) -> list[Record]:
    """Records grouped by task (in run order), then perturbation (clean first), agent, guard, seed, repeat."""
    recs = run.records
    tasks = ordered(r.task for r in recs)
    perts, agents = run.perturbations(), run.agents()
    guards = ordered((r.guard for r in recs), GUARD_ORDER)
    return sorted(recs, key=lambda r: (tasks.index(r.task), perts.index(perturbation_label(r)),
                                       agents.index(r.agent), guards.index(r.guard), r.instance, r.seed, r.repeat))


def render_viewer(run: RunData, metrics: Optional["RunMetrics"], out_dir: Path, *, self_contained: bool = False,
                  report: Optional[str] = None) -> str:
    """The viewer's HTML. ``report``: the report.md it links to from its header (a path relative
    to ``out_dir``), or ``None``; with ``metrics`` the header opens with the run's three-line summary."""
    from experiments.metrics.attribution import CATEGORY_LABELS
    from experiments.reports.summary import summary_lines

    attributions = {a.id: a for a in (metrics.attribution if metrics else [])}
    labels = {a.name: a.label for a in metrics.agents} if metrics else {}
    images = EmbeddedImages(run, out_dir) if self_contained else LinkedImages(run, out_dir)
    episodes = []
    for r in ordered_records(run):
        a = attributions.get(r.id)
        episodes.append(episode_view(run, r, images, CATEGORY_LABELS[a.category] if a else None,
                                     a.step if a else None))
    data = {"run": run.name, "agents": labels, "episodes": episodes, "images": images.table(),
            "summary": summary_lines(metrics) if metrics else [], "report": report}
    fills = {"{{title}}": escape(f"ttir run {run.name}"), "/*{{css}}*/": (TEMPLATES / "viewer.css").read_text("utf-8"),
             "/*{{js}}*/": (TEMPLATES / "viewer.js").read_text("utf-8"), "{{data}}": script_json(data)}
    html = (TEMPLATES / "viewer.html").read_text(encoding="utf-8")
    # one pass: text filled in is never searched for placeholders again
    return PLACEHOLDER.sub(lambda m: fills[m.group(0)], html)


def write_viewer(run: RunData, metrics: Optional["RunMetrics"], path: Path, *, self_contained: bool = False,
                 report: Optional[str] = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_viewer(run, metrics, path.parent, self_contained=self_contained, report=report),
                    encoding="utf-8")
    return path
