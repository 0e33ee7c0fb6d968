"""Text from pixels, for screens without a usable accessibility tree (WebViews, Flutter,
games, a ``uiautomator dump`` that fails with "could not get idle state").

The OCR engine is the optional extra ``ttir[ocr]``: RapidOCR on ONNX Runtime (CPU),
whose detection and recognition models ship inside its wheel — nothing is downloaded,
ever (:func:`model_files` lists them). Without the extra this module still imports;
reading text raises :class:`OCRUnavailable`, which names the extra.

Reading is cached by screen content (the guard and the agent often look at the same
screen): the same image object is a dictionary look-up, an identical new capture
costs one CRC of its pixels.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import unicodedata
import weakref
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from loguru import logger

from ttir.core.errors import TTIRError

from ttir.core.types import Observation, UIElement

ENGINE_PACKAGE = "rapidocr_onnxruntime"
INSTALL_HINT = "pip install 'ttir[ocr]'  (RapidOCR on ONNX Runtime; its models ship in the wheel)"
"""How to install the OCR extra (named in every error about it)."""
MAX_SIDE = 1280  # the screen is read at this longer side: 1080x2400 -> 576x1280 (text recall as at full size, 2x faster)
DETECTION_MIN_SIDE = 480  # RapidOCR upscales a shorter side below this before detecting: keep ours as it is
MIN_SCORE = 0.5  # recognition confidence below which a line is dropped
MAX_LINES = 400  # a screen of text is a few dozen lines; bound what one hostile image can produce
MAX_TEXT = 200  # characters kept per line
CACHE_SIZE = 64
THREADS_ENV = "TTIR_OCR_THREADS"  # ONNX Runtime threads per engine (default: as many as it likes)


class OCRUnavailable(TTIRError, RuntimeError):
    """The OCR extra is not installed."""


def available() -> bool:
    """Whether the OCR extra is installed (checked without importing it)."""
    return importlib.util.find_spec(ENGINE_PACKAGE) is not None


def require() -> None:
    """Raise unless the OCR extra is installed.

    Raises:
        OCRUnavailable: the extra is missing (the message says how to install it).
    """
    if not available():
        raise OCRUnavailable(f"reading text from a screenshot needs the OCR extra: {INSTALL_HINT}")


def model_files() -> dict[str, Path]:
    """The ONNX models the engine loads (detection, angle classifier, recognition): files
    inside the installed package, read from its own config. Raises OCRUnavailable."""
    require()
    spec = importlib.util.find_spec(ENGINE_PACKAGE)
    root = Path(spec.origin).parent  # type: ignore[union-attr,arg-type]
    import yaml

    config = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8"))
    return {part.lower(): root / config[part]["model_path"] for part in ("Det", "Cls", "Rec")}


@dataclass(frozen=True)
class TextLine:
    """One line of text read from a screenshot: its text, its box in pixels and the recogniser's confidence."""

    text: str
    bounds: tuple[int, int, int, int]
    score: float


# -- the engine ------------------------------------------------------------------------

_engine: Any = None
_engine_lock = threading.Lock()


def _threads() -> Optional[int]:
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{THREADS_ENV}={raw!r} must be a whole number of threads (1 or more)") from None
    if n < 1:
        raise ValueError(f"{THREADS_ENV}={n} must be 1 or more")
    return n


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        require()
        from rapidocr_onnxruntime import RapidOCR  # the optional extra: imported only here

        kwargs: dict[str, Any] = {"use_cls": False,  # screens are upright: the angle classifier only costs time
                                  "max_side_len": MAX_SIDE, "det_limit_side_len": DETECTION_MIN_SIDE,
                                  "text_score": MIN_SCORE}
        threads = _threads()
        if threads is not None:
            kwargs["intra_op_num_threads"] = threads
        _engine = RapidOCR(**kwargs)
        logger.debug("OCR engine ready (RapidOCR, models {})", {k: str(v) for k, v in model_files().items()})
    return _engine


def _clean(text: Any) -> str:
    out = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in str(text))
    return " ".join(out.split())[:MAX_TEXT]


def _is_glyph(text: str) -> bool:
    """A single symbol that is neither a letter nor a digit: an icon read as a character
    (a star as "*", a plus as "+"); one-character labels are letters or digits."""
    return len(text) == 1 and not text.isalnum()


def recognise(image: Any) -> list[TextLine]:
    """Every line of text the engine reads in ``image`` (a PIL image), top to bottom:
    text, bounds in the image's pixels, confidence. Not cached (see :func:`read_lines`)."""
    import numpy as np

    rgb = image.convert("RGB") if image.mode != "RGB" else image
    w, h = rgb.size
    with _engine_lock:  # one engine per process; its sessions are not for concurrent calls
        result, _ = _get_engine()(np.asarray(rgb))
    lines: list[TextLine] = []
    for box, text, score in (result or [])[:MAX_LINES]:
        t = _clean(text)
        if not t or _is_glyph(t) or float(score) < MIN_SCORE:
            continue
        xs = [float(p[0]) for p in box]
        ys = [float(p[1]) for p in box]
        x1, y1 = max(0, int(min(xs))), max(0, int(min(ys)))
        x2, y2 = min(w, int(round(max(xs)))), min(h, int(round(max(ys))))
        if x2 > x1 and y2 > y1:
            lines.append(TextLine(t, (x1, y1, x2, y2), round(float(score), 3)))
    lines.sort(key=lambda ln: (ln.bounds[1], ln.bounds[0]))
    return lines


