"""State-layer traps (S): the world as captured is wrong for a step.

- ``trap_external_interruption`` — an unexpected pop-up, banner or full-screen ad:
  one of the transition perturbations (chosen by the trap's seeded stream) shown at
  the trap step; the trap delegates every hook to it from then on.
- ``trap_visual_obscuration`` — a rendering error: a Gaussian blur (r = 15) or a
  solid patch over a random clickable/editable element, any element, or a random
  rectangle covering 10–30 % of the screen; pixel-level on a copy of the
  screenshot, the UI dump is left as it is.
"""

from __future__ import annotations

import random
from typing import Any, Literal, Optional

from pydantic import Field, field_validator

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from perturb.traps import pixels
from perturb.traps.base import Trap, describe_element, on_home_screen
from ttir.core.types import Action, Observation, UIElement

# AnTrap's four pop-up kinds: runtime permission, modal centre dialog, top banner,
# full-screen advertisement — as the transition perturbations that draw them.
INTERRUPTIONS = (
    "popup_permission",
    "popup_security", "rate_dialog", "update_system",
    "notification_message", "notification_delivery",
    "interstitial_ad", "ad_trial_offer",
)


class InterruptionMagnitude(Magnitude):
    interruptions: list[str] = Field(default_factory=lambda: list(INTERRUPTIONS), min_length=1,
                                     description="Transition perturbations to choose the pop-up from (seeded, uniform).")

    @field_validator("interruptions")
    @classmethod
    def _registered(cls, v: list[str]) -> list[str]:
        from perturb.registry import REGISTRY  # late: the registry imports this module

        known = [n for n, p in REGISTRY.items() if p.component == "transition" and p.layer is None]
        unknown = [n for n in v if n not in known]
        if unknown:
            raise ValueError(f"{unknown} are not transition perturbations; expected names from: {', '.join(known)}")
        return v


class ExternalInterruption(Trap):
    """S: an unexpected window at the trap step, drawn by a transition perturbation."""

    layer = "S"
    component = "transition"
    magnitude_model = InterruptionMagnitude

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.inner: Optional[Perturbation] = None
        self.interruption: Optional[str] = None

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        self.inner = None
        self.interruption = None

    def _build(self, ctx: PerturbationContext) -> Perturbation:
        from perturb.registry import REGISTRY, make  # late: the registry imports this module

        choice = self.rng.choice(self.magnitude.interruptions)
        # fire exactly now: the trap's own timing already decided the step
        overrides: dict[str, Any] = {"timing.trigger_step": ctx.step, "timing.probability": None, "timing.keywords": [],
                                     "timing.window": None, "timing.window_fraction": None, "timing.max_triggers": 1}
        if "magnitude.on_app_launch" in REGISTRY[choice].param_names():
            overrides["magnitude.on_app_launch"] = False  # not "when the app comes to the front": now
        inner = make(choice, **overrides)
        inner.rng = random.Random(f"{self.name}:{choice}:{self.rng.getrandbits(64)}")
        inner.fired = 0
        self.interruption = choice
        self.emit_fired(ctx, interruption=choice)
        # its events are the trap's events (the interruption is named in trap_fired)
        inner.name = self.name
        return inner

    def after_execute(self, ctx: PerturbationContext) -> None:
        if self.inner is None:
            # an app on screen: some pop-ups only exist inside an app, and AnTrap interrupts a task
            if not self.try_fire(ctx, eligible=lambda: not on_home_screen(ctx.observe_raw())):
                return
            self.inner = self._build(ctx)
            self.inner.on_reset(ctx.device, self.inner.rng, ctx)
        self.inner.after_execute(ctx)

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        return self.inner.before_execute(action, ctx) if self.inner is not None else action

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        return self.inner.transform(obs, ctx) if self.inner is not None else obs

    def on_close(self, device: Any, ctx: PerturbationContext) -> None:
        if self.inner is not None:
            self.inner.on_close(device, ctx)
        self.inner = None


Region = Literal["random", "clickable", "element", "rectangle"]
REGIONS: tuple[str, ...] = ("clickable", "element", "rectangle")


