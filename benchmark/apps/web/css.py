"""A tiny CSS subset: rules with tag / ``.class`` / ``#id`` selectors (and
descendant combinations), the cascade by specificity, inline ``style``
attributes, lengths in px/em and colours."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from benchmark.apps.web.dom import Element

Color = tuple[int, int, int]

NAMED_COLORS: dict[str, Color] = {
    "black": (0, 0, 0), "white": (255, 255, 255), "red": (255, 0, 0), "green": (0, 128, 0),
    "blue": (0, 0, 255), "gray": (128, 128, 128), "grey": (128, 128, 128), "lightgray": (211, 211, 211),
    "darkgray": (169, 169, 169), "yellow": (255, 255, 0), "orange": (255, 165, 0), "purple": (128, 0, 128),
    "navy": (0, 0, 128), "teal": (0, 128, 128), "silver": (192, 192, 192), "maroon": (128, 0, 0),
    "lime": (0, 255, 0), "darkgreen": (0, 100, 0), "lightgreen": (144, 238, 144), "crimson": (220, 20, 60),
}

_COMPOUND = re.compile(r"^(?P<tag>[a-zA-Z][a-zA-Z0-9-]*|\*)?(?P<rest>(?:[.#][A-Za-z0-9_-]+)*)$")


@dataclass(frozen=True)
class Compound:
    """``tag#id.class1.class2`` (every part optional)."""

    tag: str = ""
    id: str = ""
    classes: tuple[str, ...] = ()

    def matches(self, el: Element) -> bool:
        if self.tag and self.tag != "*" and el.tag != self.tag:
            return False
        if self.id and el.id != self.id:
            return False
        return all(c in el.classes for c in self.classes)


@dataclass(frozen=True)
class Rule:
    parts: tuple[Compound, ...]  # ancestor ... subject
    specificity: tuple[int, int, int]
    order: int
    declarations: tuple[tuple[str, str], ...]

    def matches(self, el: Element, ancestors: Sequence[Element]) -> bool:
        if not self.parts[-1].matches(el):
            return False
        i = len(ancestors) - 1
        for part in reversed(self.parts[:-1]):
            while i >= 0 and not part.matches(ancestors[i]):
                i -= 1
            if i < 0:
                return False
            i -= 1
        return True


def _compound(text: str) -> Optional[Compound]:
    m = _COMPOUND.match(text)
    if m is None:
        return None
    rest = m.group("rest") or ""
    ids = re.findall(r"#([A-Za-z0-9_-]+)", rest)
    classes = tuple(re.findall(r"\.([A-Za-z0-9_-]+)", rest))
    return Compound(tag=(m.group("tag") or "").lower(), id=ids[0] if ids else "", classes=classes)


def parse_declarations(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for decl in text.split(";"):
        if ":" not in decl:
            continue
        prop, value = decl.split(":", 1)
        value = value.replace("!important", "").strip()
        if prop.strip() and value:
            out.extend(_expand(prop.strip().lower(), value))
    return out


def _expand(prop: str, value: str) -> list[tuple[str, str]]:
    """Shorthands the renderer understands as longhands."""
    if prop in ("margin", "padding"):
        v = value.split()
        top, right, bottom, left = (v * 4)[:4] if len(v) == 1 else (
            (v[0], v[1], v[0], v[1]) if len(v) == 2 else (v[0], v[1], v[2], v[1]) if len(v) == 3 else tuple(v[:4]))
        return [(f"{prop}-top", top), (f"{prop}-right", right), (f"{prop}-bottom", bottom), (f"{prop}-left", left)]
    if prop == "background":
        return [("background-color", value.split()[0])]
    return [(prop, value)]


class StyleSheet:
    """The rules of a page's ``<style>`` blocks."""

    def __init__(self, text: str = ""):
        self.rules: list[Rule] = []
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for order, m in enumerate(re.finditer(r"([^{}]+)\{([^{}]*)\}", text)):
            decls = tuple(parse_declarations(m.group(2)))
            for sel in m.group(1).split(","):
                parts = tuple(_compound(p) for p in sel.replace(">", " ").split())
                if not parts or any(p is None for p in parts):
                    continue  # unsupported selector (pseudo-classes, attributes …): skip the rule
                spec = (sum(bool(p.id) for p in parts), sum(len(p.classes) for p in parts),  # type: ignore[union-attr]
                        sum(bool(p.tag and p.tag != "*") for p in parts))  # type: ignore[union-attr]
                self.rules.append(Rule(parts, spec, order, decls))  # type: ignore[arg-type]

    def declared(self, el: Element, ancestors: Sequence[Element]) -> dict[str, str]:
        """The cascaded declarations of ``el`` (stylesheet by specificity, then inline style)."""
        out: dict[str, str] = {}
        for rule in sorted((r for r in self.rules if r.matches(el, ancestors)), key=lambda r: (r.specificity, r.order)):
            out.update(rule.declarations)
        out.update(parse_declarations(el.attrs.get("style", "")))
        return out


def length(value: Optional[str], font_px: float = 16.0, default: float = 0.0) -> float:
    """A CSS length in CSS px (= dp on a mobile viewport); ``em``/``rem`` scale with the font."""
    if not value:
        return default
    v = value.strip().lower()
    try:
        if v.endswith("px"):
            return float(v[:-2])
        if v.endswith("rem"):
            return float(v[:-3]) * 16.0
        if v.endswith("em"):
            return float(v[:-2]) * font_px
        if v.endswith("pt"):
            return float(v[:-2]) * 4 / 3
        return float(v)
    except ValueError:
        return default


def color(value: Optional[str]) -> Optional[Color]:
    """``#rgb``, ``#rrggbb``, ``rgb(r, g, b)`` or a named colour; None when unknown."""
    if not value:
        return None
    v = value.strip().lower()
    if v in NAMED_COLORS:
        return NAMED_COLORS[v]
    if v.startswith("#") and len(v) in (4, 7):
        h = v[1:] if len(v) == 7 else "".join(ch * 2 for ch in v[1:])
        try:
            return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)
        except ValueError:
            return None
    m = re.match(r"rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)", v)
    if m:
        return int(m.group(1)), int(m.group(2)), int(m.group(3))
    return None
