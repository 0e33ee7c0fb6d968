"""The text of a screen without a usable UI tree, and what a rule could read of a screen.

A device that gets no tree (a failed ``uiautomator dump``, a bare window root) observes
the screenshot with its text read by OCR (``source="ocr"``, :mod:`ttir.core.ocr`); a bare
dump handed to the guard directly is read here, when the ``ttir[ocr]`` extra is
installed. Either way the lines are elements with text and bounds, and nothing else.
"""

from __future__ import annotations

from typing import Optional

from loguru import logger

from diagnosers.signals.cache import cached
from diagnosers.signals.text import normalize
from diagnosers.signals.tree import screen_tree
from ttir.core import ocr
from ttir.core.types import Observation, UIElement

STATUS_BAND = 0.045  # the top share of the screen the status bar takes (its clock is no text of the app)
NAV_BAND = 0.95  # lines starting below this share of the height are the navigation bar's (its glyphs)


@cached("screen_text")
def text_lines(obs: Observation) -> list[UIElement]:
    """The lines of text read from the screenshot of a screen without a usable tree
    (empty when it has one, or there is no screenshot, or no OCR)."""
    if obs.source == "ocr":
        return list(obs.elements)
    if screen_tree(obs).has_tree or obs.screenshot is None or not ocr.available():
        return []
    try:
        return ocr.read_elements(obs.screenshot)
    except Exception as exc:  # noqa: BLE001 - OCR is a best effort: the pixel rules still answer
        logger.warning("reading the screenshot's text failed: {}", exc)
        return []


def screen_source(obs: Observation) -> Optional[str]:
    """What the rules can read of ``obs``: ``tree``, ``ocr`` (text from the screenshot),
    ``pixels`` (the screenshot alone), or None (nothing)."""
    if screen_tree(obs).has_tree:
        return "tree"
    if obs.source == "ocr" or (obs.screenshot is not None and ocr.available()):
        return "ocr"
    return "pixels" if obs.screenshot is not None else None


def content_lines(obs: Observation) -> list[UIElement]:
    """The text lines between the status bar and the navigation bar."""
    h = obs.screen_size[1]
    return [e for e in text_lines(obs) if STATUS_BAND * h <= e.bounds[1] < NAV_BAND * h]


def line_texts(obs: Observation) -> set[str]:
    return {normalize(e.text) for e in content_lines(obs) if e.text}


def text_similarity(a: Observation, b: Observation) -> Optional[float]:
    """Jaccard similarity of two screens' lines of text (None when either has none)."""
    ta, tb = line_texts(a), line_texts(b)
    if not ta or not tb:
        return None
    return len(ta & tb) / len(ta | tb)


__all__ = ["NAV_BAND", "STATUS_BAND", "content_lines", "line_texts", "screen_source", "text_lines", "text_similarity"]
