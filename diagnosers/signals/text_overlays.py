"""Overlay candidates of a screen without a UI tree, from the lines of text read from its
screenshot (OCR) and the layout of the image:

- a **card over a dimmed backdrop** (a dialog, a bottom sheet): lines on a background
  much brighter than the screen's edges, or edges that darkened since the screen
  before (a scrim coming up);
- a **banner at the top** (a heads-up notification): new lines right below the status
  bar over a page that stayed, its first line ending in a time stamp ("Messages · now");
- a **page that took over the screen** (an ad, an offer, a gate): few lines, almost all
  new, and a way on near the bottom (a filled wide button, "Next", "No thanks").

They are the tree's :class:`~diagnosers.signals.overlays.Candidate` objects, so the
interference diagnoser scores them with the same lexicon, button roles and context
rules; only the structural evidence differs (it is read from pixels, not from a dump).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Optional

import numpy as np

from diagnosers.signals.data import builtin
from diagnosers.signals.image import Thumb, region_mean, thumb
from diagnosers.signals.overlays import W_DIALOG, W_FORWARD, W_GATE_SHAPE, W_HEADS_UP, Button, Candidate, gates
from diagnosers.signals.screen_text import content_lines, line_texts
from diagnosers.signals.text import normalize
from ttir.core.lexicon import norm, vocabulary
from ttir.core.types import Bounds, Observation, UIElement

W_DIMMED_BACKDROP = 0.25  # the card's surroundings are dimmed: a modal scrim (in a dump it is one node among many)
W_BANNER_STAMP = 0.15  # the banner's first line ends in a notification time stamp ("now", "2m", "10:32")
CARD_CONTRAST = 1.6  # card background / backdrop luminance (+8) at which lines sit on a card over a scrim
SCRIM_DARKENING = 0.8  # edge luminance ratio (now / before) that looks like a scrim coming up
EDGE_SHARE = 0.03  # width of the left and right edge strips sampled for the backdrop
BACKDROP_QUANTILE = 25  # per-row edge luminance percentile: the dimmed rows above a sheet count
BANNER_BAND = 0.3  # new lines starting in this top share of the screen can be a heads-up banner
HEADER_BAND = 0.12  # a banner's header line ("Messages · now") starts right below the status bar
PAGE_KEPT = 0.5  # share of the earlier lines below the banner that must still show
MAX_PAGE_LINES = 12  # a page that takes over the screen says little (an ad, an offer, a gate)
NEW_PAGE = 0.7  # share of its lines that must be new since the screen before
WAY_ON_BAND = 0.55  # a gate's way on sits below this share of the screen's height
WIDE_BUTTON = 0.4  # share of the screen's width a filled button spans to be a gate's way on
FILLED = 1.6  # luminance ratio between a line's background and the page around it: a filled button
MAX_BUTTON_WORDS = 4
KEYBOARD_KEYS = 8  # this many one- or two-character lines in the lower half are a keyboard's keys
_SMOOTH = 8.0  # added to luminances before a ratio (near-black screens)


@lru_cache(maxsize=1)
def _time_stamps() -> re.Pattern[str]:
    """A heads-up header: an app's name (a few words, no digits: not a date) and the time
    stamp Android puts after it; OCR often drops the separator ("Messagesnow")."""
    words = [re.escape(normalize(str(w))) for w in builtin("system").get("notification_time_words", [])]
    stamp = "|".join(words + [r"\d{1,2}:\d{2}(?:\s?[ap]m)?", r"\d{1,2}\s?(?:m|min|h)"])
    return re.compile(r"^[^\d]{2,40}?\W*(?:" + stamp + r")$")


def is_notification_header(text: str) -> bool:
    t = normalize(text)
    return len(t.split()) <= 5 and bool(_time_stamps().match(t))


def _ratio(a: float, b: float) -> float:
    return (a + _SMOOTH) / (b + _SMOOTH)


def _box(t: Thumb, b: Bounds, pad: int = 0) -> np.ndarray:
    x1, y1, x2, y2 = b
    h, w = t.pixels.shape
    f = t.factor
    xs, ys = max(0, (x1 - pad) // f), max(0, (y1 - pad) // f)
    xe, ye = min(w, -(-(x2 + pad) // f)), min(h, -(-(y2 + pad) // f))
    return t.pixels[ys:max(ys + 1, ye), xs:max(xs + 1, xe)]


def line_background(t: Thumb, e: UIElement) -> float:
    """The luminance behind a line of text (the median around it: strokes are thin)."""
    pad = max(4, (e.bounds[3] - e.bounds[1]) // 3)
    part = _box(t, e.bounds, pad)
    return float(np.median(part)) if part.size else 0.0


def _edge_rows(t: Thumb, obs: Observation) -> np.ndarray:
    """Per thumbnail row of the content band: the median luminance of the screen's left
    and right edge strips (where a centred dialog's scrim shows)."""
    h, w = t.pixels.shape
    k = max(1, int(round(EDGE_SHARE * w)))
    top, bottom = int(0.05 * h), int(0.93 * h)
    strips = np.concatenate([t.pixels[top:bottom, :k], t.pixels[top:bottom, w - k:]], axis=1)
    return np.median(strips, axis=1) if strips.size else np.zeros(0)


def backdrop(t: Thumb, obs: Observation) -> float:
    rows = _edge_rows(t, obs)
    return float(np.percentile(rows, BACKDROP_QUANTILE)) if rows.size else 0.0


def edges_darkened(before: Optional[Observation], obs: Observation) -> Optional[float]:
    """How bright the screen's left and right edges are now against the screen before
    (a scrim darkens them); None without two screenshots of one size."""
    if before is None or before.screenshot is None or obs.screenshot is None:
        return None
    if tuple(before.screenshot.size) != tuple(obs.screenshot.size):
        return None
    w, h = obs.screenshot.size
    bands = [(0, int(0.06 * h), int(0.08 * w), int(0.9 * h)), (int(0.92 * w), int(0.06 * h), w, int(0.9 * h))]
    ratios = []
    for band in bands:
        now, then = region_mean(obs, band), region_mean(before, band)
        if now is not None and then:
            ratios.append(now / then)
    return max(ratios) if ratios else None


def keyboard_top(obs: Observation, lines: list[UIElement]) -> Optional[int]:
    """Where a soft keyboard starts, when its keys were read as text: many one- or
    two-character lines in the lower half of the screen."""
    h = obs.screen_size[1]
    keys = [e for e in lines if len(e.text) <= 2 and e.bounds[1] >= 0.5 * h]
    if len(keys) < KEYBOARD_KEYS:
        return None
    heights = sorted(e.height for e in keys)
    return min(e.bounds[1] for e in keys) - 2 * heights[len(heights) // 2]


def _union(lines: list[UIElement]) -> Bounds:
    return (min(e.bounds[0] for e in lines), min(e.bounds[1] for e in lines),
            max(e.bounds[2] for e in lines), max(e.bounds[3] for e in lines))


def _grow(b: Bounds, obs: Observation, margin: float = 0.03) -> Bounds:
    w, h = obs.screen_size
    m = int(margin * w)
    return (max(0, b[0] - m), max(0, b[1] - m), min(w, b[2] + m), min(h, b[3] + m))


def _is_button_label(text: str) -> bool:
    words = text.split()
    return 0 < len(words) <= MAX_BUTTON_WORDS and len(text) <= 32 and not text.rstrip().endswith((".", "?", ":"))


def _buttons(lines: list[UIElement], index: dict[int, int], lower_from: int) -> list[Button]:
    """Lines that read as a button: a label the shared vocabulary gives a role, or a
    short label in the lower part of the candidate."""
    v = vocabulary()
    out = []
    for e in lines:
        if not _is_button_label(e.text):
            continue
        if v.phrase_role(e.text) is not None or e.bounds[1] >= lower_from:
            out.append(Button(label=e.text, bounds=e.bounds, resource_id="", index=index.get(id(e), -1)))
    return out


def _candidate(obs: Observation, lines: list[UIElement], kind: str, index: dict[int, int],
               bounds: Optional[Bounds] = None, title: Optional[str] = None) -> Candidate:
    box = bounds or _grow(_union(lines), obs)
    lower = box[1] + (box[3] - box[1]) // 2
    first = lines[0]
    # the package an overlay comes from is not in the pixels: unknown ("")
    c = Candidate(index=index.get(id(first), -1), kind=kind, package="", bounds=box,
                  is_window=kind != "dialog", texts=[e.text for e in lines], title=title or first.text)
    c.buttons = _buttons(lines, index, lower)
    return c


def _filled_width(t: Thumb, e: UIElement, bg: float) -> int:
    """How wide (in screen pixels) the run of the line's background colour is along its
    middle row: a filled button's pill, or the page itself."""
    h, w = t.pixels.shape
    f = t.factor
    y = min(h - 1, ((e.bounds[1] + e.bounds[3]) // 2) // f)
    row = t.pixels[y]
    x0, x1 = max(0, e.bounds[0] // f - 1), min(w - 1, e.bounds[2] // f + 1)
    tol = max(6.0, 0.12 * bg)
    left, right = x0, x1
    while left > 0 and abs(float(row[left - 1]) - bg) <= tol:
        left -= 1
    while right < w - 1 and abs(float(row[right + 1]) - bg) <= tol:
        right += 1
    return (right - left + 1) * f


def text_candidates(obs: Observation, before: Optional[Observation]) -> list[Candidate]:
    """Overlay candidates of ``obs`` read from its text and pixels (``before``: the screen
    the agent saw before, for what is new)."""
    lines = content_lines(obs)
    t = thumb(obs)
    if not lines or t is None:
        return []
    kb = keyboard_top(obs, lines)
    if kb is not None:
        lines = [e for e in lines if e.bounds[1] < kb]
    if not lines:
        return []
    w, h = obs.screen_size
    index = {id(e): i for i, e in enumerate(obs.elements)} if obs.source == "ocr" else {}
    out: list[Candidate] = []
    card = _card(obs, t, lines, before)
    if card is not None:
        c = _candidate(obs, card[0], "dialog", index, bounds=card[1])
        c.features["dialog_card"] = W_DIALOG
        c.features["dimmed_backdrop"] = W_DIMMED_BACKDROP
        c.scrim = True
        out.append(c)
        return out  # a modal card covers the rest: nothing else on screen takes the input
    old = line_texts(before) if before is not None and before.screenshot is not None else None
    banner = _banner(obs, lines, old)
    if banner is not None:
        c = _candidate(obs, banner, "heads_up", index)
        c.features["heads_up"] = W_HEADS_UP
        if is_notification_header(banner[0].text):
            c.features["notification_stamp"] = W_BANNER_STAMP
        out.append(c)
    page = _takeover(obs, t, lines, old)
    if page is not None:
        c = _candidate(obs, lines, "takeover", index, bounds=(0, 0, w, h))
        c.features.update(page)
        out.append(c)
    return out


def _card(obs: Observation, t: Thumb, lines: list[UIElement],
          before: Optional[Observation]) -> Optional[tuple[list[UIElement], Bounds]]:
    """The lines on a card over a dimmed backdrop, and the card's box."""
    dim = backdrop(t, obs)
    darker = edges_darkened(before, obs)
    bright = [e for e in lines if _ratio(line_background(t, e), dim) >= CARD_CONTRAST]
    if not bright:
        return None
    if darker is not None and darker >= 1.0 / SCRIM_DARKENING and len(bright) < len(lines):
        return None  # the edges got brighter: a scrim went away, this is the page under it
    box = _grow(_union(bright), obs)
    inside = [e for e in lines if box[0] <= (e.bounds[0] + e.bounds[2]) / 2 < box[2]
              and box[1] <= (e.bounds[1] + e.bounds[3]) / 2 < box[3]]
    w, h = obs.screen_size
    if (box[3] - box[1]) >= 0.85 * h:
        return None  # lighter text areas over the whole screen: a page, not a card
    return inside, box


def _banner(obs: Observation, lines: list[UIElement], old: Optional[set[str]]) -> Optional[list[UIElement]]:
    """A heads-up notification: lines right below the status bar under a notification
    header ("Messages · now"), or new lines at the top of a page that otherwise stayed."""
    h = obs.screen_size[1]
    head = next((e for e in lines if e.bounds[1] < HEADER_BAND * h and is_notification_header(e.text)), None)
    if head is not None:
        return _block_below(lines, head, BANNER_BAND * h)
    if old is None:
        return None
    new_top = [e for e in lines if e.bounds[1] < BANNER_BAND * h and normalize(e.text) not in old]
    if not new_top:
        return None
    bottom = max(e.bounds[3] for e in new_top)
    rest_now = {normalize(e.text) for e in lines if e.bounds[1] > bottom}
    rest_before = {s for s in old if s not in {normalize(e.text) for e in new_top}}
    if not rest_now or not rest_before:
        return None
    kept = len(rest_now & rest_before) / len(rest_now)
    if kept < PAGE_KEPT:
        return None  # the whole page changed: a new screen, not a banner over the old one
    top = min(e.bounds[1] for e in new_top)
    return [e for e in lines if top <= e.bounds[1] and e.bounds[3] <= bottom]


def _block_below(lines: list[UIElement], head: UIElement, limit: float) -> list[UIElement]:
    """``head`` and the lines right under it (no gap taller than two lines), down to ``limit``."""
    out = [head]
    bottom = head.bounds[3]
    for e in sorted(lines, key=lambda e: e.bounds[1]):
        if e is head or e.bounds[1] < head.bounds[1]:
            continue
        if e.bounds[1] > limit or e.bounds[1] - bottom > 2 * max(1, head.height):
            break
        out.append(e)
        bottom = max(bottom, e.bounds[3])
    return out


def _takeover(obs: Observation, t: Thumb, lines: list[UIElement], old: Optional[set[str]]) -> Optional[dict[str, float]]:
    """Gate-shape evidence of a page that replaced the screen: few lines, almost all new,
    and a way on near the bottom (a wide filled button, or a forward / decline label)."""
    if len(lines) > MAX_PAGE_LINES:
        return None
    if old is not None:
        now = [normalize(e.text) for e in lines]
        if sum(1 for s in now if s not in old) < NEW_PAGE * len(now):
            return None
    w, h = obs.screen_size
    g = gates()
    v = vocabulary()
    way_on = False
    for e in lines:
        if e.bounds[1] < WAY_ON_BAND * h:
            continue
        label = norm(e.text)
        if label in g.forward or label in g.skip or v.phrase_role(e.text) == "dismiss":
            way_on = True
            break
        bg = line_background(t, e)
        around = float(np.median(_edge_rows(t, obs))) if _edge_rows(t, obs).size else bg
        if abs(math.log(_ratio(bg, around))) >= math.log(FILLED) and _filled_width(t, e, bg) >= WIDE_BUTTON * w:
            way_on = True
            break
    if not way_on:
        return None
    return {"gate_shape": W_GATE_SHAPE, "forward_button": W_FORWARD}


def persisting(before_candidates: list[tuple[float, Candidate]], obs: Observation, min_score: float) -> list[Candidate]:
    """Candidates of the screen before (scored at least ``min_score``) that are still on
    screen: their title line at about the same place. What made them candidates (a scrim
    coming up, new lines) happened once; they stay until they go."""
    lines = content_lines(obs)
    if not lines:
        return []
    h = obs.screen_size[1]
    index = {id(e): i for i, e in enumerate(obs.elements)} if obs.source == "ocr" else {}
    out = []
    for score, c in before_candidates:
        if score < min_score:
            continue
        title = normalize(c.title)
        hit = next((e for e in lines if normalize(e.text) == title), None)
        if hit is None:
            continue
        inside = [e for e in lines if c.bounds[1] - 0.05 * h <= e.bounds[1] and e.bounds[3] <= c.bounds[3] + 0.05 * h
                  and c.bounds[0] <= (e.bounds[0] + e.bounds[2]) / 2 <= c.bounds[2]]
        if not inside:
            continue
        same = _candidate(obs, inside, c.kind, index, bounds=c.bounds if c.kind != "heads_up" else None, title=c.title)
        same.features = {k: v for k, v in c.features.items()}
        same.scrim = c.scrim
        out.append(same)
    return out


__all__ = ["W_BANNER_STAMP", "W_DIMMED_BACKDROP", "edges_darkened", "is_notification_header", "keyboard_top",
           "persisting", "text_candidates"]
