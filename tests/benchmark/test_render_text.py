"""Cached text drawing is Pillow's ``ImageDraw.text`` pixel for pixel."""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

from benchmark.ui.metrics import font
from benchmark.ui.render import draw_text


def test_cached_text_matches_pillow_pixel_for_pixel():
    rng = random.Random(0)
    plain = Image.new("RGB", (500, 300), (255, 255, 255))
    cached = plain.copy()
    dp, dc = ImageDraw.Draw(plain), ImageDraw.Draw(cached)
    for _ in range(300):  # fractional positions, sizes, colours, bold (stroke) and non-ASCII text
        xy = (rng.uniform(0, 450), rng.uniform(0, 280))
        px = rng.choice([9, 12, 14, 17, 23, 31])
        color = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        text = rng.choice(["Save", "Cancel", "Hello world", "3:45 PM", "Ünïcode ✓", "a\nb"])
        stroke = rng.choice([0, 1])
        dp.text(xy, text, font=font(px, text), fill=color, stroke_width=stroke, stroke_fill=color)
        draw_text(dc, xy, text, px, color, stroke=stroke)
    assert plain.tobytes() == cached.tobytes()
    assert plain.getcolors(1 << 20) is not None and len(plain.getcolors(1 << 20)) > 10  # text was drawn
