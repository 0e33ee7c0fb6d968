"""Screenshot features on a downscaled grey thumbnail: a perceptual hash (dHash via
``imagehash``) and pixel differences over the whole screen or one region.

A 1080x2400 screenshot is sampled every 4th pixel and box-filtered
(``Image.reduce``) to about 200 px on its longer side, once per observation
(cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import imagehash
import numpy as np
from PIL import Image

from diagnosers.signals.cache import cached
from ttir.core.types import Bounds, Observation

THUMB_LONG_SIDE = 200
SAMPLE_STRIDE = 4
SAMPLE_MIN_SIDE = 800
PIXEL_DELTA = 24  # grey levels: a thumbnail pixel differs when it moves more than this
MIN_CHANGED_PIXELS = 4  # fewer changed thumbnail pixels than this is noise (a blinking cursor)


@dataclass
class Thumb:
    factor: int
    size: tuple[int, int]  # the original screenshot size
    pixels: np.ndarray  # int16 grey, shape (h, w)
    dhash: Any  # imagehash.ImageHash


def make_thumb(img: Any) -> Thumb:
    w, h = img.size
    # A box filter over the full 1080x2400 frame costs milliseconds; sampling every
    # SAMPLE_STRIDE-th pixel first (nearest) and box-filtering the sample costs a
    # tenth of that and still sees text strokes, icons and state changes.
    stride = SAMPLE_STRIDE if max(w, h) >= SAMPLE_MIN_SIDE else 1
    sample = img.resize((-(-w // stride), -(-h // stride)), Image.NEAREST) if stride > 1 else img
    grey = sample.convert("L")
    k = max(1, round(max(grey.size) / THUMB_LONG_SIDE))
    small = grey.reduce(k) if k > 1 else grey
    return Thumb(factor=stride * k, size=(w, h), pixels=np.asarray(small, dtype=np.int16),
                 dhash=imagehash.dhash(small))


def _thumb(obs: Observation) -> Optional[Thumb]:
    return make_thumb(obs.screenshot) if obs.screenshot is not None else None


thumb = cached("thumb")(_thumb)


def hash_distance(a: Observation, b: Observation) -> Optional[int]:
    """dHash Hamming distance between two screenshots (None without both)."""
    ta, tb = thumb(a), thumb(b)
    if ta is None or tb is None:
        return None
    if ta.size != tb.size:
        return 64
    return int(ta.dhash - tb.dhash)


def _slice(t: Thumb, box: Bounds, pad: int = 0) -> tuple[slice, slice]:
    x1, y1, x2, y2 = box
    h, w = t.pixels.shape
    f = t.factor
    xs = max(0, (x1 - pad) // f)
    ys = max(0, (y1 - pad) // f)
    xe = min(w, -(-(x2 + pad) // f))
    ye = min(h, -(-(y2 + pad) // f))
    return slice(ys, max(ys, ye)), slice(xs, max(xs, xe))


def changed_pixels(a: Observation, b: Observation, region: Optional[Bounds] = None, pad: int = 0,
                   ignore: tuple[Bounds, ...] = ()) -> Optional[int]:
    """How many thumbnail pixels differ between two screenshots, in ``region`` (padded)
    or on the whole screen, not counting the ``ignore`` boxes. None without both
    screenshots; a different size counts as everything changed."""
    ta, tb = thumb(a), thumb(b)
    if ta is None or tb is None:
        return None
    if ta.size != tb.size:
        return int(tb.pixels.size)
    diff = np.abs(ta.pixels - tb.pixels) > PIXEL_DELTA
    for box in ignore:
        ys, xs = _slice(ta, box)
        diff[ys, xs] = False
    if region is not None:
        ys, xs = _slice(ta, region, pad)
        diff = diff[ys, xs]
    return int(diff.sum())


def region_mean(obs: Observation, region: Bounds) -> Optional[float]:
    t = thumb(obs)
    if t is None:
        return None
    ys, xs = _slice(t, region)
    part = t.pixels[ys, xs]
    return float(part.mean()) if part.size else None

