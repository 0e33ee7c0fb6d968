"""Display metrics (dp/sp to px) and cached fonts with text measurement."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from PIL import ImageFont

BASE_DPI = 420


@dataclass(frozen=True)
class Metrics:
    """How dp and sp map to pixels for one screen configuration."""

    width: int
    height: int
    dpi: float = BASE_DPI
    font_scale: float = 1.0

    @property
    def px_per_dp(self) -> float:
        return self.dpi / 160.0

    def dp(self, v: float) -> int:
        return int(round(v * self.px_per_dp))

    def sp(self, v: float) -> int:
        return max(1, int(round(v * self.px_per_dp * self.font_scale)))

    @property
    def width_dp(self) -> float:
        return self.width / self.px_per_dp


# Android's UI font and its fallback for the scripts it lacks (subsets: benchmark/ui/fontbuild.py)
UI_FONT = "Roboto-Regular.ttf"
FALLBACK_FONT = "DroidSansFallback-subset.ttf"


@lru_cache(maxsize=1)
def _coverage() -> frozenset[int]:
    """The code points the UI font holds."""
    data = json.loads(resources.files("benchmark.ui").joinpath("fonts/coverage.json").read_text(encoding="utf-8"))
    return frozenset(p for a, b in data[UI_FONT] for p in range(a, b + 1))


@lru_cache(maxsize=512)
def _face(name: str, px: int) -> ImageFont.FreeTypeFont:
    path = resources.files("benchmark.ui").joinpath(f"fonts/{name}")
    return ImageFont.truetype(str(path), size=max(4, int(px)))


@lru_cache(maxsize=32768)
def runs(value: str) -> tuple[tuple[str, str], ...]:
    """``value`` cut into runs of one font each: Roboto, and the fallback for the
    characters Roboto lacks (Chinese, arrows), as Android falls back glyph by glyph."""
    cover = _coverage()
    out: list[tuple[str, str]] = []
    for c in value:
        name = UI_FONT if ord(c) in cover or c in "\n\t" else FALLBACK_FONT
        if out and out[-1][1] == name:
            out[-1] = (out[-1][0] + c, name)
        else:
            out.append((c, name))
    return tuple(out)


def font(px: int, value: str = "") -> ImageFont.FreeTypeFont:
    """The font of ``value`` at ``px`` pixels when one font draws all of it: Roboto, or the
    fallback for a string wholly in a script Roboto lacks (bold is drawn with a stroke)."""
    r = runs(value) if value else ()
    return _face(r[0][1] if len(r) == 1 else UI_FONT, px)


def face(name: str, px: int) -> ImageFont.FreeTypeFont:
    return _face(name, px)


@lru_cache(maxsize=65536)
def text_width(value: str, px: int) -> int:
    return int(round(sum(_face(name, px).getlength(chunk) for chunk, name in runs(value))))


def line_height(px: int) -> int:
    return int(round(px * 1.3))


@lru_cache(maxsize=16384)
def wrap(value: str, px: int, max_width: int, max_lines: int = 0) -> tuple[str, ...]:
    """Greedy word wrap; the last allowed line is ellipsised when text remains."""
    if max_width <= 0:
        return (value,)
    lines: list[str] = []
    for para in value.split("\n"):
        words = para.split(" ")
        cur = ""
        for w in words:
            cand = w if not cur else cur + " " + w
            if text_width(cand, px) <= max_width or not cur:
                cur = cand
            else:
                lines.append(cur)
                cur = w
        lines.append(cur)
    # hard-break single words wider than the line
    out: list[str] = []
    for ln in lines:
        while text_width(ln, px) > max_width and len(ln) > 1:
            cut = len(ln)
            while cut > 1 and text_width(ln[:cut], px) > max_width:
                cut -= max(1, (cut // 8))
            out.append(ln[:cut])
            ln = ln[cut:]
        out.append(ln)
    if max_lines and len(out) > max_lines:
        # Android's end ellipsis (TextUtils.TruncateAt.END): the last line keeps as much of
        # the rest as fits, cut by character, then "…"
        rest = " ".join(out[max_lines - 1:])
        if text_width(rest + "…", px) > max_width:
            lo, hi = 0, len(rest)
            while lo < hi:  # the longest prefix that fits with the ellipsis
                mid = (lo + hi + 1) // 2
                if text_width(rest[:mid].rstrip() + "…", px) <= max_width:
                    lo = mid
                else:
                    hi = mid - 1
            rest = rest[:lo].rstrip()
        out = out[: max_lines - 1] + [rest + "…"]
    return tuple(out)
