"""Loading-type perturbations drawn by the overlay engine:

- ``execution_delay_loading`` (action): after an action, the app shows a loading
  screen for ``duration_steps`` steps (actions may be blocked meanwhile);
- ``execution_delay_frozen`` (action): after an action, the screen stops updating
  for ``duration_steps`` steps — the agent keeps seeing the frame it acted on;
- ``partial_loading_skeleton`` (state): the app's content is replaced by skeleton
  placeholders for ``duration_steps`` steps.

Texts come from the content pools (seeded choice) unless given."""

from __future__ import annotations

import random
from typing import Any, ClassVar, Literal, Optional

from pydantic import Field

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from perturb.overlay.content import choose_variant, fill, load_pool
from perturb.overlay.geometry import app_accent, app_label, is_app
from perturb.overlay.layer import Layer
from perturb.overlay.screens import FrozenLayer, LoadingLayer, SkeletonLayer

DEFAULT_DURATION = 2


class ScreenStateMagnitude(Magnitude):
    block_actions: bool = Field(True, description="Absorb the agent's input while it lasts.")
    text: Optional[str] = Field(None, description="The text shown (default: drawn from the content pool).")
    profile_pool: Optional[list[str]] = Field(None, description="Text variant ids to draw from (default: all).")


class LoadingMagnitude(ScreenStateMagnitude):
    surface: Literal["screen", "dialog"] = Field("screen", description="A loading screen or a progress dialog.")


class FrozenMagnitude(ScreenStateMagnitude):
    show_text: bool = Field(False, description="Also show the frozen-screen text as a toast.")


class SkeletonMagnitude(ScreenStateMagnitude):
    coverage: float = Field(1.0, gt=0.0, le=1.0, description="Share of the content rows still loading (from the bottom).")


class ScreenStatePerturbation(Perturbation):
    """Shared trigger logic: fires (per its timing) after an action, while an app is
    in the foreground; one layer at a time."""

    component = "action"
    magnitude_model: ClassVar[type[Magnitude]] = ScreenStateMagnitude
    min_step: ClassVar[int] = 1  # after an action, not before the first observation
    default_pool: ClassVar[str] = ""  # content pool of the texts

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pool = load_pool(self.default_pool)
        self.text = ""
        if self.magnitude.profile_pool is not None:
            choose_variant(self.pool, random.Random(0), self.magnitude.profile_pool, self.name)

    @property
    def duration(self) -> int:
        return self.persistence.duration_steps or DEFAULT_DURATION

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        variant = choose_variant(self.pool, rng, self.magnitude.profile_pool, self.name)
        self.text = self.magnitude.text if self.magnitude.text is not None else variant.pages[0].message

    def after_execute(self, ctx: PerturbationContext) -> None:
        if ctx.step < self.min_step or ctx.overlays.of(self.name):
            return
        raw = ctx.observe_raw()
        if not is_app(raw.package) or not self.should_fire(ctx, raw):
            return
        text = fill(self.text, {"app": app_label(ctx.device, raw.package), "app_package": raw.package or ""})
        ctx.overlays.show(self.make_layer(ctx, raw.package or "", text), ctx)

    def make_layer(self, ctx: PerturbationContext, package: str, text: str) -> Layer:
        raise NotImplementedError


class ExecutionDelayLoading(ScreenStatePerturbation):
    magnitude_model = LoadingMagnitude
    default_pool = "execution_delay_loading"

    def make_layer(self, ctx: PerturbationContext, package: str, text: str) -> Layer:
        return LoadingLayer(self.name, owner=package, duration=self.duration, block_actions=self.magnitude.block_actions,
                            message=text, surface=self.magnitude.surface, accent=app_accent(ctx.device, package))


class ExecutionDelayFrozen(ScreenStatePerturbation):
    magnitude_model = FrozenMagnitude
    default_pool = "execution_delay_frozen"

    def make_layer(self, ctx: PerturbationContext, package: str, text: str) -> Layer:
        frame = ctx.shown if ctx.shown is not None else (ctx.raw_history[-1] if ctx.raw_history else ctx.observe_raw())
        return FrozenLayer(self.name, frame=frame, duration=self.duration, block_actions=self.magnitude.block_actions,
                           message=text if self.magnitude.show_text else "")


class PartialLoadingSkeleton(ScreenStatePerturbation):
    component = "state"
    magnitude_model = SkeletonMagnitude
    default_pool = "partial_loading_skeleton"

    def make_layer(self, ctx: PerturbationContext, package: str, text: str) -> Layer:
        return SkeletonLayer(self.name, owner=package, duration=self.duration, block_actions=self.magnitude.block_actions,
                             message=text, coverage=self.magnitude.coverage)
