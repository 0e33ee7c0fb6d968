"""The interruption lexicon (``data/interruption/<language>.yaml``, or a user's file): term
weights for scoring overlay text. Button roles are not here: they are the one
shared vocabulary of :mod:`ttir.core.lexicon` (``ttir/core/data/roles``)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Optional

from diagnosers.signals.data import DATA_DIR, load_builtin_yaml, load_yaml
from diagnosers.signals.text import normalize
from ttir.core.lexicon import PhraseIndex, vocabulary


def flat(text: str) -> str:
    """Normalised, with hyphens read as spaces ("limited-time" = "limited time")."""
    return normalize(text).replace("-", " ")


class Lexicon:
    """Weighted interruption terms; button roles come from the shared vocabulary."""

    def __init__(self, data: dict, source: str = "lexicon"):
        terms = data.get("terms")
        if not isinstance(terms, dict) or not terms:
            raise ValueError(f"{source}: key 'terms' must be a non-empty mapping of phrase -> weight, got {terms!r}")
        extra = sorted(set(data) - {"terms"})
        if extra:
            raise ValueError(f"{source}: unknown key(s) {', '.join(extra)}; a lexicon file holds only 'terms' "
                             "(button roles are one shared vocabulary: ttir/core/data/roles)")
        self.source = source
        self.terms: dict[str, float] = {}
        for phrase, weight in terms.items():
            try:
                w = float(weight)
            except (TypeError, ValueError):
                raise ValueError(f"{source}: terms.{phrase}: weight must be a number, got {weight!r}") from None
            if not 0.0 <= w <= 1.0:
                raise ValueError(f"{source}: terms.{phrase}: weight {w} must be within 0..1")
            self.terms[flat(str(phrase))] = w
        # longest terms first; boundaries keep "ad" out of "add" (CJK terms match anywhere). A screen's
        # text is matched only against the terms whose first word it holds (thousands of terms, ten
        # languages), each compiled when a screen first holds that word: compiling all ~4,400 up front
        # was half a CPU-second of every guarded process's start-up
        self._ordered: list[str] = sorted(self.terms, key=len, reverse=True)
        self._index = PhraseIndex(self._ordered)

    def hits(self, texts: list[str]) -> dict[str, float]:
        """Terms found in ``texts`` (each counted once, longest first) with their weights."""
        blob = " | ".join(flat(t) for t in texts if t)
        return {self._ordered[i]: self.terms[self._ordered[i]] for i in self._index.matching(blob)}

    @property
    def _term_res(self) -> list[tuple[str, re.Pattern[str]]]:
        """Every term with its pattern, longest first (compiles them all): the plain scan the
        first-word index must agree with."""
        return [(t, self._index.pattern(i)) for i, t in enumerate(self._ordered)]

    def role(self, label: str) -> Optional[str]:
        """The role of a button label in the shared vocabulary (None when unknown)."""
        return vocabulary().phrase_role(label)

    def is_term(self, word: str) -> bool:
        return word in self.terms


@lru_cache(maxsize=8)
def load_lexicon(path: Optional[str] = None) -> Lexicon:
    """The built-in lexicon (every language's file merged), or the YAML file at ``path``
    (which replaces it)."""
    if path:
        return Lexicon(load_yaml(Path(path)), source=str(path))
    terms: dict[str, float] = {}
    folder = DATA_DIR / "interruption"
    for f in sorted(folder.glob("*.yaml")):
        for phrase, weight in (load_builtin_yaml(f).get("terms") or {}).items():
            terms[str(phrase)] = max(float(weight), terms.get(str(phrase), 0.0))
    return Lexicon({"terms": terms}, source=str(folder))
