"""Icons as simple vector shapes drawn with Pillow (no image assets needed)."""

from __future__ import annotations

import math
from typing import Callable

from PIL import ImageDraw

Color = tuple[int, int, int]
Box = tuple[int, int, int, int]


def _lw(s: float) -> int:
    return max(2, int(s / 11))


def _arrow(d: ImageDraw.ImageDraw, b: Box, c: Color, angle: float) -> None:
    x1, y1, x2, y2 = b
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * 0.36
    lw = _lw(x2 - x1)
    ca, sa = math.cos(angle), math.sin(angle)
    tip = (cx + r * ca, cy + r * sa)
    tail = (cx - r * ca, cy - r * sa)
    d.line([tail, tip], fill=c, width=lw)
    for s in (-1, 1):
        a = angle + math.pi + s * 0.75
        d.line([tip, (tip[0] + r * 0.7 * math.cos(a), tip[1] + r * 0.7 * math.sin(a))], fill=c, width=lw)


def _chevron(d: ImageDraw.ImageDraw, b: Box, c: Color, angle: float) -> None:
    x1, y1, x2, y2 = b
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * 0.22
    lw = _lw(x2 - x1)
    ca, sa = math.cos(angle), math.sin(angle)
    tip = (cx + r * ca, cy + r * sa)
    for s in (-1, 1):
        a = angle + math.pi + s * 0.8
        d.line([tip, (tip[0] + r * 1.6 * math.cos(a), tip[1] + r * 1.6 * math.sin(a))], fill=c, width=lw)


def _plus(d, b, c):
    x1, y1, x2, y2 = b
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * 0.32
    lw = _lw(x2 - x1)
    d.line([(cx - r, cy), (cx + r, cy)], fill=c, width=lw)
    d.line([(cx, cy - r), (cx, cy + r)], fill=c, width=lw)


def _close(d, b, c):
    x1, y1, x2, y2 = b
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1) * 0.26
    lw = _lw(x2 - x1)
    d.line([(cx - r, cy - r), (cx + r, cy + r)], fill=c, width=lw)
    d.line([(cx - r, cy + r), (cx + r, cy - r)], fill=c, width=lw)


def _search(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    d.ellipse((x1 + s * 0.2, y1 + s * 0.2, x1 + s * 0.62, y1 + s * 0.62), outline=c, width=lw)
    d.line([(x1 + s * 0.56, y1 + s * 0.56), (x1 + s * 0.82, y1 + s * 0.82)], fill=c, width=lw + 1)


def _more(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    r = max(2, s * 0.06)
    for k in (-1, 0, 1):
        cy = (y1 + y2) / 2 + k * s * 0.22
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=c)


def _menu(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    for k in (-1, 0, 1):
        y = (y1 + y2) / 2 + k * s * 0.2
        d.line([(x1 + s * 0.2, y), (x2 - s * 0.2, y)], fill=c, width=lw)


def _trash(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    d.line([(x1 + s * 0.2, y1 + s * 0.28), (x2 - s * 0.2, y1 + s * 0.28)], fill=c, width=lw)
    d.rectangle((x1 + s * 0.4, y1 + s * 0.18, x2 - s * 0.4, y1 + s * 0.28), outline=c, width=lw)
    d.polygon([(x1 + s * 0.28, y1 + s * 0.32), (x2 - s * 0.28, y1 + s * 0.32), (x2 - s * 0.32, y2 - s * 0.16), (x1 + s * 0.32, y2 - s * 0.16)], outline=c, width=lw)


def _edit(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s) + 1
    d.line([(x1 + s * 0.25, y2 - s * 0.25), (x2 - s * 0.25, y1 + s * 0.25)], fill=c, width=lw)
    d.line([(x1 + s * 0.2, y2 - s * 0.2), (x1 + s * 0.32, y2 - s * 0.2)], fill=c, width=lw)


def _check(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.line([(x1 + s * 0.22, y1 + s * 0.52), (x1 + s * 0.42, y1 + s * 0.72), (x2 - s * 0.2, y1 + s * 0.3)], fill=c, width=_lw(s) + 1)


def _circle_glyph(d, b, c, filled=False):
    x1, y1, x2, y2 = b
    s = x2 - x1
    box = (x1 + s * 0.2, y1 + s * 0.2, x2 - s * 0.2, y2 - s * 0.2)
    if filled:
        d.ellipse(box, fill=c)
    else:
        d.ellipse(box, outline=c, width=_lw(s))


def _mic(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.38, y1 + s * 0.15, x2 - s * 0.38, y1 + s * 0.6), radius=int(s * 0.12), fill=c)
    d.arc((x1 + s * 0.26, y1 + s * 0.3, x2 - s * 0.26, y1 + s * 0.72), 0, 180, fill=c, width=_lw(s))
    d.line([((x1 + x2) / 2, y1 + s * 0.72), ((x1 + x2) / 2, y2 - s * 0.15)], fill=c, width=_lw(s))


def _stop(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rectangle((x1 + s * 0.3, y1 + s * 0.3, x2 - s * 0.3, y2 - s * 0.3), fill=c)


def _play(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.34, y1 + s * 0.24), (x2 - s * 0.24, (y1 + y2) / 2), (x1 + s * 0.34, y2 - s * 0.24)], fill=c)


def _pause(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rectangle((x1 + s * 0.3, y1 + s * 0.25, x1 + s * 0.44, y2 - s * 0.25), fill=c)
    d.rectangle((x2 - s * 0.44, y1 + s * 0.25, x2 - s * 0.3, y2 - s * 0.25), fill=c)


def _folder(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.12, y1 + s * 0.25), (x1 + s * 0.42, y1 + s * 0.25), (x1 + s * 0.5, y1 + s * 0.34), (x2 - s * 0.12, y1 + s * 0.34), (x2 - s * 0.12, y2 - s * 0.22), (x1 + s * 0.12, y2 - s * 0.22)], fill=c)


def _file(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.25, y1 + s * 0.12), (x2 - s * 0.4, y1 + s * 0.12), (x2 - s * 0.25, y1 + s * 0.28), (x2 - s * 0.25, y2 - s * 0.12), (x1 + s * 0.25, y2 - s * 0.12)], outline=c, width=_lw(s))