class ObscurationMagnitude(Magnitude):
    region: Region = Field("random", description="clickable: a random clickable/editable element; element: any element; "
                                                 "rectangle: a random rectangle; random: one of the three (seeded).")
    radius: float = Field(15.0, gt=0.0, le=200.0, description="Gaussian blur kernel radius in pixels.")
    color: Optional[tuple[int, int, int]] = Field(None, description="Solid patch colour (RGB); blur when unset.")
    area_fraction: tuple[float, float] = Field((0.10, 0.30), description="Rectangle area as a share of the screen (min, max).")
    max_element_fraction: float = Field(0.30, gt=0.0, le=1.0,
                                        description="Largest element (share of the screen) that may be chosen; "
                                                    "window-sized containers are not 'an element'.")

    @field_validator("color")
    @classmethod
    def _rgb(cls, v: Optional[tuple[int, int, int]]) -> Optional[tuple[int, int, int]]:
        if v is not None and not all(0 <= c <= 255 for c in v):
            raise ValueError(f"color={v} must be three channel values in 0..255")
        return v

    @field_validator("area_fraction")
    @classmethod
    def _range(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not (0.0 < v[0] <= v[1] <= 1.0):
            raise ValueError(f"area_fraction={v} must be (min, max) with 0 < min <= max <= 1")
        return v


class VisualObscuration(Trap):
    """S: part of the captured frame is blurred or patched over (the dump is intact)."""

    layer = "S"
    component = "state"
    magnitude_model = ObscurationMagnitude

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        active: Optional[dict[str, Any]] = ctx.state.get(self.key("active"))
        if active is None:
            if obs.screenshot is None or not self.try_fire(ctx, obs):
                return obs
            active = self._choose(obs)
            active["from_step"] = ctx.step
            ctx.state[self.key("active")] = active
            self.emit_fired(ctx, region=active["region"], mode=active["mode"], fill=active["fill"],
                            duration_steps=self.persistence.duration_steps)
        duration = self.persistence.duration_steps
        if ctx.step < active["from_step"] or (duration is not None and ctx.step >= active["from_step"] + duration):
            return obs
        if obs.screenshot is None:
            return obs
        box = pixels.clip(tuple(active["region"]), obs.screenshot.size)  # type: ignore[arg-type]
        if box is None:
            return obs
        img = obs.screenshot.copy()
        if self.magnitude.color is not None:
            pixels.fill_region(img, box, self.magnitude.color)
        else:
            pixels.blur_region(img, box, self.magnitude.radius)
        changed = pixels.changed_box(obs.screenshot, img)
        self.emit_once(ctx, "obscured", region=list(box), mode=active["mode"], fill=active["fill"],
                       element=active.get("element"), changed_region=list(changed) if changed else None)
        return obs.replace(screenshot=img)

    def _choose(self, obs: Observation) -> dict[str, Any]:
        m = self.magnitude
        W, H = obs.screenshot.size
        mode = m.region if m.region != "random" else self.rng.choice(REGIONS)
        fill: dict[str, Any] = {"kind": "solid", "color": list(m.color)} if m.color is not None else {"kind": "blur", "radius": m.radius}
        if mode in ("clickable", "element"):
            pool = self._elements(obs, W, H, clickable=(mode == "clickable"))
            if pool:
                e = self.rng.choice(pool)
                box = pixels.clip(e.bounds, (W, H))
                assert box is not None
                return {"mode": mode, "region": list(box), "fill": fill, "element": describe_element(e)}
            mode = "rectangle"  # nothing suitable on this screen
        share = self.rng.uniform(*m.area_fraction)
        wf = self.rng.uniform(share, 1.0)  # width share; the height share follows (both within [share, 1])
        w, h = max(1, round(W * wf)), max(1, round(H * share / wf))
        x, y = self.rng.randint(0, W - w), self.rng.randint(0, H - h)
        return {"mode": "rectangle", "region": [x, y, x + w, y + h], "fill": fill, "element": None,
                "area_fraction": round(w * h / (W * H), 4)}

    def _elements(self, obs: Observation, W: int, H: int, *, clickable: bool) -> list[UIElement]:
        limit = self.magnitude.max_element_fraction * W * H
        pool = []
        for e in obs.elements:
            box = pixels.clip(e.bounds, (W, H))
            if box is None or (box[2] - box[0]) * (box[3] - box[1]) > limit:
                continue
            if clickable and not (e.clickable or e.long_clickable or e.editable):
                continue
            pool.append(e)
        # the app in front is the "critical interface"; system bars only when it has nothing
        front = [e for e in pool if obs.package and e.package == obs.package]
        return front or pool
