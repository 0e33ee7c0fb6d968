"""Display metrics (dp/sp to px) and cached fonts with text measurement."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


@lru_cache(maxsize=256)
def font(px: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """Pillow's bundled scalable font at ``px`` pixels (bold is drawn with a stroke)."""
    return ImageFont.load_default(size=max(4, int(px)))


@lru_cache(maxsize=65536)
def text_width(value: str, px: int) -> int:
    return int(round(font(px).getlength(value)))


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
        last = out[max_lines - 1]
        while last and text_width(last + "…", px) > max_width:
            last = last[:-1]
        out = out[: max_lines - 1] + [last + "…"]
    return tuple(out)
