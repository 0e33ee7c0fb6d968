"""Did the screen change between two steps? In order of preference: the harness's
per-step ground truth (``truth.screen_key``, a fingerprint of the raw UI tree and the
visible overlays, when the run recorded it); the stored screenshots (mean absolute
grey-level difference of 48-px-wide thumbnails, so JPEG noise and the status-bar clock
do not count); else the observation summaries (foreground, orientation, element count,
screen size)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from experiments.records import StepObservation, TrajectoryStep

SAME_SCREEN_MAX_DIFF = 2.0  # grey levels (0-255), mean over the thumbnail
THUMB_WIDTH = 48


@lru_cache(maxsize=1024)
def _thumb(path: str) -> Any:
    from PIL import Image

    try:
        with Image.open(path) as img:
            img.draft("L", (THUMB_WIDTH * 2, THUMB_WIDTH * 4))  # JPEG: decode at a reduced scale, fast
            g = img.convert("L")
            return g.resize((THUMB_WIDTH, max(1, round(g.height * THUMB_WIDTH / g.width))))
    except OSError:
        return None


def screenshot_difference(a: Path, b: Path) -> Optional[float]:
    """Mean absolute grey-level difference of the two screenshots' thumbnails (None if unreadable)."""
    from PIL import ImageChops, ImageStat

    ta, tb = _thumb(str(a)), _thumb(str(b))
    if ta is None or tb is None:
        return None
    if ta.size != tb.size:
        return 255.0
    return float(ImageStat.Stat(ImageChops.difference(ta, tb)).mean[0])


def same_screen(a: StepObservation, b: StepObservation, episode_dir: Optional[Path] = None) -> bool:
    """``a``/``b`` are trajectory step observations (with ``ref`` when a screenshot was kept)."""
    if episode_dir is not None and a.ref and b.ref:
        diff = screenshot_difference(episode_dir / a.ref, episode_dir / b.ref)
        if diff is not None:
            return diff <= SAME_SCREEN_MAX_DIFF
    return (a.foreground, a.orientation, a.n_elements, a.screen_size) == \
        (b.foreground, b.orientation, b.n_elements, b.screen_size)


def steps_same_screen(a: TrajectoryStep, b: TrajectoryStep, episode_dir: Optional[Path] = None) -> bool:
    """Same as ``same_screen`` for two trajectory steps, using their ground-truth screen keys when both have one."""
    ka = a.truth.screen_key if a.truth is not None else None
    kb = b.truth.screen_key if b.truth is not None else None
    if ka and kb:
        return ka == kb
    return same_screen(a.observation, b.observation, episode_dir)
