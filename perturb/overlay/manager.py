"""OverlayManager: the interface PerturbedDevice uses (composite / route / tick / clear).

This minimal version shows nothing; the overlay engine fills it in behind the
same four methods."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ttir.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext


class OverlayManager:
    def __init__(self) -> None:
        self.active: list[Any] = []

    def composite(self, obs: Observation, ctx: "PerturbationContext") -> Observation:
        """Draw active overlays into the screenshot and insert their nodes into the dump."""
        return obs

    def route(self, action: Action, ctx: "PerturbationContext") -> bool:
        """True when an overlay consumed the action (the device never sees it)."""
        return False

    def tick(self, ctx: "PerturbationContext") -> None:
        """Advance per-step timers (auto-dismiss, loading durations)."""

    def clear(self) -> None:
        self.active = []