# -- the cache ---------------------------------------------------------------------------


KEY_REDUCE = 4  # the key reads 4x4 block averages: copying a 1080x2400 frame's 7.8 MB costs 12-15 ms, this ~1.5 ms


def screen_hash(image: Any) -> str:
    """The content key of a screenshot: size, mode and a CRC of its pixels in 4x4 block averages
    (any change a person could read moves many pixels by much more than the rounding)."""
    w, h = image.size
    pixels = image.reduce(KEY_REDUCE) if min(w, h) >= 2 * KEY_REDUCE else image
    return f"{w}x{h}:{image.mode}:{zlib.crc32(pixels.tobytes()):08x}"


class ScreenTextCache:
    """Lines read per screen: by image object first (weakly held), then by content."""

    def __init__(self, size: int = CACHE_SIZE):
        self.size = size
        self._by_content: "OrderedDict[str, tuple[TextLine, ...]]" = OrderedDict()
        # id(image) -> (weak reference, content key): PIL images compare by content and
        # cannot be dictionary keys themselves; the weak reference tells a recycled id
        self._by_object: "OrderedDict[int, tuple[weakref.ref, str]]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def lookup(self, image: Any) -> tuple[Optional[str], Optional[tuple[TextLine, ...]]]:
        """The lines cached for ``image``: by the image object first, else by its content hash.

        Args:
            image: a PIL image.

        Returns:
            ``(key, lines)``: the content key (to :meth:`store` under on a miss) and the lines, or None on a miss.
        """
        with self._lock:
            entry = self._by_object.get(id(image))
            key = entry[1] if entry is not None and entry[0]() is image else None
            if key is not None and key in self._by_content:
                self._by_content.move_to_end(key)
                self.hits += 1
                return key, self._by_content[key]
        key = screen_hash(image)
        with self._lock:
            lines = self._by_content.get(key)
            if lines is not None:
                self._by_content.move_to_end(key)
                self._remember(image, key)
                self.hits += 1
            return key, lines

    def store(self, image: Any, key: str, lines: tuple[TextLine, ...]) -> None:
        """Keep ``lines`` for ``image`` under its content ``key`` (the oldest entry goes when full).

        Args:
            image: the image read (remembered weakly, by object).
            key: its content key from :meth:`lookup`.
            lines: what was read.
        """
        with self._lock:
            self.misses += 1
            self._by_content[key] = lines
            self._by_content.move_to_end(key)
            while len(self._by_content) > self.size:
                self._by_content.popitem(last=False)
            self._remember(image, key)

    def _remember(self, image: Any, key: str) -> None:
        try:
            self._by_object[id(image)] = (weakref.ref(image), key)
        except TypeError:  # not weak-referenceable: content look-ups only
            return
        self._by_object.move_to_end(id(image))
        while len(self._by_object) > 4 * self.size:
            self._by_object.popitem(last=False)

    def clear(self) -> None:
        """Forget every screen and reset the hit / miss counts."""
        with self._lock:
            self._by_content.clear()
            self._by_object.clear()
            self.hits = self.misses = 0


CACHE = ScreenTextCache()
"""The process-wide cache of lines read per screen (the guard and the agent reading one screen pay once)."""


def read_lines(image: Any) -> tuple[TextLine, ...]:
    """The lines of text in ``image``, cached by screen content. Raises OCRUnavailable."""
    require()
    key, lines = CACHE.lookup(image)
    if lines is None:
        lines = tuple(recognise(image))
        CACHE.store(image, key or screen_hash(image), lines)
    return lines


def read_elements(image: Any) -> list[UIElement]:
    """One element per line of text in ``image`` (``source="ocr"``): a fresh list each
    call, so no two observations share element objects."""
    return [UIElement.unchecked(text=ln.text, bounds=ln.bounds, source="ocr") for ln in read_lines(image)]


_warned_missing = False


def screenshot_observation(image: Any, foreground: Optional[str] = None, *, step: int = 0, time: float = 0.0,
                           tree_error: Optional[str] = None, ocr: bool = True) -> Observation:
    """What a device observes when it has no usable tree: the screenshot's text (OCR) when
    ``ocr`` and the extra is installed, else the screenshot alone (``source="pixels"``; a
    missing extra is logged once)."""
    global _warned_missing
    if ocr and available():
        return Observation.from_screenshot(image, foreground, step=step, time=time, tree_error=tree_error)
    if ocr and not _warned_missing:
        _warned_missing = True
        logger.warning(f"no UI tree ({tree_error or 'none'}) and no OCR: the screenshot alone is observed. To read "
                       f"its text: {INSTALL_HINT}")
    w, h = image.size
    return Observation.model_construct(screenshot=image, elements=[], xml=None, foreground=foreground,
                                       screen_size=(int(w), int(h)), orientation="landscape" if w > h else "portrait",
                                       step=step, time=time, source="pixels", tree_error=tree_error)


__all__ = [
    "CACHE",
    "INSTALL_HINT",
    "OCRUnavailable",
    "ScreenTextCache",
    "TextLine",
    "available",
    "model_files",
    "read_elements",
    "read_lines",
    "recognise",
    "require",
    "screen_hash",
    "screenshot_observation",
]
