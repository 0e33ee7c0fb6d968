"""Pixel operations of the state and thinking traps (Pillow only, always on a copy).

- :func:`blur_region` / :func:`fill_region` — visual obscuration;
- :func:`edge_background`, :func:`ink_box`, :func:`contrast_color`,
  :func:`draw_label` — visual hallucination's erase-and-redraw of a text label;
- :func:`digest` — a short exact hash of a frame, for the event log.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from statistics import median
from typing import Optional

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

Box = tuple[int, int, int, int]
RGB = tuple[int, int, int]

INK_THRESHOLD = 48  # channel difference from the background that counts as drawn text
FONT_FILE = "DejaVuSans.ttf"  # the paper's font; Pillow's bundled font when it is missing


def digest(img: Optional[Image.Image]) -> Optional[str]:
    """A short exact hash of an image's pixels (None for no image)."""
    if img is None:
        return None
    h = hashlib.sha1(f"{img.mode}{img.size}".encode())
    h.update(img.tobytes())
    return h.hexdigest()[:16]


def same_pixels(a: Optional[Image.Image], b: Optional[Image.Image]) -> bool:
    if a is None or b is None:
        return a is b
    if a.size != b.size or a.mode != b.mode:
        return False
    return ImageChops.difference(a, b).getbbox() is None


def clip(box: Box, size: tuple[int, int]) -> Optional[Box]:
    """``box`` clipped to an image of ``size``; None when nothing is left."""
    x1, y1, x2, y2 = box
    W, H = size
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(W, x2), min(H, y2)
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


def changed_box(before: Image.Image, after: Image.Image) -> Optional[Box]:
    """The bounding box of the pixels that differ (None when identical)."""
    return ImageChops.difference(before.convert("RGB"), after.convert("RGB")).getbbox()


def blur_region(img: Image.Image, box: Box, radius: float) -> None:
    """Gaussian-blur ``box`` of ``img`` in place (only pixels inside the box are used)."""
    patch = img.crop(box).filter(ImageFilter.GaussianBlur(radius))
    img.paste(patch, box[:2])


def fill_region(img: Image.Image, box: Box, color: RGB) -> None:
    img.paste(tuple(color) if img.mode == "RGB" else tuple(color) + (255,), box)  # type: ignore[arg-type]


