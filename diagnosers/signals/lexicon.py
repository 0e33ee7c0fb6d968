"""The interruption lexicon (``data/interruption/<language>.yaml``, or a user's file): term
weights for scoring overlay text. Button roles are not here: they are the one
shared vocabulary of :mod:`ttir.core.lexicon` (``ttir/core/data/roles``)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet, Iterable, Optional

from diagnosers.signals.data import DATA_DIR, load_builtin_yaml, load_yaml
from diagnosers.signals.text import normalize
from ttir.core.lexicon import CJK, term_pattern, vocabulary


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
        # longest terms first; boundaries keep "ad" out of "add" (CJK terms match anywhere).
        # Each term is keyed by its first word so that a screen's text is matched only
        # against the terms whose first word it holds (thousands of terms, ten languages);
        # a term's pattern is compiled when a screen first holds that word — compiling all
        # ~4,400 up front was half a CPU-second of every guarded process's start-up
        self._ordered: list[str] = sorted(self.terms, key=len, reverse=True)
        self._patterns: list[Optional[re.Pattern[str]]] = [None] * len(self._ordered)
        self._by_first: dict[str, list[int]] = {}  # first word -> positions in _ordered
        self._anywhere: list[int] = []  # CJK terms: looked up as substrings
        for i, t in enumerate(self._ordered):
            first = _first_word(t)
            if first is None:
                self._anywhere.append(i)
            else:
                self._by_first.setdefault(first, []).append(i)

    def hits(self, texts: list[str]) -> dict[str, float]:
        """Terms found in ``texts`` (each counted once, longest first) with their weights."""
        blob = " | ".join(flat(t) for t in texts if t)
        candidates = {i for w in set(_WORD.findall(blob)) for i in self._by_first.get(w, ())}
        candidates.update(i for i in self._anywhere if self._ordered[i] in blob)
        found: dict[str, float] = {}
        for i in sorted(candidates):
            term = self._ordered[i]
            if self._pattern(i).search(blob):
                found[term] = self.terms[term]
        return found

    @property
    def _term_res(self) -> list[tuple[str, re.Pattern[str]]]:
        """Every term with its pattern, longest first (compiles them all): the plain scan the
        first-word index must agree with."""
        return [(t, self._pattern(i)) for i, t in enumerate(self._ordered)]

    def _pattern(self, i: int) -> re.Pattern[str]:
        rx = self._patterns[i]
        if rx is None:  # two threads may both compile it: the same pattern either way
            rx = self._patterns[i] = term_pattern(self._ordered[i])
        return rx

    def role(self, label: str) -> Optional[str]:
        """The role of a button label in the shared vocabulary (None when unknown)."""
        return vocabulary().phrase_role(label)

    def is_term(self, word: str) -> bool:
        return word in self.terms


class PhraseSet:
    """Phrases matched as :func:`~ttir.core.lexicon.term_pattern` matches them (whole words; CJK
    anywhere), looked up by their first word: a text is searched only with the phrases whose
    first word it holds, and a phrase's pattern is compiled when a text first holds that word.
    Python's ``re`` tries an alternation of hundreds of phrases at every position of a text,
    which is slower than the phrases one by one; the index skips nearly all of them."""

    def __init__(self, terms: Iterable[str]):
        self.terms: tuple[str, ...] = tuple(terms)
        self._patterns: list[Optional[re.Pattern[str]]] = [None] * len(self.terms)
        self._by_first: dict[str, list[int]] = {}
        self._anywhere: list[int] = []  # CJK phrases: looked up as substrings
        for i, t in enumerate(self.terms):
            first = _first_word(t)
            if first is None:
                self._anywhere.append(i)
            else:
                self._by_first.setdefault(first, []).append(i)

    def __len__(self) -> int:
        return len(self.terms)

    def found_in(self, text: str, words: Optional[AbstractSet[str]] = None) -> bool:
        """Whether any phrase occurs in ``text`` (already flattened, :func:`flat`).

        Args:
            text: the text searched.
            words: its words (``words_of(text)``), when the caller searches it with several sets.

        Returns:
            True when one phrase matches.
        """
        words = words_of(text) if words is None else words
        for w in words:
            for i in self._by_first.get(w, ()):
                if self._pattern(i).search(text):
                    return True
        return any(self.terms[i] in text and self._pattern(i).search(text) for i in self._anywhere)

    def _pattern(self, i: int) -> re.Pattern[str]:
        rx = self._patterns[i]
        if rx is None:
            rx = self._patterns[i] = term_pattern(self.terms[i])
        return rx


def words_of(text: str) -> frozenset[str]:
    """The words of a text as :class:`PhraseSet` and :class:`Lexicon` index their phrases."""
    return frozenset(_WORD.findall(text))


_WORD = re.compile(r"[^\W_]+")


def _first_word(term: str) -> Optional[str]:
    """The first word of a Latin-script term (a screen without it cannot hold the term);
    None for CJK terms, which match anywhere and are looked up as substrings."""
    if CJK.search(term):
        return None
    m = _WORD.search(term)
    return m.group(0) if m else None


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
