"""Success rates, the paper's Δc / Δstep (AndroidReality §3.3, Table 2), D-GARA's RSR,
and failed-task counts with and without the guard (AndroidReality Figure 4).

Definitions (all computed per agent × guard mode):

- **Success** is done-gated, as AndroidWorld scores it: the verifier says yes on the device
  state AND the agent itself ended the episode (``episodes.succeeded``). An episode whose
  state was right when the budget ran out is counted apart, as *verified, not done*.
- **Fired**: a perturbed episode whose perturbation never took effect (``fired`` is false:
  the agent finished before the trigger, no draw hit) is a clean run; every perturbed
  figure below is computed over the episodes where it fired, and the others are counted
  as *not reached*.
- **SR** = successful episodes / episodes (perturbed settings: / episodes where it fired).
  An episode that raised (status ``error``) counts as a failure, as the paper counts null
  or skipped runs.
- **Δc** = SR(clean) − SR(perturbed) over the clean/perturbed *pairs* of group c
  (same task, instance, agent, guard, seed, repeat — see ``episodes.pair_key``), so
  both rates are measured on the same task subset, as in Table 2 and Figures 6/7.
  Positive = the perturbation hurts.
- **Δstep** = mean(steps perturbed − steps clean) over the pairs where *both*
  episodes succeeded ("comparable episodes": a failed run's step count is the
  budget or an early give-up, not the cost of solving). ``None`` when no pair qualifies.
- **RSR** (D-GARA) = |pairs solved clean and perturbed| / |pairs solved clean|.
- **Failed-task counts** (Figure 4): episodes that failed with guard ``off`` and with
  guard mode g, over the episodes run under both (same task, instance, perturbation,
  agent, seed, repeat) — perturbed ones where the perturbation fired in at least one of
  the two; relative reduction = (failed_off − failed_g) / failed_off.
"""

from __future__ import annotations

from typing import Iterable, Literal, Optional

from pydantic import BaseModel, Field

from benchmark.episode import TERMINATIONS
from experiments.metrics.episodes import (COMPONENT_ORDER, GUARD_ORDER, LAYER_ORDER, Record, fired, group_by, make_pairs,
                                          mean, not_reached, ordered, pair_key, perturbation_label, reached, succeeded,
                                          termination_of, verified_not_done)
from experiments.records import EpisodeLike, as_episodes


class SuccessRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str
    perturbation: str
    component: str
    layer: Optional[str] = None
    episodes: int  # every episode of the setting
    fired: Optional[int] = None  # perturbed settings: episodes where the perturbation fired (None: clean)
    successes: int  # done-gated, over the episodes where it fired
    verified_not_done: int = 0  # state verified but the agent never ended the episode (same episodes)
    errors: int
    success_rate: Optional[float] = None  # successes / fired episodes (None: it never fired)
    mean_steps: Optional[float] = None
    terminations: dict[str, int] = Field(default_factory=dict)  # how the episodes (fired ones) ended: done / infeasible / budget / error
    not_reached: list[str] = Field(default_factory=list)  # ids of the episodes whose perturbation never fired

    @property
    def scored(self) -> int:
        """Episodes the success rate is computed over."""
        return self.episodes if self.fired is None else self.fired


class DeltaCell(BaseModel):
    """Clean vs perturbed over the pairs of one group (a component, layer or perturbation),
    perturbed episodes where the perturbation fired; ``not_reached`` counts the others."""

    group: str
    pairs: int
    not_reached: int = 0
    clean_sr: Optional[float] = None
    pert_sr: Optional[float] = None
    delta_c: Optional[float] = None
    delta_step: Optional[float] = None
    step_pairs: int = 0
    solved_clean: int = 0
    still_solved: int = 0
    rsr: Optional[float] = None


class DeltaRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str
    cells: list[DeltaCell]

    def cell(self, group: str) -> Optional[DeltaCell]:
        return next((c for c in self.cells if c.group == group), None)


class FailureCountRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str  # the mode compared with "off"
    condition: Literal["clean", "perturbed"]
    episodes: int  # matched episodes per guard mode
    failed_without: int
    failed_with: int
    reduction: Optional[float] = None  # relative: (without - with) / without


def _kind(recs: list[Record]) -> str:
    return recs[0].agent_kind if recs else "?"


def success_rates(records: Iterable[EpisodeLike]) -> list[SuccessRow]:
    recs = as_episodes(records)
    out = []
    groups = group_by(recs, lambda r: (r.agent, r.guard, perturbation_label(r)))
    for (agent, guard, pert), rs in _sorted_groups(groups, recs):
        scored = reached(rs)
        ok_steps = [r.steps for r in scored if r.status == "ok" and r.steps is not None]
        succ = sum(succeeded(r) for r in scored)
        ends = [termination_of(r) for r in scored]
        out.append(SuccessRow(
            agent=agent, agent_kind=_kind(rs), guard=guard, perturbation=pert,
            component=rs[0].component_label, layer=rs[0].layer, episodes=len(rs),
            fired=None if rs[0].is_clean else len(scored), successes=succ,
            verified_not_done=sum(verified_not_done(r) for r in scored),
            errors=sum(r.status == "error" for r in rs), success_rate=succ / len(scored) if scored else None,
            mean_steps=mean(ok_steps), terminations={t: ends.count(t) for t in TERMINATIONS if t in ends},
            not_reached=[r.id for r in not_reached(rs)]))
    return out