def _person(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.ellipse((x1 + s * 0.36, y1 + s * 0.16, x2 - s * 0.36, y1 + s * 0.46), fill=c)
    d.pieslice((x1 + s * 0.2, y1 + s * 0.52, x2 - s * 0.2, y2 + s * 0.28), 180, 360, fill=c)


def _gear(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    for k in range(8):
        a = k * math.pi / 4
        d.line([(cx, cy), (cx + s * 0.36 * math.cos(a), cy + s * 0.36 * math.sin(a))], fill=c, width=_lw(s) + 2)
    d.ellipse((cx - s * 0.26, cy - s * 0.26, cx + s * 0.26, cy + s * 0.26), fill=c)


def _bubble(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.15, y1 + s * 0.2, x2 - s * 0.15, y2 - s * 0.3), radius=int(s * 0.12), fill=c)
    d.polygon([(x1 + s * 0.3, y2 - s * 0.32), (x1 + s * 0.3, y2 - s * 0.14), (x1 + s * 0.46, y2 - s * 0.32)], fill=c)


def _phone(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.3, y1 + s * 0.12, x2 - s * 0.3, y2 - s * 0.12), radius=int(s * 0.08), outline=c, width=_lw(s))


def _star(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    pts = []
    for k in range(10):
        r = s * (0.36 if k % 2 == 0 else 0.15)
        a = -math.pi / 2 + k * math.pi / 5
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    d.polygon(pts, fill=c)


def _sun(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    for k in range(8):
        a = k * math.pi / 4
        d.line([(cx + s * 0.25 * math.cos(a), cy + s * 0.25 * math.sin(a)), (cx + s * 0.38 * math.cos(a), cy + s * 0.38 * math.sin(a))], fill=c, width=_lw(s))
    d.ellipse((cx - s * 0.17, cy - s * 0.17, cx + s * 0.17, cy + s * 0.17), fill=c)


def _moon(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.pieslice((x1 + s * 0.2, y1 + s * 0.2, x2 - s * 0.2, y2 - s * 0.2), 90, 270, fill=c)


def _wifi(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, by = (x1 + x2) / 2, y2 - s * 0.2
    for r in (0.15, 0.3, 0.45):
        d.arc((cx - s * r, by - s * r, cx + s * r, by + s * r), 225, 315, fill=c, width=_lw(s))


def _bluetooth(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    pts = [(cx - s * 0.18, y1 + s * 0.32), (cx + s * 0.16, y2 - s * 0.32), (cx, y2 - s * 0.15), (cx, y1 + s * 0.15), (cx + s * 0.16, y1 + s * 0.32), (cx - s * 0.18, y2 - s * 0.32)]
    d.line(pts, fill=c, width=_lw(s))


def _bolt(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.55, y1 + s * 0.1), (x1 + s * 0.3, y1 + s * 0.55), (x1 + s * 0.48, y1 + s * 0.55), (x1 + s * 0.42, y2 - s * 0.1), (x2 - s * 0.3, y1 + s * 0.42), (x1 + s * 0.52, y1 + s * 0.42)], fill=c)


def _plane(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    d.line([(cx, y1 + s * 0.12), (cx, y2 - s * 0.15)], fill=c, width=_lw(s) + 2)
    d.polygon([(x1 + s * 0.14, y1 + s * 0.55), (cx, y1 + s * 0.38), (x2 - s * 0.14, y1 + s * 0.55)], fill=c)
    d.polygon([(cx - s * 0.15, y2 - s * 0.12), (cx, y2 - s * 0.22), (cx + s * 0.15, y2 - s * 0.12)], fill=c)


def _clock(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    d.ellipse((x1 + s * 0.15, y1 + s * 0.15, x2 - s * 0.15, y2 - s * 0.15), outline=c, width=_lw(s))
    d.line([(cx, cy), (cx, cy - s * 0.22)], fill=c, width=_lw(s))
    d.line([(cx, cy), (cx + s * 0.16, cy)], fill=c, width=_lw(s))


def _globe(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    box = (x1 + s * 0.15, y1 + s * 0.15, x2 - s * 0.15, y2 - s * 0.15)
    d.ellipse(box, outline=c, width=_lw(s))
    d.ellipse((x1 + s * 0.35, y1 + s * 0.15, x2 - s * 0.35, y2 - s * 0.15), outline=c, width=_lw(s))
    d.line([(x1 + s * 0.15, (y1 + y2) / 2), (x2 - s * 0.15, (y1 + y2) / 2)], fill=c, width=_lw(s))


def _note(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rectangle((x1 + s * 0.22, y1 + s * 0.14, x2 - s * 0.22, y2 - s * 0.14), outline=c, width=_lw(s))
    for k in range(3):
        y = y1 + s * (0.35 + 0.15 * k)
        d.line([(x1 + s * 0.32, y), (x2 - s * 0.32, y)], fill=c, width=max(1, _lw(s) - 1))


def _pot(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.2, y1 + s * 0.4, x2 - s * 0.2, y2 - s * 0.18), radius=int(s * 0.1), fill=c)
    d.line([(x1 + s * 0.12, y1 + s * 0.4), (x2 - s * 0.12, y1 + s * 0.4)], fill=c, width=_lw(s))
    d.ellipse((x1 + s * 0.42, y1 + s * 0.22, x2 - s * 0.42, y1 + s * 0.34), fill=c)


def _wallet(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.15, y1 + s * 0.28, x2 - s * 0.15, y2 - s * 0.22), radius=int(s * 0.08), outline=c, width=_lw(s))
    d.rectangle((x2 - s * 0.35, y1 + s * 0.42, x2 - s * 0.15, y1 + s * 0.58), fill=c)


def _shield(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    d.polygon([(cx, y1 + s * 0.12), (x2 - s * 0.2, y1 + s * 0.26), (x2 - s * 0.24, y1 + s * 0.62), (cx, y2 - s * 0.1), (x1 + s * 0.24, y1 + s * 0.62), (x1 + s * 0.2, y1 + s * 0.26)], fill=c)


def _bell(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.pieslice((x1 + s * 0.22, y1 + s * 0.18, x2 - s * 0.22, y2 - s * 0.1), 180, 360, fill=c)
    d.rectangle((x1 + s * 0.22, y1 + s * 0.45, x2 - s * 0.22, y2 - s * 0.3), fill=c)
    d.ellipse((x1 + s * 0.44, y2 - s * 0.3, x2 - s * 0.44, y2 - s * 0.18), fill=c)


def _download(d, b, c):
    _arrow(d, b, c, math.pi / 2)
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.line([(x1 + s * 0.2, y2 - s * 0.15), (x2 - s * 0.2, y2 - s * 0.15)], fill=c, width=_lw(s))


def _info(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    d.ellipse((x1 + s * 0.15, y1 + s * 0.15, x2 - s * 0.15, y2 - s * 0.15), outline=c, width=_lw(s))
    d.line([(cx, y1 + s * 0.45), (cx, y2 - s * 0.3)], fill=c, width=_lw(s))
    d.ellipse((cx - 2, y1 + s * 0.3, cx + 2, y1 + s * 0.36), fill=c)


def _square(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rounded_rectangle((x1 + s * 0.28, y1 + s * 0.28, x2 - s * 0.28, y2 - s * 0.28), radius=int(s * 0.05), outline=c, width=_lw(s))


def _triangle_back(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x2 - s * 0.35, y1 + s * 0.28), (x1 + s * 0.3, (y1 + y2) / 2), (x2 - s * 0.35, y2 - s * 0.28)], outline=c, width=_lw(s))


def _home_circle(d, b, c):
    _circle_glyph(d, b, c)


def _grid(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    for i in range(3):
        for j in range(3):
            cx, cy = x1 + s * (0.28 + 0.22 * i), y1 + s * (0.28 + 0.22 * j)
            d.ellipse((cx - s * 0.05, cy - s * 0.05, cx + s * 0.05, cy + s * 0.05), fill=c)


def _lock(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.arc((x1 + s * 0.3, y1 + s * 0.15, x2 - s * 0.3, y1 + s * 0.6), 180, 360, fill=c, width=_lw(s))
    d.rectangle((x1 + s * 0.22, y1 + s * 0.42, x2 - s * 0.22, y2 - s * 0.15), fill=c)


def _sd(d, b, c):
    _file(d, b, c)


def _timer(d, b, c):
    _clock(d, b, c)


def _calendar(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.rectangle((x1 + s * 0.18, y1 + s * 0.22, x2 - s * 0.18, y2 - s * 0.16), outline=c, width=_lw(s))
    d.rectangle((x1 + s * 0.18, y1 + s * 0.22, x2 - s * 0.18, y1 + s * 0.36), fill=c)


def _share(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    pts = [(x2 - s * 0.3, y1 + s * 0.25), (x1 + s * 0.3, (y1 + y2) / 2), (x2 - s * 0.3, y2 - s * 0.25)]
    d.line(pts, fill=c, width=_lw(s))
    for p in pts:
        d.ellipse((p[0] - s * 0.08, p[1] - s * 0.08, p[0] + s * 0.08, p[1] + s * 0.08), fill=c)


def _signal(d, b, c):
    """Mobile signal, full: the right triangle Android draws (four bars' worth)."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.08, y2 - s * 0.08), (x2 - s * 0.08, y1 + s * 0.08), (x2 - s * 0.08, y2 - s * 0.08)], fill=c)


def _wifi_filled(d, b, c):
    """Wi-Fi, full: a filled fan standing on its point (Android 12+)."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, by = (x1 + x2) / 2, y2 - s * 0.1
    r = s * 0.62
    d.pieslice((cx - r, by - r, cx + r, by + r), 225, 315, fill=c)


def _battery(d, b, c):
    """A full battery standing upright, with its terminal."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    w = s * 0.52
    d.rectangle((cx - s * 0.13, y1 + s * 0.02, cx + s * 0.13, y1 + s * 0.12), fill=c)
    d.rounded_rectangle((cx - w / 2, y1 + s * 0.1, cx + w / 2, y2 - s * 0.02), radius=max(1, int(s * 0.08)), fill=c)


def _dnd(d, b, c):
    """Do Not Disturb: a disc with a bar across (a "no entry" sign)."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = s * 0.38
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=c)
    h = max(2, s * 0.08)
    d.rectangle((cx - r * 0.6, cy - h, cx + r * 0.6, cy + h), fill=_knockout(c))


def _dark_theme(d, b, c):
    """Dark theme: a circle half filled (the contrast symbol)."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = s * 0.36
    d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=c, width=_lw(s))
    d.pieslice((cx - r, cy - r, cx + r, cy + r), 90, 270, fill=c)


def _knockout(c: Color) -> Color:
    """A colour that reads against ``c`` (for a glyph cut out of a filled shape)."""
    return (255, 255, 255) if sum(c) < 384 else (40, 40, 44)


def _shift(d, b, c, filled=False):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx = (x1 + x2) / 2
    pts = [(cx, y1 + s * 0.16), (x2 - s * 0.16, y1 + s * 0.52), (cx + s * 0.15, y1 + s * 0.52),
           (cx + s * 0.15, y2 - s * 0.18), (cx - s * 0.15, y2 - s * 0.18), (cx - s * 0.15, y1 + s * 0.52),
           (x1 + s * 0.16, y1 + s * 0.52)]
    if filled:
        d.polygon(pts, fill=c)
    else:
        d.polygon(pts, outline=c, width=_lw(s))


def _backspace(d, b, c):
    """Material's backspace: a tag pointing left with an x cut into it."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    top, bot, mid = y1 + s * 0.24, y2 - s * 0.24, (y1 + y2) / 2
    left, notch, right = x1 + s * 0.08, x1 + s * 0.34, x2 - s * 0.1
    lw = _lw(s)
    d.polygon([(left, mid), (notch, top), (right, top), (right, bot), (notch, bot)], outline=c, width=lw)
    cx, r = (notch + right) / 2 + s * 0.02, s * 0.12
    d.line([(cx - r, mid - r), (cx + r, mid + r)], fill=c, width=lw)
    d.line([(cx - r, mid + r), (cx + r, mid - r)], fill=c, width=lw)


def _enter(d, b, c):
    """The return key: down, then left, with an arrow head."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s) + 1
    right, bottom, left = x2 - s * 0.22, y1 + s * 0.62, x1 + s * 0.22
    d.line([(right, y1 + s * 0.26), (right, bottom), (left, bottom)], fill=c, width=lw)
    d.line([(left, bottom), (left + s * 0.16, bottom - s * 0.16)], fill=c, width=lw)
    d.line([(left, bottom), (left + s * 0.16, bottom + s * 0.16)], fill=c, width=lw)


def _send(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    d.polygon([(x1 + s * 0.16, y1 + s * 0.18), (x2 - s * 0.12, (y1 + y2) / 2), (x1 + s * 0.16, y2 - s * 0.18),
               (x1 + s * 0.24, (y1 + y2) / 2)], fill=c)


def _emoji(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = s * 0.36
    lw = _lw(s)
    d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=c, width=lw)
    e = max(1.5, s * 0.05)
    for dx in (-0.13, 0.13):
        d.ellipse((cx + s * dx - e, cy - s * 0.1 - e, cx + s * dx + e, cy - s * 0.1 + e), fill=c)
    d.arc((cx - s * 0.2, cy - s * 0.16, cx + s * 0.2, cy + s * 0.22), 20, 160, fill=c, width=lw)


def _keyboard(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    d.rounded_rectangle((x1 + s * 0.1, y1 + s * 0.26, x2 - s * 0.1, y2 - s * 0.26), radius=int(s * 0.06), outline=c, width=lw)
    k = max(1.5, s * 0.04)
    for j in (0.4, 0.52):
        for i in range(5):
            px = x1 + s * (0.25 + 0.125 * i)
            d.rectangle((px - k, y1 + s * j - k, px + k, y1 + s * j + k), fill=c)
    d.line([(x1 + s * 0.34, y1 + s * 0.64), (x2 - s * 0.34, y1 + s * 0.64)], fill=c, width=lw)


def _clipboard(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    d.rounded_rectangle((x1 + s * 0.22, y1 + s * 0.18, x2 - s * 0.22, y2 - s * 0.12), radius=int(s * 0.05), outline=c, width=lw)
    d.rounded_rectangle((x1 + s * 0.36, y1 + s * 0.1, x2 - s * 0.36, y1 + s * 0.26), radius=int(s * 0.03), fill=c)


def _palette(d, b, c):
    x1, y1, x2, y2 = b
    s = x2 - x1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = s * 0.36
    d.ellipse((cx - r, cy - r, cx + r, cy + r), outline=c, width=_lw(s))
    e = max(1.5, s * 0.055)
    for ax, ay in ((-0.16, -0.06), (-0.04, -0.2), (0.14, -0.12), (-0.14, 0.12)):
        d.ellipse((cx + s * ax - e, cy + s * ay - e, cx + s * ax + e, cy + s * ay + e), fill=c)


def _lens(d, b, c):
    """Google Lens: a rounded square's corners around a dot."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    lw = _lw(s)
    box = (x1 + s * 0.18, y1 + s * 0.18, x2 - s * 0.18, y2 - s * 0.18)
    d.rounded_rectangle(box, radius=int(s * 0.16), outline=c, width=lw)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = s * 0.1
    d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=c)


def _google_g(d, b, c):
    """Google's four-colour "G" (the search bar's logo; ignores ``c``)."""
    x1, y1, x2, y2 = b
    s = x2 - x1
    box = (x1 + s * 0.14, y1 + s * 0.14, x2 - s * 0.14, y2 - s * 0.14)
    w = max(2, int(s * 0.15))
    for start, end, color in ((-40, 45, (66, 133, 244)), (45, 135, (52, 168, 83)), (135, 210, (251, 188, 5)),
                              (210, 320, (234, 67, 53))):
        d.arc(box, start, end, fill=color, width=w)
    cy = (y1 + y2) / 2
    d.rectangle(((x1 + x2) / 2, cy - w / 2, x2 - s * 0.14, cy + w / 2), fill=(66, 133, 244))


ICONS: dict[str, Callable[[ImageDraw.ImageDraw, Box, Color], None]] = {
    "back": lambda d, b, c: _arrow(d, b, c, math.pi),
    "forward": lambda d, b, c: _arrow(d, b, c, 0),
    "up": lambda d, b, c: _arrow(d, b, c, -math.pi / 2),
    "down": lambda d, b, c: _arrow(d, b, c, math.pi / 2),
    "left": lambda d, b, c: _arrow(d, b, c, math.pi),
    "right": lambda d, b, c: _arrow(d, b, c, 0),
    "chevron_right": lambda d, b, c: _chevron(d, b, c, 0),
    "chevron_down": lambda d, b, c: _chevron(d, b, c, math.pi / 2),
    "add": _plus,
    "close": _close,
    "search": _search,
    "more": _more,
    "menu": _menu,
    "delete": _trash,
    "edit": _edit,
    "check": _check,
    "mic": _mic,
    "record": lambda d, b, c: _circle_glyph(d, b, c, filled=True),
    "stop": _stop,
    "play": _play,
    "pause": _pause,
    "folder": _folder,
    "file": _file,
    "person": _person,
    "settings": _gear,
    "message": _bubble,
    "phone": _phone,
    "star": _star,
    "sun": _sun,
    "moon": _moon,
    "wifi": _wifi,
    "bluetooth": _bluetooth,
    "flashlight": _bolt,
    "plane": _plane,
    "clock": _clock,
    "timer": _timer,
    "globe": _globe,
    "note": _note,
    "recipe": _pot,
    "wallet": _wallet,
    "shield": _shield,
    "bell": _bell,
    "download": _download,
    "info": _info,
    "recents": _square,
    "nav_back": _triangle_back,
    "nav_back_ime": lambda d, b, c: _chevron(d, b, c, math.pi / 2),
    "signal": _signal,
    "wifi_filled": _wifi_filled,
    "battery": _battery,
    "dnd": _dnd,
    "dark_theme": _dark_theme,
    "shift": _shift,
    "shift_on": lambda d, b, c: _shift(d, b, c, filled=True),
    "backspace": _backspace,
    "enter": _enter,
    "send": _send,
    "emoji": _emoji,
    "keyboard": _keyboard,
    "clipboard": _clipboard,
    "palette": _palette,
    "lens": _lens,
    "google": _google_g,
    "home": _home_circle,
    "apps": _grid,
    "lock": _lock,
    "sd": _sd,
    "calendar": _calendar,
    "share": _share,
    "circle": _circle_glyph,
}


def draw_icon(d: ImageDraw.ImageDraw, name: str, box: Box, color: Color) -> None:
    """Draw icon ``name`` inside ``box``; unknown names draw a circle."""
    ICONS.get(name, _circle_glyph)(d, box, color)
