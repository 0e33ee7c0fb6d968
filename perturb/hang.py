"""``app_hang_restart_required`` (action): at APP_HANG_TRIGGER_STEPS (2) the
foreground app stops responding and the framework's "<App> isn't responding"
dialog appears. "Wait" keeps it hung (the dialog returns); only closing the app
(force stop) and opening it again recovers."""

from __future__ import annotations

import random
from typing import Any, Literal, Optional

from pydantic import Field

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from perturb.overlay.content import apply_overrides, choose_variant, load_pool, resolve
from perturb.overlay.dialog import DialogOverlay
from perturb.overlay.geometry import app_label, is_app
from perturb.overlay.hang import HangLayer
from perturb.overlay.spec import VariantSpec

POOL = "app_hang_restart_required"
RecoveryOption = Literal["close_app", "wait", "settings"]


class HangMagnitude(Magnitude):
    title: Optional[str] = Field(None, description="Dialog text (default: drawn from the content pool).")
    recovery_options: Optional[list[RecoveryOption]] = Field(
        None, description="Which of the dialog's options to offer (by action; default: the variant's).")
    reshow_after_steps: int = Field(2, ge=1, description="Steps after 'Wait' before the dialog returns.")
    profile_pool: Optional[list[str]] = Field(None, description="Dialog variant ids to draw from (default: all).")


class AppHangRestartRequired(Perturbation):
    component = "action"
    magnitude_model = HangMagnitude

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.pool = load_pool(POOL)
        self.variant: Optional[VariantSpec] = None
        if self.magnitude.profile_pool is not None:
            choose_variant(self.pool, random.Random(0), self.magnitude.profile_pool, POOL)

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        self.variant = choose_variant(self.pool, rng, self.magnitude.profile_pool, POOL)

    def after_execute(self, ctx: PerturbationContext) -> None:
        if ctx.step < 1 or ctx.overlays.of(self.name):
            return
        raw = ctx.observe_raw()
        package = raw.package
        if not is_app(package) or not self.should_fire(ctx, raw):
            return
        assert package is not None
        ctx.overlays.show(HangLayer(self.name, package=package, make_dialog=lambda: self._dialog(ctx, package),
                                    reshow_after_steps=self.magnitude.reshow_after_steps,
                                    settle_time_s=self.persistence.settle_time_s), ctx)

    def _dialog(self, ctx: PerturbationContext, package: str) -> DialogOverlay:
        if self.variant is None:
            self.variant = choose_variant(self.pool, self.rng, self.magnitude.profile_pool, POOL)
        variant, _ = resolve(self.pool, self.variant, {"app": app_label(ctx.device, package), "app_package": package})
        pages = apply_overrides(variant.pages, title=self.magnitude.title)
        options = self.magnitude.recovery_options
        if options is not None:
            for p in pages:
                p.buttons = [b for b in p.buttons if b.action in options]
        return DialogOverlay(self.name, kind=POOL, variant_id=variant.id, pages=pages, flows={}, style="anr",
                             package=self.pool.package, blocking=True, back=self.pool.back, owner=package)