def edge_background(img: Image.Image, box: Box) -> RGB:
    """The background colour of ``box``: the per-channel median of its edge pixels."""
    rgb = img.convert("RGB") if img.mode != "RGB" else img
    x1, y1, x2, y2 = box
    px = rgb.load()
    pts: list[tuple[int, int]] = []
    step_x = max(1, (x2 - x1) // 64)
    step_y = max(1, (y2 - y1) // 32)
    for x in range(x1, x2, step_x):
        pts.append((x, y1))
        pts.append((x, y2 - 1))
    for y in range(y1, y2, step_y):
        pts.append((x1, y))
        pts.append((x2 - 1, y))
    samples = [px[p] for p in pts]
    return tuple(int(median(s[c] for s in samples)) for c in range(3))  # type: ignore[return-value]


def dominant_color(img: Image.Image, box: Box) -> RGB:
    """The most frequent colour inside ``box`` (the surface a label is drawn on)."""
    crop = img.crop(box).convert("RGB")
    colors = crop.getcolors(maxcolors=crop.size[0] * crop.size[1] + 1) or []
    return max(colors, key=lambda c: c[0])[1] if colors else (0, 0, 0)


def locate_label(img: Image.Image, box: Box) -> Optional[tuple[Box, RGB]]:
    """Where a label is drawn inside an element's ``box`` (screen coordinates) and on
    what colour.

    The background is AnTrap's estimate — the median of the box's edge pixels —
    unless the label sits on a shape of its own (a button pill, an outlined text
    field): then the shape's fill, the dominant colour inside the box, is the
    label's background, and whatever touches the box's border (the outline, the
    rounded corners, a floating hint) is not part of the label."""
    edge = edge_background(img, box)
    fill = dominant_color(img, box)
    surface = fill if max(abs(a - b) for a, b in zip(fill, edge)) > 6 else edge
    mask = ink_mask(img, box, surface)
    if _border_share(mask) > 0.25:
        mask = _drop_border_components(mask)
    bb = mask.getbbox()
    if bb is None:
        return None
    x1, y1 = box[0], box[1]
    return (x1 + bb[0], y1 + bb[1], x1 + bb[2], y1 + bb[3]), surface


def ink_mask(img: Image.Image, box: Box, bg: RGB) -> Image.Image:
    """A mask (mode "L", 0 / 255, size of ``box``) of the pixels that differ from ``bg``."""
    crop = img.crop(box).convert("RGB")
    diff = ImageChops.difference(crop, Image.new("RGB", crop.size, bg))
    grey = diff.convert("L")  # luma of the difference; faint anti-aliasing fades out
    return grey.point(lambda v: 255 if v >= INK_THRESHOLD // 2 else 0)


def ink_box(img: Image.Image, box: Box, bg: RGB) -> Optional[Box]:
    """The bounding box (screen coordinates) of what differs from ``bg`` inside ``box``."""
    bb = ink_mask(img, box, bg).getbbox()
    if bb is None:
        return None
    return (box[0] + bb[0], box[1] + bb[1], box[0] + bb[2], box[1] + bb[3])


def _border_pixels(w: int, h: int) -> list[tuple[int, int]]:
    pts = [(x, 0) for x in range(w)] + [(x, h - 1) for x in range(w)]
    pts += [(0, y) for y in range(1, h - 1)] + [(w - 1, y) for y in range(1, h - 1)]
    return pts


def _border_share(mask: Image.Image) -> float:
    w, h = mask.size
    if w < 3 or h < 3:
        return 0.0
    px = mask.load()
    pts = _border_pixels(w, h)
    return sum(1 for p in pts if px[p]) / len(pts)


def _drop_border_components(mask: Image.Image) -> Image.Image:
    """``mask`` without the shapes connected to its border."""
    out = mask.copy()
    px = out.load()
    for p in _border_pixels(*out.size):
        if px[p]:
            ImageDraw.floodfill(out, p, 0)
    return out


def luminance(c: RGB) -> float:
    return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]


def contrast_color(bg: RGB, min_contrast: float = 96.0) -> RGB:
    """The contrast-inverted colour of ``bg`` (255 - each channel); for mid-tone
    backgrounds, whose inverse would be nearly invisible, black or white instead."""
    inv = (255 - bg[0], 255 - bg[1], 255 - bg[2])
    if abs(luminance(inv) - luminance(bg)) >= min_contrast:
        return inv
    return (0, 0, 0) if luminance(bg) >= 128 else (255, 255, 255)


@lru_cache(maxsize=128)
def label_font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(FONT_FILE, size=max(4, px))
    except OSError:
        return ImageFont.load_default(size=max(4, px))


def _text_width(text: str, px: int) -> float:
    # the widest line: Pillow measures single lines only (raqm fails on a newline)
    return max(float(label_font(px).getlength(line)) for line in text.split("\n"))


def wrap(text: str, px: int, max_width: float) -> list[str]:
    """Greedy word wrap of ``text`` at font size ``px`` (its own line breaks kept)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        cur = ""
        for word in paragraph.split(" "):
            cand = word if not cur else f"{cur} {word}"
            if not cur or _text_width(cand, px) <= max_width:
                cur = cand
            else:
                lines.append(cur)
                cur = word
        lines.append(cur)
    return lines


def fit_size(original: str, ink: Box) -> tuple[int, bool]:
    """The font size at which ``original`` fills the ink box, and whether it was
    drawn on several lines: one line spans the box's width; wrapped text fills its
    height."""
    iw, ih = max(1, ink[2] - ink[0]), max(1, ink[3] - ink[1])
    ref = 40
    size = ref * iw / max(1.0, _text_width(original, ref))
    if ih <= size * 1.6:
        return max(6, int(round(size))), False
    for s in range(min(ih, 160), 5, -1):
        if len(wrap(original, s, iw)) * s * 1.2 <= ih * 1.1:
            return s, True
    return 6, True


def draw_label(img: Image.Image, box: Box, ink: Box, text: str, original: str, bg: RGB) -> Box:
    """Erase the label drawn in ``ink`` (filling with ``bg``) and draw ``text`` in the
    contrast-inverted colour at the original's size, aligned as it was (centred or
    left). Returns the region that was overwritten."""
    x1, y1, x2, y2 = box
    pad = 2
    erase = (max(x1, ink[0] - pad), max(y1, ink[1] - pad), min(x2, ink[2] + pad), min(y2, ink[3] + pad))
    draw = ImageDraw.Draw(img)
    draw.rectangle((erase[0], erase[1], erase[2] - 1, erase[3] - 1), fill=bg)
    size, multiline = fit_size(original, ink)
    room = x2 - x1
    if multiline:
        lines = wrap(text, size, room)
    else:
        while size > 6 and _text_width(text, size) > room:
            size -= 1
        lines = text.split("\n")
    font = label_font(size)
    ink_cx = (ink[0] + ink[2]) / 2
    starts_left = ink[0] - x1 <= max(4.0, 0.02 * room)
    centred = not starts_left and abs(ink_cx - (x1 + x2) / 2) <= max(4.0, 0.08 * room)
    line_h = size * 1.25
    cy = (ink[1] + ink[3]) / 2 - line_h * (len(lines) - 1) / 2
    fill = contrast_color(bg)
    paint = fill if img.mode == "RGB" else fill + (255,)
    out = list(erase)
    for line in lines:
        width = _text_width(line, size)
        tx = ink_cx - width / 2 if centred else float(ink[0])
        tx = max(float(x1), min(tx, x2 - width))
        draw.text((tx, cy), line, font=font, fill=paint, anchor="lm")
        bb = draw.textbbox((tx, cy), line, font=font, anchor="lm")
        out = [min(out[0], int(bb[0])), min(out[1], int(bb[1])), max(out[2], int(bb[2]) + 1), max(out[3], int(bb[3]) + 1)]
        cy += line_h
    return (out[0], out[1], out[2], out[3])
