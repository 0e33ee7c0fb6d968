"""What every recovery strategy shares.

A recovery session is opened by the guard for one finding; each step the guard
asks the strategy for the next corrective action until the diagnoser says the
problem is gone, the strategy has nothing left to try (``None``), or the session
budget is spent. Strategies see only observations and history (honesty rule).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Optional

from pydantic import BaseModel, ConfigDict, Field

from diagnosers.base import Cost, Finding
from ttir.types import AgentStep, Observation, StepRecord


class RecoveryContext(BaseModel):
    """Inputs of one recovery step."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    goal: str
    observation: Observation
    history: list[StepRecord] = Field(default_factory=list)
    finding: Finding
    taken: list[AgentStep] = Field(default_factory=list)  # steps this session already took
    budget: int = 3
    cache: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @property
    def remaining(self) -> int:
        return self.budget - len(self.taken)


class Recovery(ABC):
    """A recovery strategy. ``next_step`` returns the next corrective step, or None
    when it has nothing (left) to try. ``cost`` accumulates model usage."""

    name: ClassVar[str] = ""
    handles: ClassVar[tuple[str, ...]] = ()  # diagnoser names this strategy answers

    def __init__(self, *, mode: str = "rules", client: Any = None, prompt: Optional[str] = None):
        self.mode = mode
        self.client = client
        self.prompt = prompt
        self.cost = Cost()

    @abstractmethod
    def next_step(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The next corrective step (source: recovery) or None."""
