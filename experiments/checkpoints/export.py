"""Checkpoint contexts as JSONL for training pipelines (AndroidFlux §4.3; fields in docs/checkpoints.md).

One :class:`Context` a line per checkpoint of CK_DIR: the goal, where it sits relative to the first
error, a summary of the restored screen (from its stored dump), the neutral history, the candidate
next actions (the source agent's own action at the checkpoint), and — when a run started
``from_checkpoints: CK_DIR`` is given — the outcomes of every episode resumed from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from experiments.checkpoints.model import Checkpoint, load
from experiments.checkpoints.history import HistoryStep
from ttir.core.errors import ConfigError

MAX_LABELS = 60  # labels of the restored screen kept in the state summary


class StateSummary(BaseModel):
    package: Optional[str] = None  # the package most of the restored screen's elements belong to (System UI aside)
    labels: list[str] = Field(default_factory=list)  # texts / descriptions of its labelled elements, in order
    clickable: int = 0
    screen: str  # the restored screen's dump, relative to CK_DIR
    screenshot: Optional[str] = None
    jpeg_sha256: Optional[str] = None
    xml_sha256: Optional[str] = None


class Outcome(BaseModel):
    agent: str
    guard: str
    seed: int
    success: bool
    steps: Optional[int] = None
    termination: Optional[str] = None


class Context(BaseModel):
    id: str
    goal: str
    task: str
    perturbation: str
    position: str
    error_class: str
    ttir_category: str
    steps_taken: int
    prefix_steps: int
    remaining_budget: int
    state: StateSummary
    history: list[HistoryStep]
    candidate_actions: list[dict[str, Any]]
    injected: Optional[dict[str, Any]] = None  # t+K+: the last history step's action was injected (the oracle's)
    outcomes: list[Outcome] = Field(default_factory=list)


def state_summary(ck_dir: Path, ck: Checkpoint) -> StateSummary:
    """The restored screen of ``ck`` summarised from its stored dump (``CK_DIR/screens/<id>.xml``)."""
    from ttir.core.types import Observation

    xml, jpg = ck_dir / "screens" / f"{ck.id}.xml", ck_dir / "screens" / f"{ck.id}.jpg"
    obs = Observation.from_xml(xml.read_text(encoding="utf-8")) if xml.exists() else Observation()
    labels = [t for e in obs.elements for t in [(e.text or e.content_desc or "").strip()] if t][:MAX_LABELS]
    pkgs = [e.package for e in obs.elements if e.package and e.package != "com.android.systemui"]
    return StateSummary(package=max(set(pkgs), key=pkgs.count) if pkgs else None, labels=labels,
                        clickable=sum(e.clickable for e in obs.elements), screen=f"screens/{ck.id}.xml",
                        screenshot=f"screens/{ck.id}.jpg" if jpg.exists() else None,
                        jpeg_sha256=ck.screen.jpeg_sha256, xml_sha256=ck.screen.xml_sha256)


def _source_next(ck: Checkpoint) -> list[dict[str, Any]]:
    """The source agent's own action at the checkpoint, from its trajectory (empty if not stored)."""
    from experiments.store import RunStore

    if ck.injected is not None:
        return []  # an injected state: the source agent never saw it
    traj = RunStore(ck.source_run).trajectory(ck.source_id) if Path(ck.source_run).exists() else None
    steps = (traj or {}).get("trajectory") or []
    if ck.prefix_steps < len(steps):
        a = (steps[ck.prefix_steps].get("agent_step") or {}).get("action")
        if a:
            return [{"source": "source_agent", "action": a}]
    return []


def contexts(ck_dir: Path | str, run_dir: Optional[Path | str] = None) -> list[Context]:
    """Every checkpoint of ``ck_dir`` as a :class:`Context` (outcomes from ``run_dir`` when given).

    Args:
        ck_dir: a checkpoint folder (``ttir checkpoints RUN_DIR --out CK_DIR``).
        run_dir: a run started ``from_checkpoints: CK_DIR``, whose outcomes each context lists.

    Returns:
        One context per checkpoint, in the folder's order.

    Raises:
        ConfigError: ``run_dir`` is not a run started from ``ck_dir``'s checkpoints.
    """
    ck_dir = Path(ck_dir)
    checkpoints = load(ck_dir)
    outcomes = {} if run_dir is None else _outcomes(ck_dir, Path(run_dir), {ck.id for ck in checkpoints})
    return [Context(id=ck.id, goal=ck.goal, task=ck.task, perturbation=ck.perturbation, position=ck.position,
                    error_class=ck.error_class, ttir_category=ck.ttir_category, steps_taken=ck.steps_taken,
                    prefix_steps=ck.prefix_steps, remaining_budget=ck.remaining_budget, state=state_summary(ck_dir, ck),
                    history=ck.history, candidate_actions=_source_next(ck), injected=ck.injected,
                    outcomes=outcomes.get(ck.id, []))
            for ck in checkpoints]


def _outcomes(ck_dir: Path, run_dir: Path, ids: set[str]) -> dict[str, list[Outcome]]:
    """The outcomes of ``run_dir``'s episodes resumed from a checkpoint of ``ck_dir``, by checkpoint id.

    Raises:
        ConfigError: ``run_dir`` is not a run, or none of its episodes started from ``ck_dir``
            (a run of the source agent, or one from another checkpoint folder, would give every
            context no outcome without a word).
    """
    from experiments.store import RunStore

    if not (run_dir / "episodes.jsonl").is_file():
        raise ConfigError(f"--run {run_dir}: no episodes.jsonl there; expected a run started with "
                          f"`from_checkpoints: {ck_dir}` in its spec (`ttir run`)")
    outcomes: dict[str, list[Outcome]] = {}
    for r in RunStore(run_dir).records():
        ck = r.get("checkpoint")
        if isinstance(ck, dict) and ck.get("id") in ids:
            outcomes.setdefault(ck["id"], []).append(Outcome(
                agent=r["agent"], guard=r.get("guard", "off"), seed=r.get("seed", 0), success=bool(r.get("success")),
                steps=r.get("steps"), termination=r.get("termination")))
    if ids and not outcomes:
        raise ConfigError(f"--run {run_dir}: none of its episodes started from a checkpoint of {ck_dir}; "
                          f"expected a run whose spec has `from_checkpoints: {ck_dir}`")
    return outcomes


def write_jsonl(ck_dir: Path | str, out: Path | str, run_dir: Optional[Path | str] = None) -> int:
    """Write :func:`contexts` to ``out`` (one JSON object a line). Returns the number of lines."""
    rows = contexts(ck_dir, run_dir)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with Path(out).open("w", encoding="utf-8") as fh:
        for c in rows:
            fh.write(json.dumps(c.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return len(rows)
