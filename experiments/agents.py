"""Build the agent an episode asks for (and wrap it with the guard)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:  # the spec builds agents (check_builds): a type name only, no import cycle
    from experiments.spec import EpisodeSpec

AGENT_DOCS = {
    "replay": "replays a clean run's coordinates; retries the same tap when nothing changes (stale-coordinate pattern)",
    "planner": "follows the semantic plan with seeded propensities to engage pop-ups, miss silent failures and drift",
    "oracle": "robust reference: re-grounds, declines pop-ups, waits out loading, retries failed actions",
    "reference": "executes the semantic plan literally (no interruption handling)",
    "vlm": "an OpenAI-compatible multimodal model (screenshot + goal + history -> JSON action)",
    "python": "your own agent: factory 'package.module:function' called as function(facts, **params) in each worker",
}


def build_agent(ep: EpisodeSpec, task: Any, *, guard: bool = True, screen_size: Optional[tuple[int, int]] = None,
                budget: int = 0) -> Any:
    """The agent ``ep`` names, built with its params (wrapped by the guard unless ``guard=False``
    or the episode's guard is off). ``screen_size`` and ``budget`` reach a python agent's factory."""
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

        agent = ReferenceAgent(task.reference_solution(), **params)  # it takes none: a typo must not pass
    elif kind == "vlm":
        from benchmark.agents.vlm import VLMAgent

        agent = VLMAgent(**params)
    elif kind == "python":
        from experiments.python_agents import build_for

        agent = build_for(ep, task, screen_size, budget)
    else:  # pragma: no cover - the spec validates kinds
        raise ValueError(f"agent kind {kind!r} is unknown; expected one of {', '.join(AGENT_DOCS)}")
    if ep.guard == "off" or not guard:
        return agent
    import ttir

    return ttir.guard(agent, config=guard_config_for(ep.guard, ep.guard_config))


def agent_params(kind: str) -> Optional[list[str]]:
    """The ``params`` keys agent ``kind`` takes (``None``: any — a python agent's factory decides)."""
    import inspect

    if kind in ("planner", "oracle"):
        from benchmark.agents import PlannerParams

        return list(PlannerParams.model_fields)
    if kind == "reference":
        return []
    if kind == "replay":
        from benchmark.agents import ReplayAgent

        target: Any = ReplayAgent.__init__
        skip = {"self", "steps", "changed"}  # from_task records these itself
    elif kind == "vlm":
        from benchmark.agents.vlm import VLMAgent
        from ttir.core.config import VLMConfig

        names = [n for n in inspect.signature(VLMAgent.__init__).parameters if n not in ("self", "client", "vlm_settings")]
        return names + list(VLMConfig.model_fields)  # the rest goes to the model endpoint's settings
    else:
        return None
    return [n for n, p in inspect.signature(target).parameters.items()
            if n not in skip and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def agent_param_problem(kind: str, params: dict[str, Any]) -> Optional[tuple[str, str]]:
    """``(key, message)`` for the first key of ``params`` agent ``kind`` does not take, with the
    closest valid one; ``None`` when every key is known (or the kind takes any)."""
    from ttir.core.errors import did_you_mean

    valid = agent_params(kind)
    if valid is None:
        return None
    for key in params:
        if key not in valid:
            takes = f"valid: {', '.join(valid)}" if valid else f"kind {kind} takes no params"
            return str(key), f"unknown parameter {str(key)!r}{did_you_mean(str(key), valid)}; {takes}"
    return None


def guard_config_for(mode: str, overrides: dict[str, Any]) -> Any:
    """The TTIRConfig of guard ``mode`` with a spec's dotted ``guard_config`` overrides."""
    from ttir.core.config import TTIRConfig

    cfg = TTIRConfig.with_mode(mode)  # type: ignore[arg-type]
    return cfg.override(overrides) if overrides else cfg
