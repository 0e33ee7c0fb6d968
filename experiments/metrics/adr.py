"""Action difference rate (RealGUINoise's ADR) with deterministic tokens.

ADR(perturbed, clean) = EditDistance(T_pert, T_clean) / |T_clean|, the word error rate
of the perturbed trajectory against the clean one of the same task, instance, agent,
guard mode, seed and repeat (RealGUINoise normalises by the clean reference, so 1.0
means as many edits as the clean run had steps; values above 1 happen). Unit costs for
substitution, insertion and deletion (Levenshtein). Pairs whose clean trajectory has no
step are skipped (ADR undefined).

Tokenisation — one token per trajectory step (agent or guard-recovery step alike, the
final ``status`` step included), a state–action–state transition written as::

    <package before> | <action type> | <target> | <argument> | <package after>

- *package before*: the package part of the step's observation ``foreground``;
  *package after*: that of the next step's observation (the final screen for the last
  step). Activities are dropped; ``?`` when unknown.
- *action type*: ``action_type`` as issued (``click``, ``input_text``, ``open_app`` …).
- *target* (touch actions and text input: anything with ``index`` or ``x``/``y``), the
  first that applies:
  1. when the run kept the step's UI dump (``save_xml: true`` → ``step_NNN.xml``): the
     element at ``index``, or the smallest element whose bounds contain (x, y) and that
     has an identity, written ``id:<resource-id>``, else ``text:<text>``, else
     ``desc:<content-desc>``;
  2. the first double-quoted phrase of the step's ``summary`` (the reference agents
     name the element they mean: ``Tap "Create contact"`` → ``label:create contact``);
  3. the cell of (x, y) on a 10 × 20 grid of the screen (``cell:c,r``) — coordinates
     only as a last resort, coarsened so that a few pixels of offset do not count.
  Non-touch actions have target ``-``.
- *argument*: the text typed (``input_text``) or answered (``answer``), the app opened
  (``open_app``), the direction (``scroll``; for ``swipe`` the dominant axis of
  (x2 − x, y2 − y)), the goal status (``status``); ``-`` otherwise.
All text is lower-cased and whitespace-collapsed. Raw coordinates never enter a token.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Sequence

from pydantic import BaseModel

from experiments.metrics.episodes import COMPONENT_ORDER, LAYER_ORDER, RunData, mean, ordered, perturbation_label, succeeded
from experiments.records import ActionView, Trajectory, TrajectoryLike, TrajectoryStep
from ttir.core.types import LOCATED_TYPES

GRID = (10, 20)
_QUOTED = re.compile(r'"([^"]+)"')


def _norm(text: Any) -> str:
    return " ".join(str(text).split()).lower()


def _package(fg: Optional[str]) -> str:
    return (fg or "?").split("/")[0] or "?"


def _element_identity(el: Any) -> Optional[str]:
    if getattr(el, "resource_id", None):
        return "id:" + _norm(el.resource_id)
    if getattr(el, "text", None):
        return "text:" + _norm(el.text)
    if getattr(el, "content_desc", None):
        return "desc:" + _norm(el.content_desc)
    return None


def _from_xml(xml_path: Path, action: ActionView) -> Optional[str]:
    from ttir.core.types import Observation

    try:
        obs = Observation.from_xml(xml_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    els = obs.elements
    idx = action.index
    if idx is not None and 0 <= idx < len(els):
        return _element_identity(els[idx])
    x, y = action.x, action.y
    if x is None or y is None:
        return None
    hits = []
    for el in els:
        x1, y1, x2, y2 = el.bounds
        ident = _element_identity(el)
        if ident and x1 <= x < x2 and y1 <= y < y2:
            hits.append(((x2 - x1) * (y2 - y1), ident))
    return min(hits)[1] if hits else None


def target_of(step: TrajectoryStep, episode_dir: Optional[Path] = None) -> str:
    action = step.action
    if action is None or action.action_type not in LOCATED_TYPES or (action.index is None and action.x is None):
        return "-"
    if episode_dir is not None:
        xml = episode_dir / f"step_{int(step.index or 0):03d}.xml"
        if xml.exists():
            ident = _from_xml(xml, action)
            if ident:
                return ident
    m = _QUOTED.search(step.agent_step.summary or "")
    if m:
        return "label:" + _norm(m.group(1))
    x, y = action.x, action.y
    if x is None or y is None:
        return f"index:{action.index}"
    w, h = step.observation.screen_size or (1080, 2400)
    col = min(GRID[0] - 1, max(0, int(x * GRID[0] / max(1, w))))
    row = min(GRID[1] - 1, max(0, int(y * GRID[1] / max(1, h))))
    return f"cell:{col},{row}"


def argument_of(action: ActionView) -> str:
    t = action.action_type
    if t in ("input_text", "answer"):
        return _norm(action.text or "")
    if t == "open_app":
        return _norm(action.app_name or "")
    if t == "scroll":
        return action.direction or "-"
    if t == "swipe":
        dx = (action.x2 or 0) - (action.x or 0)
        dy = (action.y2 or 0) - (action.y or 0)
        if abs(dx) >= abs(dy):
            return "right" if dx > 0 else "left"
        return "down" if dy > 0 else "up"
    if t == "status":
        return action.goal_status or "-"
    return "-"


def action_tokens(trajectory: TrajectoryLike, episode_dir: Optional[Path] = None) -> list[str]:
    """The deterministic tokens of a trajectory (see the module docstring)."""
    traj = Trajectory.parse(trajectory, "trajectory")
    steps = traj.trajectory
    final = traj.final_screen
    final_pkg = _package((final.package or final.foreground) if final is not None else None)
    out = []
    for i, step in enumerate(steps):
        action = step.action
        if action is None:
            continue
        before = _package(step.observation.foreground)
        after = _package(steps[i + 1].observation.foreground) if i + 1 < len(steps) else final_pkg
        out.append("|".join([before, str(action.action_type), target_of(step, episode_dir),
                             argument_of(action), after]))
    return out


def edit_distance(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Levenshtein distance with unit costs."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def action_difference_rate(perturbed: Sequence[Any], clean: Sequence[Any]) -> Optional[float]:
    if not clean:
        return None
    return edit_distance(perturbed, clean) / len(clean)


class ADRPair(BaseModel):
    id: str
    clean_id: str
    agent: str
    guard: str
    perturbation: str
    component: str
    layer: Optional[str] = None
    both_succeeded: bool
    edits: int
    clean_len: int
    adr: float


class ADRRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str
    group: str  # a perturbation, a component, or "overall"
    pairs: int
    adr: Optional[float] = None
    pairs_both_succeeded: int = 0
    adr_both_succeeded: Optional[float] = None


def adr_pairs(run: RunData) -> list[ADRPair]:
    out = []
    for pert, clean in run.pairs():
        tp, tc = run.trajectory(pert), run.trajectory(clean)
        if tp is None or tc is None:
            continue
        a = action_tokens(tp, run.episode_dir(pert) if run.root else None)
        b = action_tokens(tc, run.episode_dir(clean) if run.root else None)
        if not b:
            continue
        d = edit_distance(a, b)
        out.append(ADRPair(id=pert.id, clean_id=clean.id, agent=pert.agent, guard=pert.guard,
                           perturbation=perturbation_label(pert), component=str(pert.component),
                           layer=pert.layer, both_succeeded=succeeded(pert) and succeeded(clean),
                           edits=d, clean_len=len(b), adr=d / len(b)))
    return out


def adr_table(run: RunData, pairs: Optional[list[ADRPair]] = None) -> list[ADRRow]:
    """Mean ADR per agent × guard: overall, per component (AndroidReality), per AnTrap layer, per perturbation."""
    pairs = adr_pairs(run) if pairs is None else pairs
    rows = []
    agents, guards = run.agents(), run.guards()
    for agent in agents:
        for guard in guards:
            ps = [p for p in pairs if p.agent == agent and p.guard == guard]
            if not ps:
                continue
            groups: list[tuple[str, list[ADRPair]]] = [("overall", ps)]
            for comp in ordered((p.component for p in ps if p.layer is None), COMPONENT_ORDER):
                groups.append((comp, [p for p in ps if p.layer is None and p.component == comp]))
            for layer in ordered((p.layer for p in ps if p.layer), LAYER_ORDER):
                groups.append((f"AnTrap {layer}", [p for p in ps if p.layer == layer]))
            for pert in ordered(p.perturbation for p in ps):
                groups.append((pert, [p for p in ps if p.perturbation == pert]))
            for name, sub in groups:
                both = [p.adr for p in sub if p.both_succeeded]
                rows.append(ADRRow(agent=agent, agent_kind=run.agent_kind(agent), guard=guard, group=name,
                                   pairs=len(sub), adr=mean([p.adr for p in sub]), pairs_both_succeeded=len(both),
                                   adr_both_succeeded=mean(both)))
    return rows


