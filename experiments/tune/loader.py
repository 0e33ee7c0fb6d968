"""Observations and diagnosis contexts from step rows.

Screenshots saved by the runner are downscaled (``screenshot_width``); the UI
dump's bounds are in screen pixels, so a screenshot is scaled back to the size
the dump describes before any diagnoser sees it (their pixel regions come from
the tree). Observations are cached by reference, so the rows of one episode
share the same objects — as the live guard's history does.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any, Optional

from PIL import Image

from ttir.core.diagnosis import DiagnosisContext
from experiments.tune.schema import HistoryEntry, ObservationRef, StepRow
from ttir.core.dump import MAX_CHARS as MAX_DUMP_CHARS
from ttir.core.types import Action, AgentStep, Observation, StepRecord
from ttir.core.validation import read_text_file

CACHE_SIZE = 80  # > the guard's 64-step history + 1; each screenshot is held at screen size (~8 MB)


class ObservationLoader:
    """``load(ref)`` -> Observation, paths relative to ``base``."""

    def __init__(self, base: Path | str, cache_size: int = CACHE_SIZE):
        self.base = Path(base)
        self.cache_size = cache_size
        self._cache: "OrderedDict[tuple[Any, ...], Observation]" = OrderedDict()

    def _path(self, rel: str, row_id: str, field: str) -> Path:
        p = Path(rel)
        p = p if p.is_absolute() else self.base / p
        if not p.exists():
            raise FileNotFoundError(f"row {row_id}: {field}={rel!r}: file {p} does not exist")
        return p

    def load(self, ref: ObservationRef, *, row_id: str = "?", field: str = "observation", step: int = 0) -> Observation:
        key = (ref.screenshot, ref.xml, ref.foreground, ref.screen_size)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        obs = self._build(ref, row_id, field, step)
        self._cache[key] = obs
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return obs

    def _build(self, ref: ObservationRef, row_id: str, field: str, step: int) -> Observation:
        xml: Optional[str] = None
        if ref.xml:
            if ref.xml.lstrip().startswith("<"):
                xml = ref.xml
            else:
                path = self._path(ref.xml, row_id, f"{field}.xml")
                try:  # bounded: a dataset is a user's file, and its paths may name anything (/dev/zero)
                    xml = read_text_file(path, "screen dump", max_bytes=MAX_DUMP_CHARS, typical="under 3 MB")
                except ValueError as exc:
                    raise ValueError(f"row {row_id}: {field}.xml: {exc}") from None
        shot = None
        if ref.screenshot:
            p = self._path(ref.screenshot, row_id, f"{field}.screenshot")
            shot = _read_screenshot(p, row_id, field)
        if xml is not None:
            try:
                tree = Observation.from_xml(xml, foreground=ref.foreground, step=step)
            except ValueError as exc:
                raise ValueError(f"row {row_id}: {field}.xml: {exc}") from None
            if shot is not None:
                if tuple(shot.size) != tuple(tree.screen_size):
                    _check_scale(shot.size, tree.screen_size, row_id, field)
                    shot = shot.resize(tree.screen_size, Image.NEAREST)
                tree = tree.replace(screenshot=shot)
            return tree
        size = tuple(ref.screen_size) if ref.screen_size else (tuple(shot.size) if shot is not None else (1080, 2400))
        if shot is not None and tuple(shot.size) != size:
            _check_scale(shot.size, size, row_id, field)
            shot = shot.resize(size, Image.NEAREST)
        return Observation(screenshot=shot, foreground=ref.foreground, screen_size=size, step=step)  # type: ignore[arg-type]

    def context(self, row: StepRow, *, with_pending: bool = True,
                history: Optional[list[HistoryEntry]] = None) -> DiagnosisContext:
        """The DiagnosisContext of a row (``pending`` only for a completion claim);
        ``history`` replaces the row's own (a longer one stitched from earlier rows)."""
        rid = row.id or "?"
        entries = row.history if history is None else history
        start = int(row.meta.get("step", len(entries))) - len(entries)
        records = []
        for k, h in enumerate(entries):
            obs = self.load(h.observation, row_id=rid, field=f"history[{k}].observation", step=max(0, start + k))
            step = AgentStep(action=Action(**h.action), thought=h.thought, summary=h.summary)
            records.append(StepRecord(observation=obs, step=step, source=h.source))
        current = self.load(row.observation, row_id=rid, step=max(0, start + len(entries)))
        pending = None
        if with_pending and row.pending is not None:
            pending = AgentStep(action=Action(**row.pending.action), thought=row.pending.thought,
                                summary=row.pending.summary)
        return DiagnosisContext(goal=row.goal, observation=current, history=records, pending=pending)


def _read_screenshot(path: Path, row_id: str, field: str) -> Image.Image:
    """A row's screenshot as RGB: a regular image file of at most :data:`MAX_SCREEN_PIXELS` pixels
    (checked from its header, before its pixels are decoded)."""
    if not path.is_file():
        raise ValueError(f"row {row_id}: {field}.screenshot: {path} is not a regular file; expected a PNG or JPEG")
    try:
        with Image.open(path) as im:
            if im.width * im.height > MAX_SCREEN_PIXELS:
                raise ValueError(f"row {row_id}: {field}.screenshot: {path} is {im.width}x{im.height} pixels; "
                                 f"expected a phone's screenshot (at most {MAX_SCREEN_PIXELS:,} pixels)")
            return im.convert("RGB")
    except (OSError, Image.DecompressionBombError) as exc:
        raise ValueError(f"row {row_id}: {field}.screenshot: {path} is no image PIL can read ({exc}); "
                         "expected a PNG or JPEG") from None


def is_claim(row: StepRow) -> bool:
    a = row.pending.action if row.pending is not None else {}
    return a.get("action_type") == "status" and a.get("goal_status") == "complete"


__all__ = ["ObservationLoader", "is_claim"]


MAX_SCREEN_PIXELS = 4096 * 4096  # the largest screen a screenshot is blown up to (a tablet is 2560x1600)
ASPECT_TOLERANCE = 0.05  # the saved screenshot is the screen downscaled: the same shape


def _check_scale(shot: tuple[int, int], screen: tuple[int, int], row_id: str, field: str) -> None:
    """Refuse to blow a screenshot up to a screen it cannot be (a hostile dump's bounds): datasets keep
    screenshots downscaled to a fixed width (360 px: 3x for a portrait phone, 6.7x in landscape),
    so what must hold is the shape, and the size the upscaled image would take."""
    if screen[0] * screen[1] > MAX_SCREEN_PIXELS:
        raise ValueError(f"row {row_id}: {field}: the dump's screen size {screen[0]}x{screen[1]} is larger than "
                         f"any phone's (at most {MAX_SCREEN_PIXELS} pixels); expected the screenshot's screen")
    shot_aspect, screen_aspect = shot[0] / max(1, shot[1]), screen[0] / max(1, screen[1])
    if abs(shot_aspect - screen_aspect) > ASPECT_TOLERANCE * screen_aspect:
        raise ValueError(f"row {row_id}: {field}: the dump's screen size {screen[0]}x{screen[1]} does not have the "
                         f"shape of the screenshot's {shot[0]}x{shot[1]}; expected the same screen")
