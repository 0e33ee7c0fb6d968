"""Shared, deterministic signals of the rule-tier diagnosers: screen fingerprints
(perceptual hash on a thumbnail, UI-tree signature), screen changes, action
identity, overlay candidates, task context. Features are cached per observation
(:mod:`diagnosers.signals.cache`), so each new observation is analysed once."""

from diagnosers.signals.cache import CACHE, ObservationCache
from diagnosers.signals.change import ScreenChange, compare

__all__ = ["CACHE", "ObservationCache", "ScreenChange", "compare"]