def _sorted_groups(groups: dict, recs: list[Record]) -> list:
    agents = ordered(r.agent for r in recs)
    guards = ordered((r.guard for r in recs), GUARD_ORDER)
    perts = ordered((perturbation_label(r) for r in recs), ("clean",))

    def rank(item: tuple) -> tuple:
        key = item[0]
        return (agents.index(key[0]), guards.index(key[1]), perts.index(key[2]) if len(key) > 2 else 0)

    return sorted(groups.items(), key=rank)


def delta_cell(group: str, pairs: list[tuple[Record, Record]], unreached: int = 0) -> DeltaCell:
    """Δc, Δstep and RSR over (perturbed, clean) pairs (``make_pairs``: the perturbation fired)."""
    if not pairs:
        return DeltaCell(group=group, pairs=0, not_reached=unreached)
    clean_sr = sum(succeeded(c) for _, c in pairs) / len(pairs)
    pert_sr = sum(succeeded(p) for p, _ in pairs) / len(pairs)
    both = [(p, c) for p, c in pairs if succeeded(p) and succeeded(c)]
    diffs = [p.steps - c.steps for p, c in both if p.steps is not None and c.steps is not None]
    solved_clean = sum(succeeded(c) for _, c in pairs)
    return DeltaCell(group=group, pairs=len(pairs), not_reached=unreached, clean_sr=clean_sr, pert_sr=pert_sr,
                     delta_c=clean_sr - pert_sr, delta_step=mean(diffs), step_pairs=len(diffs), solved_clean=solved_clean,
                     still_solved=len(both), rsr=(len(both) / solved_clean) if solved_clean else None)


GroupBy = Literal["component", "layer", "perturbation"]


def delta_table(records: Iterable[EpisodeLike], by: GroupBy = "component") -> list[DeltaRow]:
    """One row per agent × guard mode; cells per group.

    ``component``: AndroidReality perturbations only (no AnTrap layer), cells overall /
    state / action / transition (Table 2). ``layer``: AnTrap traps only, cells overall /
    S / T / A / R. ``perturbation``: one cell per perturbation type (Figures 6/7).
    """
    recs = as_episodes(records)
    pairs = make_pairs(recs)
    clean_keys = {pair_key(r) for r in recs if r.is_clean}
    unfired = [r for r in recs if not r.is_clean and not fired(r) and pair_key(r) in clean_keys]
    if by == "component":
        unfired = [r for r in unfired if r.layer is None]
        pairs = [(p, c) for p, c in pairs if p.layer is None]
        groups, key = ordered((p.component for p, _ in pairs), COMPONENT_ORDER), (lambda p: p.component)
    elif by == "layer":
        unfired = [r for r in unfired if r.layer is not None]
        pairs = [(p, c) for p, c in pairs if p.layer is not None]
        groups, key = ordered((p.layer for p, _ in pairs), LAYER_ORDER), (lambda p: p.layer)
    elif by == "perturbation":
        groups = [g for g in ordered(perturbation_label(r) for r in recs) if g != "clean"]
        key = perturbation_label
    else:
        raise ValueError(f"by={by!r} is unknown; expected component, layer or perturbation")
    rows = []
    for (agent, guard), ps in _pair_groups(pairs, recs):
        mine = [r for r in unfired if (r.agent, r.guard) == (agent, guard)]
        cells = [delta_cell("overall", ps, len(mine))] if by != "perturbation" else []
        for g in groups:
            sub = [(p, c) for p, c in ps if key(p) == g]
            if sub:
                cells.append(delta_cell(str(g), sub, sum(key(r) == g for r in mine)))
        rows.append(DeltaRow(agent=agent, agent_kind=_kind([p for p, _ in ps]), guard=guard, cells=cells))
    return rows


def _pair_groups(pairs: list[tuple[Record, Record]], recs: list[Record]) -> list:
    groups = group_by(pairs, lambda pc: (pc[0].agent, pc[0].guard))
    agents = ordered(r.agent for r in recs)
    guards = ordered((r.guard for r in recs), GUARD_ORDER)
    return sorted(groups.items(), key=lambda kv: (agents.index(kv[0][0]), guards.index(kv[0][1])))


def failure_counts(records: Iterable[EpisodeLike]) -> list[FailureCountRow]:
    """Figure 4: failed episodes with guard off vs each other guard mode, clean and perturbed."""
    recs = as_episodes(records)
    guards = ordered((r.guard for r in recs), GUARD_ORDER)
    if "off" not in guards:
        return []

    def match_key(r: Record) -> tuple:
        return (r.task, r.instance, perturbation_label(r), r.agent, r.seed, r.repeat)

    by_guard = {g: {match_key(r): r for r in recs if r.guard == g} for g in guards}
    out = []
    for agent in ordered(r.agent for r in recs):
        for g in guards:
            if g == "off":
                continue
            common = [k for k in by_guard["off"] if k in by_guard[g] and k[3] == agent]
            for cond in ("clean", "perturbed"):
                keys = [k for k in common if (k[2] == "clean") == (cond == "clean")
                        and (fired(by_guard["off"][k]) or fired(by_guard[g][k]))]
                if not keys:
                    continue
                without = sum(not succeeded(by_guard["off"][k]) for k in keys)
                with_ = sum(not succeeded(by_guard[g][k]) for k in keys)
                out.append(FailureCountRow(
                    agent=agent, agent_kind=by_guard[g][keys[0]].agent_kind, guard=g, condition=cond,
                    episodes=len(keys), failed_without=without, failed_with=with_,
                    reduction=(without - with_) / without if without else None))
    return out


__all__ = ["SuccessRow", "DeltaCell", "DeltaRow", "FailureCountRow", "success_rates", "delta_cell", "delta_table",
           "failure_counts"]
