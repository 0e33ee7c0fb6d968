"""Words the traps play with: the 24-pair antonym dictionary (visual hallucination,
intent deviation), wrong text for intent deviation, and the launcher packages.

All of it lives in ``perturb/traps/data/``; this module only loads and applies it.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache
from importlib import resources
from typing import Optional

from ttir.core.validation import load_package_yaml


def _read(name: str) -> str:
    return resources.files("perturb.traps").joinpath("data").joinpath(name).read_text(encoding="utf-8")


def _lines(name: str) -> tuple[str, ...]:
    out = []
    for raw in _read(name).splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return tuple(out)


@lru_cache(maxsize=1)
def antonym_pairs() -> tuple[tuple[str, str], ...]:
    """The dictionary's pairs, in file order."""
    data = load_package_yaml(_read("antonyms.yaml")) or {}
    pairs = data.get("pairs")
    where = "perturb/traps/data/antonyms.yaml"
    if not isinstance(pairs, list) or not pairs:
        raise ValueError(f"{where}: key 'pairs' must be a non-empty list of [word, antonym] pairs, got {pairs!r}")
    out = []
    for k, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(w, str) and w.strip() for w in pair)):
            raise ValueError(f"{where}: pairs[{k}]={pair!r} must be a list of two non-empty strings")
        out.append((pair[0].strip(), pair[1].strip()))
    return tuple(out)


@lru_cache(maxsize=1)
def _antonym_map() -> dict[str, str]:
    out: dict[str, str] = {}
    for a, b in antonym_pairs():
        out.setdefault(a.lower(), b)
        out.setdefault(b.lower(), a)
    return out


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    # longest first so "Sign in" wins over "In"-like shorter keys; whole words only
    keys = sorted(_antonym_map(), key=len, reverse=True)
    return re.compile(r"(?<![\w])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])", re.IGNORECASE)


def antonym(word: str) -> Optional[str]:
    """The dictionary antonym of ``word`` (case-insensitive), or None."""
    return _antonym_map().get(word.strip().lower())


def _match_case(template: str, word: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template.islower():
        return word.lower()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def dictionary_words(label: str) -> list[str]:
    """The dictionary words found in ``label`` (lower case, in order)."""
    return [m.group(1).lower() for m in _pattern().finditer(label)]


def swap_antonyms(label: str) -> Optional[str]:
    """``label`` with every dictionary word replaced by its antonym (case kept), or
    None when the label holds no dictionary word."""
    found = False

    def sub(m: re.Match[str]) -> str:
        nonlocal found
        found = True
        return _match_case(m.group(1), _antonym_map()[m.group(1).lower()])

    out = _pattern().sub(sub, label)
    return out if found else None


def permute(label: str, rng: random.Random) -> str:
    """A character-level permutation of ``label``: the characters of each word are
    shuffled (spaces stay put so the label keeps its shape). Returns ``label`` itself
    only when no permutation can differ (e.g. "OK!" would, "aa" cannot)."""
    words = label.split(" ")
    movable = [i for i, w in enumerate(words) if len(set(w)) > 1]
    if not movable:
        return label
    for _ in range(8):
        out = list(words)
        for i in movable:
            chars = list(words[i])
            rng.shuffle(chars)
            out[i] = "".join(chars)
        if out != words:
            return " ".join(out)
    # every shuffle came back unchanged (tiny words): rotate one word deterministically
    i = movable[0]
    out = list(words)
    out[i] = words[i][1:] + words[i][0]
    return " ".join(out)


def hallucinate(label: str, rng: random.Random) -> tuple[str, str]:
    """A misleading replacement for ``label`` and how it was made: ``antonym`` when
    the dictionary knows a word in it, else ``permutation``."""
    swapped = swap_antonyms(label)
    if swapped is not None and swapped != label:
        return swapped, "antonym"
    return permute(label, rng), "permutation"


@lru_cache(maxsize=1)
def wrong_texts() -> tuple[str, ...]:
    return _lines("wrong_texts.txt")


def wrong_text(original: str, rng: random.Random, mode: str = "random") -> tuple[str, str]:
    """Text to type instead of ``original``: a dictionary string or random characters
    of the same kinds (digits stay digits, letters stay letters). Returns (text, mode)."""
    if mode not in ("random", "dictionary", "characters"):
        raise ValueError(f"mode={mode!r} is not a wrong-text mode; expected random, dictionary or characters")
    if mode == "random":
        mode = rng.choice(("dictionary", "characters"))
    if mode == "dictionary":
        pool = [t for t in wrong_texts() if t.lower() != original.strip().lower()]
        return rng.choice(pool), mode
    out = []
    for ch in original:
        if ch.isdigit():
            out.append(rng.choice("0123456789"))
        elif ch.isalpha():
            letters = "abcdefghijklmnopqrstuvwxyz"
            c = rng.choice(letters)
            out.append(c.upper() if ch.isupper() else c)
        else:
            out.append(ch)
    text = "".join(out)
    if text == original:  # e.g. punctuation only, or the dice agreed: append a stray character
        text = original + rng.choice("xqz")
    return text, mode


@lru_cache(maxsize=1)
def launcher_packages() -> frozenset[str]:
    return frozenset(_lines("launchers.txt"))
