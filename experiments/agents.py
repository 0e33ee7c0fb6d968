"""Build the agent an episode asks for (and wrap it with the guard)."""

from __future__ import annotations

from typing import Any

from experiments.spec import EpisodeSpec

AGENT_DOCS = {
    "replay": "replays a clean run's coordinates; retries the same tap when nothing changes (stale-coordinate pattern)",
    "planner": "follows the semantic plan with seeded propensities to engage pop-ups, miss silent failures and drift",
    "oracle": "robust reference: re-grounds, declines pop-ups, waits out loading, retries failed actions",
    "reference": "executes the semantic plan literally (no interruption handling)",
    "vlm": "an OpenAI-compatible multimodal model (screenshot + goal + history -> JSON action)",
}


def build_agent(ep: EpisodeSpec, task: Any) -> Any:
    kind, params = ep.agent.kind, dict(ep.agent.params)
    if kind == "replay":
        from benchmark.agents import ReplayAgent

        agent: Any = ReplayAgent.from_task(task, **params)
    elif kind == "planner":
        from benchmark.agents import PlannerAgent, PlannerParams

        params.setdefault("seed", ep.agent_seed)
        agent = PlannerAgent(task.reference_solution(), PlannerParams(**params))
    elif kind == "oracle":
        from benchmark.agents import OracleAgent

        agent = OracleAgent(task.reference_solution(), **params)
    elif kind == "reference":
        from benchmark.agents import ReferenceAgent

        agent = ReferenceAgent(task.reference_solution())
    elif kind == "vlm":
        from benchmark.agents.vlm import VLMAgent

        agent = VLMAgent(**params)
    else:  # pragma: no cover - the spec validates kinds
        raise ValueError(f"agent kind {kind!r} is unknown; expected one of {', '.join(AGENT_DOCS)}")
    if ep.guard == "off":
        return agent
    import ttir

    cfg = ttir.TTIRConfig.with_mode(ep.guard)
    if ep.guard_config:
        cfg = cfg.override(ep.guard_config)
    return ttir.guard(agent, config=cfg)
