"""Text normalisation shared by the diagnosers: tokens, light stemming, goal
keywords, phrase matching and quoted targets in a step's summary."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

from diagnosers.signals.data import builtin, lower_set

_HYPHENS = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201b\u2032"), "'")
_DQUOTES = dict.fromkeys(map(ord, "\u201c\u201d\u201e\u00ab\u00bb"), '"')
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# anchored at a run's start: unanchored, a long run without a hyphen was retried from each of its
# characters (quadratic: one 10,000-letter string took a second)
_COMPOUND = re.compile(r"(?<![a-z0-9])[a-z0-9]+(?:-[a-z0-9]+)+")
# double quotes anywhere; single quotes only around words ("don't tap the user's row" quotes nothing)
_QUOTED = re.compile(r"\"([^\"]{1,80})\"|(?:^|(?<=[\s(\[]))'([^']{2,80})'(?=$|[\s.,;:!?)\]])")
_DIGITS = re.compile(r"\d")


def normalize(text: str) -> str:
    """NFKC, case-folded, typographic quotes and hyphens made ASCII, whitespace collapsed."""
    if not text:
        return ""
    t = unicodedata.normalize("NFKC", text).translate(_HYPHENS).translate(_QUOTES).translate(_DQUOTES)
    # Turkish dotted capital I: casefold() makes "i" + a combining dot, which no term has
    return " ".join(t.replace("İ", "i").casefold().split())


def stem(word: str) -> str:
    """A deliberately small stemmer: plural / gerund / past endings."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "sses")):
                continue
            word = word[: len(word) - len(suffix)] + repl
            break
    # "delete" / "deleted" / "deletes" all end up as "delet"
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Word tokens of ``text``; hyphenated compounds also yield their joined form
    ("Wi-Fi" -> wi, fi, wifi) and a long digit run its digits ("+1 392-074" -> 1392074)."""
    t = normalize(text)
    out = _WORD.findall(t)
    out.extend(m.replace("-", "") for m in _COMPOUND.findall(t))
    digits = "".join(_DIGITS.findall(t))
    if len(digits) >= 6 and digits not in out:
        out.append(digits)
    return out


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    d = builtin("stopwords")
    return lower_set(d.get("function_words")) | lower_set(d.get("verbs"))


def content_words(text: str) -> set[str]:
    """Stemmed tokens of ``text`` without stopwords and one-letter tokens."""
    stop = _stopwords()
    return {stem(w) for w in words(text) if w not in stop and len(w) > 1}


def keywords(texts: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for t in texts:
        if t:
            out |= content_words(t)
    return out


def digits_of(text: str) -> str:
    return "".join(_DIGITS.findall(text or ""))


def contains_phrase(haystack: str, phrase: str) -> bool:
    """Whole-word, normalised containment of ``phrase`` in ``haystack``."""
    h, p = normalize(haystack), normalize(phrase)
    if not p:
        return False
    return re.search(r"(?<![a-z0-9])" + re.escape(p) + r"(?![a-z0-9])", h) is not None


def quoted(text: str) -> list[str]:
    """Strings in double (or single, at least 2 chars) quotes: an explicit target."""
    t = normalize(text)
    return [a or b for a, b in _QUOTED.findall(t)]


def same_text(a: str, b: str) -> bool:
    """Equal after normalisation; ids compare with '_' read as a space."""
    na, nb = normalize(a).replace("_", " "), normalize(b).replace("_", " ")
    return bool(na) and na == nb


def text_landed(typed: str, value: str) -> bool:
    """Whether typed text shows in a field value: exact normalised containment, or the
    same digits for phone-number-like input (fields may format numbers)."""
    t, v = normalize(typed), normalize(value)
    if not t:
        return True
    if t in v:
        return True
    dt = digits_of(t)
    return len(dt) >= 5 and len(dt) >= 0.6 * len(t.replace(" ", "")) and dt in digits_of(v)
