"""OverlayManager: the interface PerturbedDevice uses (composite / route / tick /
clear), plus ``show`` for perturbations.

Layers are stacked in the order they were shown (last = topmost). Only the
Device protocol is used — screenshots, UI dumps, observe/execute — so the same
overlays work on the simulator and on a real phone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PIL import Image

from perturb.overlay.geometry import geometry
from perturb.overlay.layer import Layer
from ttir.core.ocr import screenshot_observation
from ttir.core.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext



class OverlayManager:
    def __init__(self) -> None:
        self.active: list[Layer] = []
        self._drawn = False  # whether the last observation had overlays composited in

    # -- for perturbations ------------------------------------------------------------
    def show(self, layer: Layer, ctx: "PerturbationContext") -> Layer:
        self.active.append(layer)
        layer.on_show(ctx)
        return layer

    def of(self, source: str) -> list[Layer]:
        """The live layers a perturbation put up."""
        return [layer for layer in self.active if layer.source == source and not layer.closed]

    def visible(self, foreground: Optional[str]) -> list[Layer]:
        return [layer for layer in self.active if layer.visible(foreground)]

    # -- the PerturbedDevice interface ---------------------------------------------------
    def composite(self, obs: Observation, ctx: "PerturbationContext") -> Observation:
        """Draw the visible layers into a copy of the screenshot and insert their nodes."""
        layers = self.visible(obs.package)
        self._drawn = bool(layers)
        if not layers:
            return obs
        geom = geometry(obs, ctx.device)
        shot = obs.screenshot
        img = shot.convert("RGB").copy() if shot is not None else Image.new("RGB", obs.screen_size)
        out = obs
        for layer in layers:
            out = layer.composite(out, img, geom, ctx)
        if obs.source != "tree" and shot is not None:
            # no tree to add the overlay's nodes to (the dump failed): it shows in the pixels,
            # and the screen's text is read again from them
            return screenshot_observation(img, obs.foreground, step=obs.step, time=obs.time,
                                          tree_error=obs.tree_error, ocr=obs.source == "ocr")
        return out.replace(screenshot=img if shot is not None else None)

    def route(self, action: Action, ctx: "PerturbationContext") -> bool:
        """True when an overlay consumed the action (the device never sees it)."""
        if not self.active:
            return False
        raw = ctx.observe_raw()
        layers = list(reversed(self.visible(raw.package)))
        if not layers:
            return False
        geom = geometry(raw, ctx.device)
        resolved = self._resolve_index(action, ctx)
        try:
            for layer in layers:
                if layer.route(resolved, ctx, geom):
                    return True
        finally:
            self._prune()
        if resolved is not action:
            # the agent's index points into the composited screen, not the device's
            ctx.device.execute(resolved)
            return True
        return False

    def tick(self, ctx: "PerturbationContext") -> None:
        for layer in list(self.active):
            if not layer.closed:
                layer.tick(ctx)
        self._prune()

    def clear(self) -> None:
        self.active = []
        self._drawn = False

    # -- helpers ---------------------------------------------------------------------------
    def _prune(self) -> None:
        self.active = [layer for layer in self.active if not layer.closed]

    def _resolve_index(self, action: Action, ctx: "PerturbationContext") -> Action:
        """An ``index`` refers to the elements the agent was shown; turn it into a point."""
        shown = ctx.shown
        if not self._drawn or shown is None:
            return action
        return action.by_coordinates(shown.elements)
