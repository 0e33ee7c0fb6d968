"""The base of everything the overlay manager stacks over the device's screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from PIL import Image

from perturb.overlay.geometry import Geometry
from ttir.core.types import TOUCH_TYPES, Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

TOUCH = TOUCH_TYPES


class Layer:
    """One interruption on screen.

    ``owner`` is the package it belongs to: an app-scoped layer is only drawn (and
    only takes input) while that package is in the foreground; ``None`` = always.
    """

    kind: str = "layer"
    blocking: bool = True

    def __init__(self, source: str, *, owner: Optional[str] = None):
        self.source = source  # the perturbation that put it there (for the event log only)
        self.owner = owner
        self.closed = False
        self.shown_at: Optional[int] = None

    # -- lifecycle --------------------------------------------------------------------
    def visible(self, foreground: Optional[str]) -> bool:
        return not self.closed and (self.owner is None or self.owner == foreground)

    def on_show(self, ctx: "PerturbationContext") -> None:
        self.shown_at = ctx.step

    def close(self) -> None:
        self.closed = True

    def emit(self, ctx: "PerturbationContext", event: str, **details: Any) -> None:
        ctx.emit(self.source, event, **details)

    # -- the three jobs -----------------------------------------------------------------
    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        """Draw into ``img`` (a copy the manager owns) and return the observation with
        this layer's nodes; the manager attaches ``img`` at the end."""
        return obs

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        """True when this layer consumed the action."""
        return False

    def tick(self, ctx: "PerturbationContext") -> None:
        """Once per step, after the perturbations' ``after_execute``."""

    def dialog_box(self) -> Optional[tuple[int, int, int, int]]:
        """Where the dialog window this layer last drew is, if it draws one (not a banner
        or a loading screen): a real phone gives a dialog a window of its own, which takes
        input focus (:mod:`perturb.dump_style`)."""
        return None

    # -- helpers --------------------------------------------------------------------------
    def blocked(self, action: Action, ctx: "PerturbationContext", **details: Any) -> bool:
        self.emit(ctx, "blocked_action", action=action.to_dict(), overlay=self.kind, **details)
        return True


def touch_point(action: Action) -> Optional[tuple[int, int]]:
    if action.x is not None and action.y is not None:
        return (action.x, action.y)
    return None


def inside(box: tuple[int, int, int, int], p: tuple[int, int]) -> bool:
    x1, y1, x2, y2 = box
    return x1 <= p[0] < x2 and y1 <= p[1] < y2
