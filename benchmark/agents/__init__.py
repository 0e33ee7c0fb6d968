"""Reference agents that need no model (and the OpenAI-compatible VLM agent)."""

from benchmark.agents.oracle import OracleAgent
from benchmark.agents.planner import PlannerAgent, PlannerParams
from benchmark.agents.reference import ReferenceAgent
from benchmark.agents.replay import ReplayAgent

__all__ = ["OracleAgent", "PlannerAgent", "PlannerParams", "ReferenceAgent", "ReplayAgent"]
