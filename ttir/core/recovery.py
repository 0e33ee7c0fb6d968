"""The recovery half of the check contract: what every recovery strategy shares (the
recoveries in ``recoveries/`` and a user's own; ``ttir.Recovery``, ``ttir.RecoveryContext``).

A recovery session is opened by the guard for one finding; each step the guard
asks the strategy for the next corrective action until the diagnoser says the
problem is gone, the strategy has nothing left to try (``None``), or the session
budget is spent. Strategies see only observations and history (honesty rule).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Optional, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ttir.core.diagnosis import Cost, Finding
from ttir.core.types import ENDING_TYPES, AgentStep, Observation, StepRecord


class RecoveryContext(BaseModel):
    """The inputs of one recovery step: the task, the screen, the history, the finding that
    opened the session and what the session has done so far."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    goal: str = Field(description="The task in natural language, as given to ``reset(goal)``.")
    observation: Observation = Field(description="The current screen.")
    history: list[StepRecord] = Field(default_factory=list, description="The past steps, oldest first (bounded).")
    finding: Finding = Field(description="The finding that opened the session (its ``details`` say what was located).")
    taken: list[AgentStep] = Field(default_factory=list, description="The steps this session already took, in order.")
    budget: int = Field(3, description="The most steps the session may take (``recovery.budget``).")
    cache: dict[str, Any] = Field(
        default_factory=dict, exclude=True,
        description="Scratch space for one step (a failed model call's error is noted under ``errors``). Not serialised.")

    @property
    def remaining(self) -> int:
        """Steps the session may still take (``budget`` minus those taken)."""
        return self.budget - len(self.taken)


class Recovery(ABC):
    """A recovery strategy. ``next_step`` returns the next corrective step, or None
    when it has nothing (left) to try. ``cost`` accumulates model usage.

    Subclasses set ``name`` (and ``handles``, the diagnosers it answers) and implement
    :meth:`rules`; a model tier comes with ``mode="vlm"`` and a client.

    Args:
        mode: ``rules`` or ``vlm`` (the recovery model proposes, the rules answer when it fails).
        client: the recovery model (:class:`diagnosers.vlm_judge.RecoveryModel`); None: rules.
        prompt: the recovery prompt's name in ``prompts/`` or a file path; None: the default.
        settings: the guard's :class:`~ttir.core.config.RecoveryConfig`; None: the defaults.
    """

    name: ClassVar[str] = ""
    handles: ClassVar[tuple[str, ...]] = ()  # diagnoser names this strategy answers

    def __init__(self, *, mode: str = "rules", client: Any = None, prompt: Optional[str] = None,
                 settings: Any = None):
        self.mode = mode
        self.client = client
        self.prompt = prompt
        self.settings = settings  # the guard's RecoveryConfig (None: the strategy's defaults)
        self.cost = Cost()

    def next_step(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The next corrective step, or None when there is nothing (left) to try.

        ``vlm`` mode asks the recovery model (prompt declares problem, target condition
        and constraints); if that fails the rule tier answers instead (fail open)."""
        if self.mode == "vlm" and self.client is not None:
            try:
                step, cost = self.client.propose(self.name, ctx, prompt=self.prompt)
                self.cost = self.cost + cost
                if step is not None and self.allowed(step, ctx):
                    return step
            except Exception as exc:  # noqa: BLE001 - a model failure must not stop the session
                self._failed(exc, ctx)
        return self.rules(ctx)

    async def anext_step(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """Async variant: the model call goes through the async client."""
        if self.mode == "vlm" and self.client is not None and hasattr(self.client, "apropose"):
            try:
                step, cost = await self.client.apropose(self.name, ctx, prompt=self.prompt)
                self.cost = self.cost + cost
                if step is not None and self.allowed(step, ctx):
                    return step
            except Exception as exc:  # noqa: BLE001
                self._failed(exc, ctx)
        return self.rules(ctx)

    def _failed(self, exc: BaseException, ctx: RecoveryContext) -> None:
        """A failed model call is recorded, and billed: what it cost is in ``exc.usage``."""
        usage = getattr(exc, "usage", None)
        if usage is not None:
            self.cost = self.cost + Cost(**usage.as_cost())
        ctx.cache.setdefault("errors", []).append(f"{self.name} model: {exc}")

    def allowed(self, step: AgentStep, ctx: RecoveryContext) -> bool:
        """Constraints a proposal must respect (overridden per strategy)."""
        return step.action.action_type not in ENDING_TYPES

    @abstractmethod
    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        """The deterministic tier."""


@runtime_checkable
class SupportsNextStep(Protocol):
    """What a check's recovery must offer at least: ``next_step(ctx)``, the next corrective step
    (an :class:`AgentStep`; the guard also takes an ``Action`` or an action dict, as from an agent)
    or None. A :class:`Recovery` offers it with tiers, a cost and a name."""

    def next_step(self, ctx: RecoveryContext) -> Optional[AgentStep]: ...


class PlainRecovery(Recovery):
    """A recovery given as any object with ``next_step(ctx)`` (not a :class:`Recovery`), as the
    guard sees it: named by its ``name`` or its class, billed by its ``cost`` when that is a
    :class:`~ttir.core.diagnosis.Cost` (nothing otherwise), its ``next_step`` asked in every tier
    (``anext_step`` in the async guard when it has one). Other attributes (``target_met`` …) are
    the object's own. Without it the guard met such an object's missing ``name`` on the first
    problem and failed open on every step, never opening a session.

    Args:
        inner: the object; its ``next_step(ctx)`` returns an ``AgentStep`` or None.
    """

    def __init__(self, inner: SupportsNextStep):
        self.inner = inner
        self.name = str(getattr(inner, "name", "") or type(inner).__name__)  # type: ignore[misc]
        self.mode = "rules"
        self.client = None
        self.prompt = None
        self.settings = None
        self._free = Cost()

    @property  # type: ignore[override]
    def cost(self) -> Cost:
        own = getattr(self.inner, "cost", None)
        return own if isinstance(own, Cost) else self._free

    def next_step(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        return self.inner.next_step(ctx)

    async def anext_step(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        own = getattr(self.inner, "anext_step", None)
        return await own(ctx) if callable(own) else self.inner.next_step(ctx)

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        return self.inner.next_step(ctx)

    def __getattr__(self, name: str) -> Any:  # only for what the wrapper does not define itself
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"PlainRecovery({self.inner!r})"


def as_recovery(obj: Any) -> Recovery:
    """``obj`` as a :class:`Recovery`: itself if it is one, else wrapped in :class:`PlainRecovery`.

    Args:
        obj: a Recovery, or any object with ``next_step(ctx)``.

    Returns:
        A Recovery the guard can ask in every tier.
    """
    return obj if isinstance(obj, Recovery) else PlainRecovery(obj)


def recovery_step(action: Any, thought: str, summary: str) -> AgentStep:
    return AgentStep(action=action, thought=thought, summary=summary, raw=None)
