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
history and that step.

Pairs of candidates whose success counts differ by at least ``margin`` are the preferences; each
pair shares the checkpoint's task, state and history. The guard's agreement: among pairs with a
``guard`` candidate on one side, the share in which it is the preferred one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, Field

from experiments.checkpoints.model import Checkpoint, load


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


def _agent_spec(name: str, kind: str, params: dict[str, Any]) -> Any:
    from experiments.spec import AgentSpec

    return AgentSpec(name=name, kind=kind, params=params)  # type: ignore[arg-type]


def _source_agent(ck: Checkpoint) -> Any:
    spec = json.loads((Path(ck.source_run) / "spec.json").read_text()) if (Path(ck.source_run) / "spec.json").exists() else {}
    for a in spec.get("agents") or []:
        if a.get("name") == ck.source_agent:
            return _agent_spec(a["name"], a["kind"], a.get("params") or {})
    return _agent_spec(ck.source_agent, ck.source_agent_kind, {})


def _episode(ck: Checkpoint, agent: Any, seed: int, guard: str = "off") -> Any:
    from experiments.spec import EpisodeSpec

    return EpisodeSpec(task=ck.task, instance=ck.instance, task_seed=ck.task_seed, perturbation=ck.perturbation,
                       overrides=ck.overrides, under=ck.under, dump=ck.dump, budget_multiplier=ck.budget_multiplier,
                       trap_budget_factor=ck.trap_budget_factor, agent=agent, guard=guard, seed=seed,  # type: ignore[arg-type]
                       checkpoint=ck.model_dump(mode="json"))


def _propose(ck: Checkpoint, agent: Any, seed: int, guard: str = "off") -> tuple[dict[str, Any], bool]:
    """(the next action ``agent`` takes at the checkpoint, whether the guard's recovery chose it)."""
    from experiments.agents import build_agent
    from experiments.checkpoints.build import open_env
    from experiments.checkpoints.resume import ReplayedStart, ResumedAgent
    from experiments.worker import _jpeg

    ep = _episode(ck, agent, seed, guard)
    env, shown, task, _ = open_env(ep)
    try:
        start = ReplayedStart(shown, ck, _jpeg)
        obs = start.reset(task)
        built = build_agent(ep, task)
        resumed = ResumedAgent(built, start)
        resumed.reset(task.goal)
        step = resumed.step(obs)
        events = built.pop_events() if hasattr(built, "pop_events") else []
        acted = any(e.get("type") in ("recovery_step", "session_opened", "claim_blocked") for e in events)
        return step.action.to_dict(), acted
    finally:
        env.close()


def rollout(ck: Checkpoint, action: dict[str, Any], agent: Any, seed: int) -> bool:
    """Restore ``ck``, execute ``action``, let ``agent`` go on; done-gated success."""
    from benchmark import run_episode
    from experiments.agents import build_agent
    from experiments.checkpoints.build import open_env
    from experiments.checkpoints.resume import ReplayedStart, ResumedAgent
    from experiments.worker import _jpeg

    if action.get("action_type") == "status":
        return False  # ending the episode at the broken state: the task was not done (the source failed)
    ep = _episode(ck, agent, seed)
    env, shown, task, _ = open_env(ep)
    try:
        start = ReplayedStart(shown, ck, _jpeg, then=[action])
        agent_ = ResumedAgent(build_agent(ep, task, guard=False), start)
        return bool(run_episode(start, task, agent_, max(1, ck.remaining_budget - 1)).success)
    finally:
        env.close()


def preferences(ck_dir: Path | str, out: Path | str, *, repeats: int = 2, margin: int = 2,
                position: str = "t") -> PrefsSummary:
    """Collect, roll out and pair the candidates of every checkpoint at ``position``; write the pairs as JSONL.

    Args:
        ck_dir: a folder written by ``ttir checkpoints``.
        out: the JSONL file of preferences.
        repeats: seeds of the source agent in the panel.
        margin: the least difference in successes that makes a pair.
        position: which checkpoints (AndroidFlux: ``t``).

    Returns:
        The counts and the guard's agreement.
    """
    cks = [c for c in load(ck_dir) if c.position == position]
    summary = PrefsSummary()
    pairs: list[Preference] = []
    for ck in cks:
        source = _source_agent(ck)
        panel = [(_agent_spec("oracle", "oracle", {}), 0), (_agent_spec("reference", "reference", {}), 0),
                 *((source, s) for s in range(repeats))]
        summary.panel = [f"{a.name}:s{s}" for a, s in panel]
        proposals: list[tuple[str, dict[str, Any], Optional[bool]]] = []
        traj = _recorded_next(ck)
        if traj is not None:
            proposals.append(("agent", traj, None))
        guard_action, acted = _propose(ck, source, ck.source_seed, guard="rules")
        proposals.append(("guard", guard_action, acted))
        summary.guard_acted += acted
        for name, kind in (("oracle", "oracle"), ("reference", "reference")):
            proposals.append((name, _propose(ck, _agent_spec(name, kind, {}), 0)[0], None))
        cands: list[Candidate] = []
        for src, action, acted_ in proposals:
            same = next((c for c in cands if c.action == action), None)
            if same is None:
                cands.append(Candidate(action=action, sources=[src], guard_acted=acted_))
            else:
                same.sources.append(src)
                if acted_ is not None:
                    same.guard_acted = acted_
        for c in cands:
            for agent, seed in panel:
                c.successes += rollout(ck, c.action, agent, seed)
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

    traj = RunStore(ck.source_run).trajectory(ck.source_id) if Path(ck.source_run).exists() else None
    steps = (traj or {}).get("trajectory") or []
    if ck.prefix_steps < len(steps):
        return (steps[ck.prefix_steps].get("agent_step") or {}).get("action") or None
    return None
