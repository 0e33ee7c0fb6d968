"""The perturbation base class (Gymnasium-wrapper style: one class, a few hooks).

A perturbation has a ``name``, a ``component`` (state / transition / action; AnTrap
traps also carry their STAR ``layer``) and params organised along the paper's three
orthogonal axes: **magnitude**, **timing**, **persistence**. It may implement:

- ``on_reset(device, rng)`` / ``on_close(device)`` — apply and restore settings;
- ``before_execute(action, ctx) -> Action | None`` — φA (None = dropped);
- ``after_execute(ctx)`` — T̃: insert an intermediate state;
- ``transform(obs, ctx) -> Observation`` — φS at decision time.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from perturb.timing import Persistence, Timing
from ttir.core.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

Component = Literal["state", "action", "transition"]  # in the paper's order (the reports list them so)
COMPONENTS: tuple[Component, ...] = get_args(Component)
StarLayer = Literal["S", "T", "A", "R"]  # AnTrap STAR layers
STAR_LAYERS: tuple[StarLayer, ...] = get_args(StarLayer)


class Magnitude(BaseModel):
    """Strength knobs; each perturbation declares its own subclass."""

    model_config = ConfigDict(extra="forbid")


class Params(BaseModel):
    """A perturbation's parameters: magnitude / timing / persistence."""

    model_config = ConfigDict(extra="forbid")

    magnitude: SerializeAsAny[Magnitude] = Field(default_factory=Magnitude,
                                                 description="How strong it is (the perturbation's own knobs).")
    timing: Timing = Field(default_factory=Timing, description="When it fires.")
    persistence: Persistence = Field(default_factory=Persistence, description="How long it lasts.")


class Perturbation:
    """Base class. Subclasses set ``magnitude_model`` and override the hooks they need."""

    component: ClassVar[Component] = "state"
    layer: ClassVar[Optional[StarLayer]] = None
    magnitude_model: ClassVar[type[Magnitude]] = Magnitude

    def __init__(self, name: str, params: Params, *, description: str = "", component: Optional[Component] = None,
                 layer: Optional[StarLayer] = None):
        self.name = name
        self.params = params
        self.description = description
        if component is not None:
            self.component = component  # type: ignore[misc]
        if layer is not None:
            self.layer = layer  # type: ignore[misc]
        self.rng = random.Random(0)
        self.fired = 0  # how many times the timing trigger has fired this episode

    # -- shorthands --------------------------------------------------------------------
    @property
    def magnitude(self) -> Any:
        """The strength knobs (``params.magnitude``, the subclass's ``magnitude_model``)."""
        return self.params.magnitude

    @property
    def timing(self) -> Timing:
        """When it fires (``params.timing``)."""
        return self.params.timing

    @property
    def persistence(self) -> Persistence:
        """How long it lasts (``params.persistence``)."""
        return self.params.persistence

    def describe(self) -> dict[str, Any]:
        """The perturbation as a JSON-serialisable dict: name, component, layer, description, params."""
        return {
            "name": self.name,
            "component": self.component,
            "layer": self.layer,
            "description": self.description,
            "params": self.params.model_dump(mode="json"),
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- hooks (default: no effect) -------------------------------------------------------
    def on_reset(self, device: Any, rng: random.Random, ctx: "PerturbationContext") -> None:
        """Called once per episode after the task's setup; ``rng`` is this perturbation's seeded stream."""

    def on_close(self, device: Any, ctx: "PerturbationContext") -> None:
        """Undo whatever on_reset changed (settings are also restored by PerturbedDevice)."""

    def before_execute(self, action: Action, ctx: "PerturbationContext") -> Optional[Action]:
        """φA: the action as it reaches the device — the agent's, altered, or None (dropped).

        Args:
            action: the action so far (earlier perturbations may have altered it).
            ctx: the episode's perturbation context.

        Returns:
            The action to execute, or None to drop it (default: unchanged).
        """
        return action

    def after_execute(self, ctx: "PerturbationContext") -> None:
        """After the (possibly altered) action ran; may show an intermediate state."""

    def transform(self, obs: Observation, ctx: "PerturbationContext") -> Observation:
        """φS: the screen as the agent sees it at decision time.

        Args:
            obs: the screen so far (the device's, with overlays and earlier transforms).
            ctx: the episode's perturbation context.

        Returns:
            The observation to show (default: unchanged).
        """
        return obs

    def deadline(self, ctx: "PerturbationContext") -> Optional[int]:
        """The step by which this perturbation must have fired (``timing.before_reference_end``), else None."""
        return self.timing.deadline(ctx.reference_length)

    def overdue(self, ctx: "PerturbationContext") -> bool:
        """Not fired yet and its ``before_reference_end`` deadline has come: fire now."""
        d = self.deadline(ctx)
        return d is not None and self.fired == 0 and ctx.step >= d

    def should_fire(self, ctx: "PerturbationContext", obs: Optional[Observation] = None) -> bool:
        """Evaluate this perturbation's timing at ``ctx.step`` (and count the firing)."""
        if self.timing.fires(ctx.step, self.fired, self.rng, obs, ctx.budget, self.deadline(ctx)):
            self.fired += 1
            return True
        return False
