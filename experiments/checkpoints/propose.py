"""The next action an agent takes at a checkpoint (prefs' candidates, the injected action of ``t+K+``).

- :func:`agent_spec` — an ``AgentSpec`` by name, kind and params;
- :func:`source_agent` — the source run's spec of the agent that made the first error;
- :func:`episode_for` — the ``EpisodeSpec`` of an agent started at a checkpoint;
- :func:`open_env` — the perturbed simulated phone of an episode, built as the worker builds it;
- :func:`next_action` — restore the checkpoint, prime the agent with its history, take one step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from experiments.checkpoints.model import Checkpoint
from experiments.store import read_json


def agent_spec(name: str, kind: str, params: dict[str, Any]) -> Any:
    """An ``experiments.spec.AgentSpec``."""
    from experiments.spec import AgentSpec

    return AgentSpec(name=name, kind=kind, params=params)  # type: ignore[arg-type]


def source_agent(ck: Checkpoint) -> Any:
    """The source agent of ``ck`` as its run's spec declared it (kind and params)."""
    path = Path(ck.source_run) / "spec.json"
    spec = read_json(path) if path.exists() else {}
    for a in spec.get("agents") or []:
        if a.get("name") == ck.source_agent:
            return agent_spec(a["name"], a["kind"], a.get("params") or {})
    return agent_spec(ck.source_agent, ck.source_agent_kind, {})


def episode_for(ck: Checkpoint, agent: Any, seed: int, guard: str = "off") -> Any:
    """The episode of ``agent`` (seed ``seed``, guard mode ``guard``) started at ``ck``."""
    from experiments.spec import EpisodeSpec

    return EpisodeSpec(task=ck.task, instance=ck.instance, task_seed=ck.task_seed, perturbation=ck.perturbation,
                       overrides=ck.overrides, under=ck.under, dump=ck.dump, budget_multiplier=ck.budget_multiplier,
                       trap_budget_factor=ck.trap_budget_factor, agent=agent, guard=guard, seed=seed,  # type: ignore[arg-type]
                       checkpoint=ck.model_dump(mode="json"))


def next_action(ck: Checkpoint, agent: Any, seed: int, guard: str = "off") -> tuple[dict[str, Any], bool]:
    """The next action ``agent`` takes at ``ck`` after being primed with its history.

    Args:
        ck: the checkpoint (its screen is checked after the replay: ``resume.CheckpointMismatch``).
        agent: an ``AgentSpec``.
        seed: the agent's seed.
        guard: ``off`` or a guard mode (then the guard's choice is returned).

    Returns:
        (the action as a dict, whether the guard's recovery chose it instead of the agent).
    """
    from experiments.agents import build_agent
    from experiments.checkpoints.resume import ReplayedStart, ResumedAgent
    from experiments.worker import _jpeg

    ep = episode_for(ck, agent, seed, guard)
    env, shown, task, _ = open_env(ep)
    try:
        start = ReplayedStart(shown, ck, _jpeg)
        obs = start.reset(task)
        built = build_agent(ep, task)
        resumed = ResumedAgent(built, start)
        resumed.reset(task.goal)
        step = resumed.step(obs)
        events = built.pop_events() if hasattr(built, "pop_events") else []
        acted = any(e.get("event") in ("recovery_step", "session_opened", "claim_blocked") for e in events)
        return step.action.to_dict(), acted
    finally:
        env.close()


def open_env(ep: Any) -> tuple[Any, Any, Any, int]:
    """(perturbed device, what the agent sees, task, source budget) for the episode spec ``ep``."""
    from benchmark import make_task
    from experiments.worker import budget_for, device
    from perturb import PerturbedDevice, make
    from perturb.dump_style import with_dump_style

    task = make_task(ep.task, seed=ep.task_seed, i=ep.instance)
    budget = budget_for(ep, task)
    perts = [make(name, **ov) for u in ep.under for name, ov in u.items()]
    perts += [] if ep.perturbation == "clean" else [make(ep.perturbation, **ep.overrides)]
    env = PerturbedDevice(device(), perts, seed=ep.episode_seed, budget=budget)
    return env, with_dump_style(env, ep.dump), task, budget
