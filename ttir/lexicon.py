"""Shared UI vocabulary: how buttons on interruptions are worded, by role.

Used by the recoveries (never engage, prefer declining) and by the reference
agents (which model how agents treat pop-ups). Data lives in ttir/data/buttons.yaml.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from ttir.types import UIElement


@lru_cache(maxsize=1)
def button_words() -> dict[str, tuple[str, ...]]:
    import yaml

    data = yaml.safe_load(resources.files("ttir").joinpath("data/buttons.yaml").read_text(encoding="utf-8"))
    return {role: tuple(str(w).lower() for w in words) for role, words in data.items()}


def label(e: UIElement) -> str:
    return (e.text or e.content_desc or "").strip()


def norm(s: str) -> str:
    return " ".join(s.lower().replace("’", "'").split())


def role_of(e: UIElement) -> str:
    """dismiss / engage / neutral, from the button's wording (whole label first)."""
    return _role(norm(label(e)))


@lru_cache(maxsize=4096)
def _role(lab: str) -> str:
    if not lab:
        return "neutral"
    words = button_words()
    for role in ("dismiss", "engage"):
        if lab in (norm(w) for w in words[role]):
            return role
    # inside a longer label only multi-word phrases count ("Start free trial now"); a single
    # word would mislabel ordinary controls ("Search settings", "Open navigation drawer")
    for role in ("engage", "dismiss"):
        for w in words[role]:
            if " " in w and re.search(rf"\b{re.escape(norm(w))}\b", lab):
                return role
    return "neutral"


def dismiss_rank(e: UIElement) -> int:
    """Preference among dismiss buttons (lower first): the lexicon's order."""
    lab = norm(label(e))
    for i, w in enumerate(button_words()["dismiss"]):
        if lab == norm(w):
            return i
    return 100
