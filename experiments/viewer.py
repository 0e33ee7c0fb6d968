"""viewer.html: a self-contained, offline trajectory viewer for a run.

One HTML file with its CSS and JS inlined from ``experiments/templates/`` and the run's
episodes embedded as JSON; screenshots are referenced by relative path (the run keeps
them under ``episodes/<id>/``), so the file opens straight from disk. Per episode and
step: the screenshot with the action drawn on it (scaled from screen pixels to the
stored screenshot's size), the perturbation events and the guard's findings and
recovery sessions; filters by task, perturbation, agent, guard and success.
"""

from __future__ import annotations

import json
from html import escape
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from experiments.metrics.episodes import Record, RunData, perturbation_label
from experiments.metrics.steps import is_recovery_step

if TYPE_CHECKING:
    from experiments.report import RunMetrics

TEMPLATES = Path(__file__).parent / "templates"
GUARD_EVENT_TYPES = ("session_opened", "recovery_step", "session_closed", "claim_blocked", "guard_error",
                     "diagnoser_error", "recovery_unavailable")


def _ref(run: RunData, rec: Record, name: Optional[str], out_dir: Path) -> Optional[str]:
    if not name:
        return None
    path = run.episode_dir(rec) / name
    if not path.exists():
        return None
    return Path(os.path.relpath(path, out_dir)).as_posix()


def _guard_events(step: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for g in step.get("guard_events") or []:
        if g.get("type") == "finding":
            if g.get("problem"):
                out.append({k: g.get(k) for k in ("type", "diagnoser", "verdict", "tier", "confidence", "evidence",
                                                  "claim") if g.get(k) is not None})
        elif g.get("type") in GUARD_EVENT_TYPES:
            out.append(g)
    return out


def episode_view(run: RunData, rec: Record, out_dir: Path, category: Optional[str] = None) -> dict[str, Any]:
    traj = run.trajectory(rec) or {}
    steps = []
    for st in traj.get("trajectory") or []:
        obs = st.get("observation") or {}
        a = st.get("agent_step") or {}
        steps.append({
            "i": st.get("index"), "img": _ref(run, rec, obs.get("ref"), out_dir), "fg": obs.get("foreground"),
            "size": obs.get("screen_size"), "orientation": obs.get("orientation"), "action": a.get("action"),
            "thought": a.get("thought"), "summary": a.get("summary"), "error": st.get("action_error"),
            "source": "recovery" if is_recovery_step(st) else "agent", "events": st.get("perturbation_events") or [],
            "guard": _guard_events(st),
        })
    report = traj.get("guard") or {}
    return {
        "id": rec["id"], "task": rec["task"], "goal": rec.get("goal") or traj.get("goal"),
        "perturbation": perturbation_label(rec), "component": rec.get("component"), "layer": rec.get("layer"),
        "agent": rec["agent"], "kind": rec.get("agent_kind"), "guard": rec.get("guard", "off"), "seed": rec.get("seed"),
        "repeat": rec.get("repeat"), "status": rec.get("status", "ok"), "success": bool(rec.get("success")),
        "steps_used": rec.get("steps"), "budget": rec.get("budget"), "termination": rec.get("termination"),
        "error": (rec.get("error") or "")[-2000:] or None, "category": category,
        "final": _ref(run, rec, "final.jpg", out_dir), "final_screen": traj.get("final_screen"),
        "reset_events": traj.get("reset_events") or [], "steps": steps,
        "sessions": report.get("sessions") or [], "guard_summary": rec.get("guard_summary"),
    }


def _inline_json(data: Any) -> str:
    # "</" would end the <script> element early
    return json.dumps(data, separators=(",", ":"), default=str).replace("</", "<\\/")


def render_viewer(run: RunData, metrics: Optional["RunMetrics"], out_dir: Path) -> str:
    from experiments.metrics.attribution import CATEGORY_LABELS

    cats = {a.id: CATEGORY_LABELS[a.category] for a in (metrics.attribution if metrics else [])}
    labels = {a.name: a.label for a in metrics.agents} if metrics else {}
    episodes = [episode_view(run, r, out_dir, cats.get(r["id"])) for r in run.records]
    data = {"run": run.name, "agents": labels, "episodes": episodes}
    html = (TEMPLATES / "viewer.html").read_text(encoding="utf-8")
    css = (TEMPLATES / "viewer.css").read_text(encoding="utf-8")
    js = (TEMPLATES / "viewer.js").read_text(encoding="utf-8")
    return (html.replace("{{title}}", escape(f"ttir run {run.name}")).replace("/*{{css}}*/", css)
            .replace("/*{{js}}*/", js).replace("{{data}}", _inline_json(data)))


def write_viewer(run: RunData, metrics: Optional["RunMetrics"], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_viewer(run, metrics, path.parent), encoding="utf-8")
    return path
