"""When a device cannot get a usable accessibility tree — ``uiautomator dump`` fails
("could not get idle state" on an animated screen), returns a bare window root
(WebViews, Flutter, games), or a dump that cannot be read — it retries once after a
short settle, then observes the screenshot alone: its text read by OCR when the
``ttir[ocr]`` extra is installed, else the pixels. The fallback is logged and marked
on the observation (``source``, ``tree_error``); it is never a blank screen.

:class:`benchmark.devices.AdbDevice` uses this for real dumps, the ``a11y_tree_empty``
perturbation for simulated ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from loguru import logger

from ttir.core.ocr import screenshot_observation
from ttir.core.types import Observation

SETTLE_SECONDS = 0.5  # before the one retry: long enough for an animation frame or a window transition


@dataclass(frozen=True)
class TreeProblem:
    """Why a dump gave no usable tree; ``retry`` is False when the device already retried."""

    reason: str
    retry: bool = True


def tree_problem(obs: Observation) -> Optional[str]:
    """Why a parsed dump is no usable tree (None when it is one): no node, or only nodes
    that carry no label and no control (a bare window root, empty containers over a
    canvas)."""
    if not obs.elements:
        return "the dump holds no node"
    if any(e.informative for e in obs.elements):
        return None
    n = len(obs.elements)
    if n == 1:
        return "the dump holds only its window root"
    return f"the dump holds {n} nodes and none has text, a description or a control"


TreeRead = Union[Observation, TreeProblem]


def observe_tree(read: Callable[[], TreeRead], settle: Callable[[], None], screenshot: Any,
                 foreground: Callable[[], Optional[str]], *, step: int, time: float, who: str,
                 ocr: bool = True) -> Observation:
    """``read()`` once, and once more after ``settle()`` when its tree is unusable; then
    the screenshot-only observation of the app ``foreground()`` names (OCR when ``ocr`` and the extra is installed). Without
    a screenshot, an unusable tree that was read is returned (marked with ``tree_error``);
    with neither, ``ValueError``."""
    raw = read()
    result = _checked(raw)
    if isinstance(result, Observation):
        return result
    first, unusable = result, raw if isinstance(raw, Observation) else None
    if result.retry:
        logger.debug(f"{who}: {result.reason}; retrying after a settle")
        settle()
        raw = read()
        result = _checked(raw)
        if isinstance(result, Observation):
            logger.info(f"{who}: the UI dump worked on the retry (the first attempt: {first.reason})")
            return result
        unusable = raw if isinstance(raw, Observation) else unusable
    reason = result.reason if result.reason == first.reason else f"{first.reason}; then {result.reason}"
    if screenshot is None:
        if unusable is None:
            raise ValueError(f"{who}: no usable UI tree ({reason}) and no screenshot")
        logger.warning(f"{who}: no usable UI tree ({reason}) and no screenshot to read instead")
        return unusable.replace(tree_error=reason)
    obs = screenshot_observation(screenshot, foreground(), step=step, time=time, tree_error=reason, ocr=ocr)
    logger.warning(f"{who}: no usable UI tree ({reason}); observing the screenshot alone "
                   f"({'OCR: ' + str(len(obs.elements)) + ' lines of text' if obs.source == 'ocr' else 'pixels only'})")
    return obs


def _checked(result: TreeRead) -> TreeRead:
    if isinstance(result, Observation):
        problem = tree_problem(result)
        if problem is not None:
            return TreeProblem(problem)
    return result


__all__ = ["SETTLE_SECONDS", "TreeProblem", "TreeRead", "observe_tree", "tree_problem"]
