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


def same_screen(a: dict[str, Any], b: dict[str, Any], episode_dir: Optional[Path] = None) -> bool:
    """``a``/``b`` are trajectory ``observation`` dicts (with ``ref`` when a screenshot was kept)."""
    if episode_dir is not None and a.get("ref") and b.get("ref"):
        diff = screenshot_difference(episode_dir / a["ref"], episode_dir / b["ref"])
        if diff is not None:
            return diff <= SAME_SCREEN_MAX_DIFF
    keys = ("foreground", "orientation", "n_elements", "screen_size")
    return all(a.get(k) == b.get(k) for k in keys)


def steps_same_screen(a: dict[str, Any], b: dict[str, Any], episode_dir: Optional[Path] = None) -> bool:
    """Same as ``same_screen`` for two trajectory steps, using their ground-truth screen keys when both have one."""
    ka, kb = (a.get("truth") or {}).get("screen_key"), (b.get("truth") or {}).get("screen_key")
    if ka and kb:
        return ka == kb
    return same_screen(a.get("observation") or {}, b.get("observation") or {}, episode_dir)
