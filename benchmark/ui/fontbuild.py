"""Rebuild the bundled font subsets in ``benchmark/ui/fonts/`` (a developer tool).

    python -m benchmark.ui.fontbuild [--roboto PATH] [--fallback PATH]

Android draws its UI in Roboto and falls back to Droid Sans Fallback (Noto CJK on
newer builds) for the scripts Roboto lacks; the simulated phone does the same with
two subsets of those fonts (both Apache 2.0, from Debian's ``fonts-roboto-unhinted``
and ``fonts-droid-fallback``):

- Roboto Regular: Latin (basic, Latin-1, extended A/B), general punctuation and
  currency — every European string the UI can show;
- Droid Sans Fallback: the characters of every string table in
  ``benchmark/data/locale/`` (and of the keyboard's keys) that Roboto lacks (Chinese), plus arrows and check marks.

It also writes ``coverage.json`` (the code points each subset holds), which the
renderer uses to pick a font per string without fontTools at run time. Needs
``fontTools`` (``pip install fonttools``); re-run it after adding strings to a
table in a script Roboto does not cover (a test names the missing characters).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

FONTS = Path(__file__).parent / "fonts"
DATA = Path(__file__).resolve().parent.parent / "data"
ROBOTO_SRC = "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf"
FALLBACK_SRC = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"
ROBOTO_OUT = "Roboto-Regular.ttf"
FALLBACK_OUT = "DroidSansFallback-subset.ttf"

# Roboto's share: Latin, Latin-1, Latin Extended-A/B, Greek, general punctuation, currency, letterlike
# symbols, mathematical operators (what of them Roboto has)
ROBOTO_RANGES = ((0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x214F),
                 (0x2200, 0x22FF))
# always in the fallback: arrows, circled digits, check marks, CJK punctuation, full-width forms
FALLBACK_RANGES = ((0x2190, 0x21FF), (0x2460, 0x2473), (0x2713, 0x2718), (0x3000, 0x303F), (0xFF01, 0xFF5E))


def locale_characters() -> set[int]:
    """Every character used in a string table or on a keyboard key."""
    out: set[int] = set()
    for path in [*sorted((DATA / "locale").glob("*.yaml")), DATA / "keyboard.yaml"]:
        out.update(ord(c) for c in path.read_text(encoding="utf-8"))
    return out


def _ranges(points: set[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for p in sorted(points):
        if out and p == out[-1][1] + 1:
            out[-1][1] = p
        else:
            out.append([p, p])
    return out


def _subset(src: str, dst: Path, wanted: set[int]) -> set[int]:
    from fontTools import subset
    from fontTools.ttLib import TTFont

    have = set(TTFont(src).getBestCmap())
    keep = wanted & have
    options = subset.Options()
    options.hinting = False
    options.layout_features = ["kern", "liga"]
    options.name_IDs = ["*"]  # keep the copyright and licence records
    font = subset.load_font(src, options)
    sub = subset.Subsetter(options)
    sub.populate(unicodes=sorted(keep))
    sub.subset(font)
    subset.save_font(font, str(dst), options)
    return keep


def build(roboto: str = ROBOTO_SRC, fallback: str = FALLBACK_SRC) -> dict[str, list[list[int]]]:
    FONTS.mkdir(exist_ok=True)
    latin = {p for a, b in ROBOTO_RANGES for p in range(a, b + 1)}
    got_latin = _subset(roboto, FONTS / ROBOTO_OUT, latin)
    wanted = {p for p in locale_characters() if p not in got_latin and p >= 0x80}
    wanted |= {p for a, b in FALLBACK_RANGES for p in range(a, b + 1)}
    got_fallback = _subset(fallback, FONTS / FALLBACK_OUT, wanted)
    coverage = {ROBOTO_OUT: _ranges(got_latin), FALLBACK_OUT: _ranges(got_fallback)}
    (FONTS / "coverage.json").write_text(json.dumps(coverage, separators=(",", ":")) + "\n", encoding="utf-8")
    return coverage


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmark.ui.fontbuild", description=__doc__.split("\n\n")[0])
    p.add_argument("--roboto", default=ROBOTO_SRC, help="Roboto-Regular.ttf to subset")
    p.add_argument("--fallback", default=FALLBACK_SRC, help="DroidSansFallbackFull.ttf (or another CJK font) to subset")
    args = p.parse_args(argv)
    cov = build(args.roboto, args.fallback)
    for name, ranges in cov.items():
        size = (FONTS / name).stat().st_size
        print(f"{name}: {sum(b - a + 1 for a, b in ranges)} characters, {size / 1024:.0f} KB")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
