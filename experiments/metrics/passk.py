"""pass@k with the unbiased estimator of Chen et al. (2021).

For one task run n times with c successes, pass@k = 1 − C(n−c, k) / C(n, k): the
probability that at least one of k runs drawn without replacement from the n
succeeds. Runs of one task are the episodes that differ only in seed and repeat
(same task, instance, agent, guard, perturbation). A setting's pass@k is the mean
over its tasks, for k = 1 … the smallest n among them (so every k is measured on
the same tasks).
"""

from __future__ import annotations

from math import comb
from typing import Iterable, Optional

from pydantic import BaseModel

from experiments.metrics.episodes import GUARD_ORDER, group_by, ordered, perturbation_label, reached, succeeded
from experiments.records import EpisodeLike, as_episodes


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for ``c`` successes among ``n`` runs."""
    if n < 1:
        raise ValueError(f"n={n}: expected at least one run")
    if not 0 <= c <= n:
        raise ValueError(f"c={c}: expected 0 <= c <= n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k={k}: expected 1 <= k <= n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class PassAtKRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str
    perturbation: str
    tasks: int
    runs_per_task: int  # the smallest n over the tasks (k goes up to it)
    pass_at: dict[int, float]  # k -> mean pass@k over tasks


def task_runs(records: Iterable[EpisodeLike]) -> dict[tuple, tuple[int, int]]:
    """(agent, guard, perturbation, task, instance) -> (n runs, c successes), over the runs whose
    perturbation fired (``episodes.reached``)."""
    out: dict[tuple, tuple[int, int]] = {}
    for r in reached(records):
        key = (r.agent, r.guard, perturbation_label(r), r.task, r.instance)
        n, c = out.get(key, (0, 0))
        out[key] = (n + 1, c + int(succeeded(r)))
    return out


def pass_at_k_table(records: Iterable[EpisodeLike], max_k: Optional[int] = None) -> list[PassAtKRow]:
    recs = as_episodes(records)
    runs = task_runs(recs)
    agents = ordered(r.agent for r in recs)
    guards = ordered((r.guard for r in recs), GUARD_ORDER)
    perts = ordered((perturbation_label(r) for r in recs), ("clean",))
    kinds = {r.agent: r.agent_kind for r in recs}
    rows = []
    groups = group_by(runs.items(), lambda kv: kv[0][:3])
    for (agent, guard, pert), items in sorted(groups.items(), key=lambda kv: (
            agents.index(kv[0][0]), guards.index(kv[0][1]), perts.index(kv[0][2]))):
        ns = [n for _, (n, _) in items]
        top = min(ns) if max_k is None else min(max_k, min(ns))
        values = {k: sum(pass_at_k(n, c, k) for _, (n, c) in items) / len(items) for k in range(1, top + 1)}
        rows.append(PassAtKRow(agent=agent, agent_kind=kinds[agent], guard=guard, perturbation=pert, tasks=len(items),
                               runs_per_task=min(ns), pass_at=values))
    return rows
