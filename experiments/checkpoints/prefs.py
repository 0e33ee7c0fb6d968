"""Outcome-grounded recovery-action preferences (AndroidFlux §4.2, App. D): ``ttir checkpoints prefs``.

At every checkpoint at position ``t`` (the first error committed), candidate next actions are
collected, each rolled out by a fixed panel of agents with seeded repeats, and scored by how many
rollouts succeed (done-gated, within the remaining budget). Candidates (identical actions merged,
every source kept in ``sources``):

- ``agent`` — the source agent's own next action, as recorded;
- ``guard`` — what the rules-tier guard around the source agent does at the checkpoint (its
  recovery when it opens a session; the agent's action when it lets it through: ``guard_acted``);
- ``oracle`` / ``reference`` — the planner alternatives: the robust plan-follower's and the literal
  plan-follower's next action at the checkpoint.

The panel: ``oracle``, ``reference`` and the source agent (its kind and params) with seeds
``0 .. repeats-1`` (its propensities are seeded; the two plan-followers are deterministic and roll
out once each), plus any ``kind: python`` agent named in ``--panel-spec``. Every rollout restores the
checkpoint (replay, screen checked), executes the candidate, then primes the panel agent with the
history and that step. Proposals and rollouts run in worker processes with ``workers > 1``
(``_map``); each is self-contained and seeded, so the pairs are the same as with one.

Pairs of candidates whose success counts differ by at least ``margin`` are the preferences; each
pair shares the checkpoint's task, state and history. The guard's agreement: among pairs with a
``guard`` candidate on one side, the share in which it is the preferred one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import BaseModel, Field

from experiments.checkpoints.model import Checkpoint, load
from experiments.checkpoints.propose import agent_spec, episode_for, next_action, source_agent


class Candidate(BaseModel):
    action: dict[str, Any]
    sources: list[str]  # agent, guard, oracle, reference
    guard_acted: Optional[bool] = None  # for a guard candidate: the guard replaced the agent's action
    successes: int = 0
    rollouts: int = 0


class Preference(BaseModel):
    checkpoint: str
    task: str
    goal: str
    position: str
    error_class: str
    history: list[dict[str, Any]]
    state: dict[str, Optional[str]]  # the restored screen's digests
    chosen: Candidate
    rejected: Candidate
    margin: int


class PrefsSummary(BaseModel):
    checkpoints: int = 0
    candidates: int = 0
    rollouts: int = 0
    pairs: int = 0
    guard_acted: int = 0  # checkpoints at which the guard replaced the agent's action
    guard_pairs: int = 0  # pairs with a guard candidate on exactly one side
    guard_preferred: int = 0
    guard_top: int = 0  # checkpoints whose guard candidate has the most successes (ties included)
    panel: list[str] = Field(default_factory=list)

    @property
    def guard_agreement(self) -> Optional[float]:
        return self.guard_preferred / self.guard_pairs if self.guard_pairs else None


def _propose(job: tuple[Checkpoint, Any, int, str]) -> tuple[dict[str, Any], bool]:
    ck, agent, seed, guard = job
    return next_action(ck, agent, seed, guard)


def _rollout(job: tuple[Checkpoint, dict[str, Any], Any, int]) -> bool:
    return rollout(*job)


def _map(fn: Callable[[Any], Any], jobs: list[Any], workers: int) -> list[Any]:
    """``[fn(j) for j in jobs]``, in worker processes when ``workers > 1``; the results in ``jobs``' order.

    Every job is self-contained and seeded (a restored checkpoint, a seeded agent), so the results do
    not depend on which process ran which job or when: the output equals the sequential one.
    """
    if workers <= 1 or len(jobs) <= 1:
        return [fn(j) for j in jobs]
    import multiprocessing as mp
    import os
    from concurrent.futures import ProcessPoolExecutor

    from experiments.executor import warm_up
    from experiments.process_lifetime import die_with_parent

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    if ctx.get_start_method() == "fork":
        warm_up()  # forked workers inherit the imports and caches
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx, initializer=die_with_parent,
                             initargs=(os.getpid(),)) as pool:
        return list(pool.map(fn, jobs, chunksize=1))


def rollout(ck: Checkpoint, action: dict[str, Any], agent: Any, seed: int) -> bool:
    """Restore ``ck``, execute ``action``, let ``agent`` go on; done-gated success."""
    from benchmark import run_episode
    from experiments.agents import build_agent
    from experiments.checkpoints.propose import open_env
    from experiments.checkpoints.resume import ReplayedStart, ResumedAgent
    from experiments.worker import _jpeg

    if action.get("action_type") == "status":
        return False  # ending the episode at the broken state: the task was not done (the source failed)
    ep = episode_for(ck, agent, seed)
    env, shown, task, _ = open_env(ep)
    try:
        start = ReplayedStart(shown, ck, _jpeg, then=[action])
        agent_ = ResumedAgent(build_agent(ep, task, guard=False), start)
        return bool(run_episode(start, task, agent_, max(1, ck.remaining_budget - 1)).success)
    finally:
        env.close()


def preferences(ck_dir: Path | str, out: Path | str, *, repeats: int = 2, margin: int = 2,
                position: str = "t", workers: int = 1) -> PrefsSummary:
    """Collect, roll out and pair the candidates of every checkpoint at ``position``; write the pairs as JSONL.

    Args:
        ck_dir: a folder written by ``ttir checkpoints``.
        out: the JSONL file of preferences.
        repeats: seeds of the source agent in the panel.
        margin: the least difference in successes that makes a pair.
        position: which checkpoints (AndroidFlux: ``t``).
        workers: worker processes for the proposals and rollouts (the output is the same for any number).

    Returns:
        The counts and the guard's agreement.
    """
    cks = [c for c in load(ck_dir) if c.position == position]
    summary = PrefsSummary()
    oracle, reference = agent_spec("oracle", "oracle", {}), agent_spec("reference", "reference", {})
    sources = [source_agent(ck) for ck in cks]
    # 1. proposals: the guard's choice around the source agent, the two plan-followers' next actions
    asks = [job for ck, src in zip(cks, sources)
            for job in ((ck, src, ck.source_seed, "rules"), (ck, oracle, 0, "off"), (ck, reference, 0, "off"))]
    answers = iter(_map(_propose, asks, workers))
    all_cands: list[list[Candidate]] = []
    panels: list[list[tuple[Any, int]]] = []
    for ck, src in zip(cks, sources):
        panel = [(oracle, 0), (reference, 0), *((src, s) for s in range(repeats))]
        panels.append(panel)
        summary.panel = [f"{a.name}:s{s}" for a, s in panel]
        proposals: list[tuple[str, dict[str, Any], Optional[bool]]] = []
        recorded = _recorded_next(ck)
        if recorded is not None:
            proposals.append(("agent", recorded, None))
        guard_action, acted = next(answers)
        proposals.append(("guard", guard_action, acted))
        summary.guard_acted += acted
        proposals += [("oracle", next(answers)[0], None), ("reference", next(answers)[0], None)]
        cands: list[Candidate] = []
        for src_name, action, acted_ in proposals:
            same = next((c for c in cands if c.action == action), None)
            if same is None:
                cands.append(Candidate(action=action, sources=[src_name], guard_acted=acted_))
            else:
                same.sources.append(src_name)
                if acted_ is not None:
                    same.guard_acted = acted_
        all_cands.append(cands)
    # 2. rollouts: every candidate by every panel member
    jobs = [(ck, c.action, agent, seed) for ck, cands, panel in zip(cks, all_cands, panels)
            for c in cands for agent, seed in panel]
    results = iter(_map(_rollout, jobs, workers))
    pairs: list[Preference] = []
    for ck, cands, panel in zip(cks, all_cands, panels):
        for c in cands:
            for _ in panel:
                c.successes += next(results)
                c.rollouts += 1
        summary.checkpoints += 1
        summary.candidates += len(cands)
        summary.rollouts += sum(c.rollouts for c in cands)
        best = max(c.successes for c in cands)
        summary.guard_top += any("guard" in c.sources and c.successes == best for c in cands)
        for i, a in enumerate(cands):
            for b in cands[i + 1:]:
                if abs(a.successes - b.successes) < margin:
                    continue
                chosen, rejected = (a, b) if a.successes > b.successes else (b, a)
                pairs.append(Preference(checkpoint=ck.id, task=ck.task, goal=ck.goal, position=ck.position,
                                        error_class=ck.error_class, history=[h.model_dump() for h in ck.history],
                                        state={"jpeg_sha256": ck.screen.jpeg_sha256, "xml_sha256": ck.screen.xml_sha256},
                                        chosen=chosen, rejected=rejected, margin=chosen.successes - rejected.successes))
                if ("guard" in chosen.sources) != ("guard" in rejected.sources):
                    summary.guard_pairs += 1
                    summary.guard_preferred += "guard" in chosen.sources
    summary.pairs = len(pairs)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with Path(out).open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(p.model_dump_json() + "\n")
    return summary


def _recorded_next(ck: Checkpoint) -> Optional[dict[str, Any]]:
    from experiments.store import RunStore

    if ck.injected is not None:
        return None  # an injected state: the source agent never saw it
    traj = RunStore(ck.source_run).trajectory(ck.source_id) if Path(ck.source_run).exists() else None
    steps = (traj or {}).get("trajectory") or []
    if ck.prefix_steps < len(steps):
        return (steps[ck.prefix_steps].get("agent_step") or {}).get("action") or None
    return None
