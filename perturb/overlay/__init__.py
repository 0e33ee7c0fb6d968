"""The overlay engine: interruptions drawn over any device's screen (no APK)."""

from perturb.overlay.manager import OverlayManager

__all__ = ["OverlayManager"]
