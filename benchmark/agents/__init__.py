"""Reference agents that need no model."""

from benchmark.agents.reference import ReferenceAgent

__all__ = ["ReferenceAgent"]
