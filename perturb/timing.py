"""When a perturbation fires (timing) and how long it lasts (persistence).

Three trigger kinds, combinable:
- a fixed ``trigger_step`` (fires when that many actions have been executed);
- a per-step ``probability`` drawn from the perturbation's seeded stream;
- a D-GARA-style semantic trigger: ``keywords`` matched against the current UI's
  text / resource ids / content descriptions, firing when the share of matched
  keywords reaches ``match_threshold`` (3 of 4 → 0.75).

``before_reference_end`` makes a step or probability trigger fire by the task's last
reference step at the latest, so a task shorter than the trigger step is perturbed too.
"""

from __future__ import annotations

import random
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ttir.core.types import Observation


class Timing(BaseModel):
    """When a perturbation fires: a step, a per-step probability, a semantic trigger on the
    screen's words, or a combination (every given trigger must hold), within an optional window."""

    model_config = ConfigDict(extra="forbid")

    trigger_step: Optional[int] = Field(None, ge=0, description="Fire once this many actions have been executed (0 = before the first observation).")
    probability: Optional[float] = Field(None, ge=0.0, le=1.0, description="Per-step firing probability (seeded).")
    seed: Optional[int] = Field(None, description="Seed of the probability draws; default: derived from the episode seed.")
    keywords: list[str] = Field(default_factory=list, description="Semantic trigger: words to look for in the current UI.")
    match_threshold: float = Field(0.75, gt=0.0, le=1.0, description="Share of keywords that must match for the semantic trigger.")
    window: Optional[tuple[int, int]] = Field(None, description="Only fire at steps in [start, end); end may exceed the budget.")
    window_fraction: Optional[float] = Field(None, gt=0.0, le=1.0, description="Only fire within this leading share of the step budget (AnTrap: 0.8).")
    max_triggers: Optional[int] = Field(1, ge=1, description="Most firings per episode (None = unlimited).")
    before_reference_end: bool = Field(
        False, description="Fire by the task's last reference step at the latest (once reference length - 1 actions "
                           "have been executed, so the last reference action is taken under the perturbation): a "
                           "later trigger_step or fallback_step is brought forward, and a probability trigger that "
                           "has not fired by then fires there.")

    @model_validator(mode="after")
    def _window_ok(self) -> "Timing":
        if self.window is not None and self.window[1] <= self.window[0]:
            raise ValueError(f"timing.window={self.window} must be (start, end) with end > start")
        return self

    def deadline(self, reference_length: Optional[int]) -> Optional[int]:
        """The step by which ``before_reference_end`` asks the trigger to have fired (None: no deadline)."""
        if not self.before_reference_end or not reference_length:
            return None
        return max(0, reference_length - 1)

    @property
    def is_triggered(self) -> bool:
        """Whether any trigger is set (a step, a probability or keywords); without one the perturbation acts from the start."""
        return self.trigger_step is not None or self.probability is not None or bool(self.keywords)

    def keyword_score(self, obs: Optional[Observation]) -> float:
        """The share of ``keywords`` found in the screen's text, descriptions and ids (case-insensitive).

        Args:
            obs: the current screen; None gives 0.

        Returns:
            0.0 to 1.0 (0.0 without keywords).
        """
        if not self.keywords or obs is None:
            return 0.0
        haystack = " ".join(
            f"{e.text} {e.content_desc} {e.resource_id}" for e in obs.elements
        ).lower()
        hits = sum(1 for k in self.keywords if k.lower() in haystack)
        return hits / len(self.keywords)

    def fires(self, step: int, fired: int, rng: random.Random, obs: Optional[Observation] = None,
              budget: Optional[int] = None, deadline: Optional[int] = None) -> bool:
        """Whether the trigger fires at ``step``. Draws from ``rng`` only when the
        probability trigger is consulted, so schedules stay reproducible; ``deadline``
        (see :meth:`deadline`) brings a later trigger step forward and forces a first
        probability firing there."""
        if self.max_triggers is not None and fired >= self.max_triggers:
            return False
        if self.window is not None and not (self.window[0] <= step < self.window[1]):
            return False
        if self.window_fraction is not None and budget is not None and step >= int(budget * self.window_fraction):
            return False
        if self.trigger_step is not None and step < (self.trigger_step if deadline is None
                                                     else min(self.trigger_step, deadline)):
            return False
        if self.keywords and self.keyword_score(obs) < self.match_threshold:
            return False
        if self.probability is not None:
            drawn = rng.random() < self.probability
            return drawn or (deadline is not None and fired == 0 and step >= deadline)
        if self.trigger_step is not None:
            return True
        return bool(self.keywords)


class Persistence(BaseModel):
    """How long a perturbation's effect lasts and whether the settings it changed are restored."""

    model_config = ConfigDict(extra="forbid")

    duration_steps: Optional[int] = Field(None, ge=1, description="How many steps the effect lasts (None: the whole episode / until dismissed).")
    restore_on_close: bool = Field(True, description="Restore changed device settings when the episode ends.")
    settle_time_s: float = Field(0.0, ge=0.0, description="Seconds to wait after changing a setting on a real device.")
