"""The overlay engine: interruptions drawn over any device's screen (no APK).

An overlay is composited into a copy of the screenshot, its nodes join the UI
dump as a window of a realistic package (or of the app itself), and touches on
it go to its buttons instead of the device. Only the Device protocol is used, so
the same overlays work on the simulator and on a real phone.

- :class:`OverlayManager` — what :class:`~perturb.device.PerturbedDevice` calls
  (composite / route / tick / clear) and what perturbations ``show`` layers on;
- :class:`DialogOverlay` — content-driven interruptions (dialog, bottom sheet,
  full-screen page, heads-up banner, "isn't responding" dialog) with button
  roles and consequences and multi-page flows;
- :class:`LoadingLayer`, :class:`FrozenLayer`, :class:`SkeletonLayer`,
  :class:`HangLayer` — screen states;
- content pools: ``perturb/overlay/content/<type>.yaml`` (:func:`load_pool`).
"""

from perturb.overlay.content import choose_variant, load_pool, pool_names
from perturb.overlay.dialog import DialogOverlay
from perturb.overlay.hang import HangLayer
from perturb.overlay.layer import Layer
from perturb.overlay.manager import OverlayManager
from perturb.overlay.screens import FrozenLayer, LoadingLayer, SkeletonLayer
from perturb.overlay.spec import ButtonSpec, FlowSpec, PageSpec, PoolSpec, VariantSpec

__all__ = [
    "ButtonSpec",
    "DialogOverlay",
    "FlowSpec",
    "FrozenLayer",
    "HangLayer",
    "Layer",
    "LoadingLayer",
    "OverlayManager",
    "PageSpec",
    "PoolSpec",
    "SkeletonLayer",
    "VariantSpec",
    "choose_variant",
    "load_pool",
    "pool_names",
]
