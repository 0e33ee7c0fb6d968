"""The interruption lexicon (``data/interruption.yaml`` or a user's file): term
weights for scoring overlay text, and button-role phrases."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

from diagnosers.signals.data import DATA_DIR, load_yaml
from diagnosers.signals.text import normalize

ROLES = ("dismiss", "engage", "neutral")


def _flat(text: str) -> str:
    """Normalised, with hyphens read as spaces ("limited-time" = "limited time")."""
    return normalize(text).replace("-", " ")


class Lexicon:
    """Weighted interruption terms and button-role phrases."""

    def __init__(self, data: dict, source: str = "lexicon"):
        terms = data.get("terms")
        roles = data.get("button_roles")
        if not isinstance(terms, dict) or not terms:
            raise ValueError(f"{source}: key 'terms' must be a non-empty mapping of phrase -> weight, got {terms!r}")
        if not isinstance(roles, dict):
            raise ValueError(f"{source}: key 'button_roles' must be a mapping of role -> list of phrases, got {roles!r}")
        self.source = source
        self.terms: dict[str, float] = {}
        for phrase, weight in terms.items():
            try:
                w = float(weight)
            except (TypeError, ValueError):
                raise ValueError(f"{source}: terms.{phrase}: weight must be a number, got {weight!r}") from None
            if not 0.0 <= w <= 1.0:
                raise ValueError(f"{source}: terms.{phrase}: weight {w} must be within 0..1")
            self.terms[_flat(str(phrase))] = w
        self.roles: dict[str, str] = {}
        for role, phrases in roles.items():
            if role not in (*ROLES, "acknowledge"):
                raise ValueError(f"{source}: button_roles.{role}: unknown role; expected one of dismiss, engage, neutral, acknowledge")
            for p in phrases or []:
                self.roles[_flat(str(p))] = role
        # longest phrases first so "don't allow" wins over "allow"
        self._term_res = [(t, re.compile(r"(?<![a-z0-9])" + re.escape(t) + r"(?![a-z0-9])"))
                          for t in sorted(self.terms, key=len, reverse=True)]
        self._role_res = [(p, re.compile(r"(?<![a-z0-9])" + re.escape(p) + r"(?![a-z0-9])"))
                          for p in sorted(self.roles, key=len, reverse=True)]

    def hits(self, texts: list[str]) -> dict[str, float]:
        """Terms found in ``texts`` (each counted once) with their weights."""
        blob = " | ".join(_flat(t) for t in texts if t)
        found: dict[str, float] = {}
        for term, rx in self._term_res:
            if rx.search(blob):
                found[term] = self.terms[term]
        return found

    def role(self, label: str) -> Optional[str]:
        """The role phrase matching a button label: an exact match first, then the
        longest phrase inside the label. None when nothing matches."""
        lab = _flat(label).strip(" .!?:")
        if not lab:
            return None
        if lab in self.roles:
            return self.roles[lab]
        for phrase, rx in self._role_res:
            if len(phrase) > 1 and rx.search(lab):
                return self.roles[phrase]
        return None

    def is_term(self, word: str) -> bool:
        return word in self.terms


@lru_cache(maxsize=8)
def load_lexicon(path: Optional[str] = None) -> Lexicon:
    """The built-in lexicon, or the YAML file at ``path`` (which replaces it)."""
    p = Path(path) if path else DATA_DIR / "interruption.yaml"
    return Lexicon(load_yaml(p), source=str(p))
