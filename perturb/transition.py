"""Transition perturbations (T̃): an unexpected intermediate state — a permission
dialog, a security prompt, a consent sheet, an ad, a rating prompt, a heads-up
notification, an update prompt — drawn by the overlay engine at a task-specific
runtime step or when the task's app comes to the foreground.

One class serves the ten AndroidReality transitions; each profile names its
content pool (``perturb/overlay/content/<name>.yaml``) and Table 3's parameters:
trigger step, surface style, blocking, auto-dismiss duration
(``persistence.duration_steps``), title / message / buttons, primary / secondary
actions, profile pool. ``single_button`` is D-GARA's single-button mode. ``language`` picks the
variants by language (English by default: the paper's content, the same draws as before
translated variants existed); the profiles beyond the paper (what's-new dialogs,
first-run gates) use the same class."""

from __future__ import annotations

import random
from typing import Any, Literal, Optional

from pydantic import Field, field_validator

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from perturb.overlay.content import Languages, apply_overrides, check_languages, choose_variant, fill, load_pool, resolve
from perturb.overlay.dialog import DialogOverlay
from perturb.overlay.geometry import app_accent, app_label, is_app
from perturb.overlay.spec import DEFAULT_LANGUAGE, ButtonSpec, PoolSpec, VariantSpec, check_action
from ttir.core.types import Observation

SurfaceStyle = Literal["dialog", "bottom_sheet", "fullscreen", "banner"]


class TransitionMagnitude(Magnitude):
    content: Optional[str] = Field(None, description="Content pool name (default: the perturbation's name).")
    language: Languages = Field(DEFAULT_LANGUAGE, description=(
        "Language of the content: a code (en, es, zh, de), a list of codes, or 'any'; variants are drawn from those "
        "in it (default: English only, the paper's content)."))
    profile_pool: Optional[list[str]] = Field(None, description="Variant ids to draw from (default: the whole pool).")
    surface_style: Optional[SurfaceStyle] = Field(None, description="Surface style (default: the variant's).")
    blocking: Optional[bool] = Field(None, description="Absorb touches outside the overlay (default: the pool's).")
    title: Optional[str] = Field(None, description="Content title (overrides the variant's first page).")
    message: Optional[str] = Field(None, description="Content message (overrides the variant's first page).")
    buttons: Optional[list[ButtonSpec]] = Field(None, description="Content buttons (override the first page's).")
    primary_action: Optional[str] = Field(None, description="Consequence of the engage button(s) on the first page.")
    secondary_action: Optional[str] = Field(None, description="Consequence of the dismiss button(s) on the first page.")
    single_button: bool = Field(False, description="D-GARA single-button mode: no dismiss control, back does nothing.")
    back_dismisses: Optional[bool] = Field(None, description="Whether back closes it (default: the pool's behaviour).")
    outside_dismisses: bool = Field(False, description="A tap outside a blocking overlay closes it.")
    on_app_launch: bool = Field(False, description="Fire when the task's app is in the foreground (at/after trigger_step).")
    fallback_step: Optional[int] = Field(None, ge=0, description="With on_app_launch: fire at this step at the latest.")

    @field_validator("primary_action", "secondary_action")
    @classmethod
    def _action(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else check_action(v)

    @field_validator("language")
    @classmethod
    def _language(cls, v: Languages) -> Languages:
        return check_languages(v)


class TransitionOverlay(Perturbation):
    component = "transition"
    magnitude_model = TransitionMagnitude

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pool_name = self.magnitude.content or self.name
        self.pool: PoolSpec = load_pool(self.pool_name)
        self.variant: Optional[VariantSpec] = None
        # fail at construction on a bad variant id or a language the pool does not have
        self._draw(random.Random(0))

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        # drawn up front so the content does not depend on when the trigger fires
        self.variant = self._draw(rng)

    def _draw(self, rng: random.Random) -> VariantSpec:
        m = self.magnitude
        return choose_variant(self.pool, rng, m.profile_pool, self.pool_name, m.language)

    # -- when ---------------------------------------------------------------------------
    def _task_app_in_front(self, ctx: PerturbationContext, fg: Optional[str]) -> bool:
        apps = tuple(getattr(ctx.task, "apps", ()) or ())
        return fg in apps if apps else is_app(fg)

    def _due(self, ctx: PerturbationContext, raw: Observation) -> bool:
        fg = raw.package
        if self.pool.requires_app and not is_app(fg):
            return False
        m = self.magnitude
        if m.on_app_launch:
            start = self.timing.trigger_step or 0
            fallback = None if m.fallback_step is None else max(m.fallback_step, start)
            deadline = self.deadline(ctx)
            if deadline is not None:
                fallback = deadline if fallback is None else min(fallback, deadline)
            if not self._task_app_in_front(ctx, fg) and (fallback is None or ctx.step < fallback):
                return False
            if not self.timing.is_triggered:
                if self.timing.max_triggers is not None and self.fired >= self.timing.max_triggers:
                    return False
                self.fired += 1
                return True
        return self.should_fire(ctx, raw)

    def after_execute(self, ctx: PerturbationContext) -> None:
        if ctx.overlays.of(self.name):
            return  # one at a time
        raw = ctx.observe_raw()
        if self._due(ctx, raw):
            ctx.overlays.show(self.build(ctx, raw), ctx)

    # -- what -----------------------------------------------------------------------------
    def placeholders(self, ctx: PerturbationContext, fg: Optional[str]) -> dict[str, str]:
        apps = tuple(getattr(ctx.task, "apps", ()) or ())
        pkg = fg if is_app(fg) else (apps[0] if apps else (fg or ""))
        label = app_label(ctx.device, pkg) if (is_app(fg) or apps) else "your phone"
        return {"app": label, "app_package": pkg or ""}

    def build(self, ctx: PerturbationContext, raw: Observation) -> DialogOverlay:
        if self.variant is None or self.fired > 1:  # a repeated interruption may say something else
            self.variant = self._draw(self.rng)
        m = self.magnitude
        pool = self.pool
        fg = raw.package
        values = self.placeholders(ctx, fg)
        variant, flows = resolve(pool, self.variant, values)
        pages = apply_overrides(variant.pages, title=m.title, message=m.message, buttons=m.buttons,
                                primary_action=m.primary_action, secondary_action=m.secondary_action,
                                single_button=m.single_button)
        if m.single_button:
            flows = {k: f.model_copy(update={"pages": apply_overrides(f.pages, single_button=True)})
                     for k, f in flows.items()}
        package = fill(variant.package or pool.package, values)
        activity = variant.activity if variant.activity is not None else pool.activity
        back = pool.back
        if m.back_dismisses is not None:
            back = "dismiss" if m.back_dismisses else "absorb"
        if m.single_button:
            back = "absorb"
        in_app = package == fg
        accent = variant.accent or (app_accent(ctx.device, fg) if in_app else None) or pool.accent
        return DialogOverlay(
            self.name,
            kind=self.pool_name,
            variant_id=variant.id,
            pages=pages,
            flows=flows,
            style=m.surface_style or variant.style or pool.style,  # type: ignore[arg-type]
            package=package,
            activity=activity or None,
            blocking=pool.blocking if m.blocking is None else m.blocking,
            back=back,  # type: ignore[arg-type]
            accent=accent,
            owner=None if pool.scope == "global" else fg,
            auto_dismiss_steps=self.persistence.duration_steps,
            outside_dismisses=m.outside_dismisses,
            in_app=in_app,
            ids=variant.ids if variant.ids is not None else pool.ids,
        )
