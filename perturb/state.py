"""State perturbations that go through the device's ``configure`` (so they work on a
real phone too): display density and size, font size, dark theme, orientation,
locale date/time format, and beyond the paper the UI language and the navigation
mode. They persist through the episode (AndroidReality App. B) and are restored on
close."""

from __future__ import annotations

import random
import time
from typing import Any, Literal, Optional

from pydantic import Field, StringConstraints
from typing_extensions import Annotated

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext

LOCALE_PATTERN = r"^[a-z]{2,3}(-[A-Z]{2})?$"


class SettingsMagnitude(Magnitude):
    font_scale: Optional[float] = Field(None, gt=0.3, le=3.0, description="Font scale (FONT_SIZE_*_SCALE).")
    density_scale: Optional[float] = Field(None, gt=0.3, le=3.0, description="Density multiplier (DISPLAY_*_DENSITY_SCALE).")
    size_scale: Optional[float] = Field(None, gt=0.3, le=1.5, description="Screen size multiplier (DISPLAY_*_SIZE_SCALE).")
    dark_theme: Optional[bool] = Field(None, description="Theme mode: dark when true.")
    orientation_sequence: Optional[list[Literal["portrait", "landscape"]]] = Field(
        None, description="ORIENTATION_PROFILE_SEQUENCE: orientations applied in turn (every duration_steps).")
    time_format: Optional[Literal[12, 24]] = Field(None, description="12 or 24 hour clock.")
    date_format: Optional[Literal["US", "EU"]] = Field(None, description="US or EU date format.")
    locale_choices: Optional[list[Annotated[str, StringConstraints(pattern=LOCALE_PATTERN)]]] = Field(
        None, min_length=1, description="UI_LANGUAGE_LOCALES: the system languages (BCP 47) one is drawn from per "
        "episode (seeded); the goal stays in English.")
    navigation_mode: Optional[Literal["three_button", "gesture"]] = Field(
        None, description="NAVIGATION_MODE: three-button navigation, or gestures (the pill; Back is an edge swipe).")

    def settings(self, rng: Optional[random.Random] = None) -> dict[str, Any]:
        skip = ("orientation_sequence", "locale_choices")
        out = {k: v for k, v in self.model_dump().items() if v is not None and k not in skip}
        if self.orientation_sequence:
            out["orientation"] = self.orientation_sequence[0]
        if self.locale_choices:
            out["locale"] = (rng or random.Random(0)).choice(self.locale_choices)
        return out


class DeviceSettingPerturbation(Perturbation):
    """Applies its magnitude's settings at the trigger step (default: before the first
    observation); with an orientation sequence, rotates every ``duration_steps``."""

    component = "state"
    magnitude_model = SettingsMagnitude

    def _apply(self, device: Any, ctx: PerturbationContext, settings: dict[str, Any]) -> None:
        before = device.settings
        device.configure(**settings)
        if self.persistence.settle_time_s and not hasattr(device, "clock"):
            time.sleep(self.persistence.settle_time_s)  # real devices need time to re-layout
        ctx.emit(self.name, "applied", settings=settings, previous={k: getattr(before, k) for k in settings})
        ctx.state[f"{self.name}:applied_at"] = ctx.step

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        if (self.timing.trigger_step or 0) == 0 and self.timing.probability is None and not self.timing.keywords:
            self.fired += 1
            self._apply(device, ctx, self.magnitude.settings(rng))

    def after_execute(self, ctx: PerturbationContext) -> None:
        if self.fired == 0 and self.timing.is_triggered and self.should_fire(ctx, ctx.observe_raw()):
            self._apply(ctx.device, ctx, self.magnitude.settings(self.rng))
            return
        seq = self.magnitude.orientation_sequence or []
        dur = self.persistence.duration_steps
        start = ctx.state.get(f"{self.name}:applied_at")
        if len(seq) > 1 and dur and start is not None and ctx.step > start and (ctx.step - start) % dur == 0:
            k = ((ctx.step - start) // dur) % len(seq)
            ctx.device.configure(orientation=seq[k])
            ctx.emit(self.name, "applied", settings={"orientation": seq[k]})
