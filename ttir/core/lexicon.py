"""The one vocabulary of control roles: how dialog and pop-up controls are worded.

Shared by the interference diagnoser (a decline button next to interruption
wording), the recoveries (tap only what dismisses; never engage, never destroy the
task's state) and the reference agents. Data: ``ttir/core/data/roles/<language>.yaml``
(en, zh, es, pt, de, fr, ja, ko, ru, tr) and ``ids.yaml`` (Android's own resource
ids, the same in every language); see the README there.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import AbstractSet, Iterable, Iterator, Literal, Optional, Pattern, get_args

from ttir.core.types import UIElement
from ttir.core.validation import load_package_yaml

# what pressing a control does to the pop-up it belongs to (the labels of the real corpus use the same words)
ControlRole = Literal["dismiss", "engage", "destructive", "neutral", "acknowledge"]
ROLES: tuple[ControlRole, ...] = get_args(ControlRole)
MEMO_LABELS = 4096  # labels whose role is remembered (see RoleVocabulary._memo)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"[^\W_]+")  # a word as PhraseIndex indexes phrases by (a run of letters and digits)


def norm(s: str) -> str:
    """Lower-case, NFKC, typographic apostrophes straightened, whitespace collapsed,
    trailing punctuation dropped ("Not now." = "not now"); Turkish "İ" lower-cases to a
    plain "i" ("İZİN VER" = "izin ver")."""
    s = unicodedata.normalize("NFKC", s).replace("’", "'").replace("‘", "'").replace("İ", "i").lower()
    return " ".join(s.split()).strip(" .!?:…。！？：")


def label(e: UIElement) -> str:
    return (e.text or e.content_desc or "").strip()


class PhraseIndex:
    """Phrases looked up by their first word: a text is searched only with the phrases whose
    first word (a run of letters and digits) it holds — CJK phrases, which match anywhere, only
    when it holds them as a substring — and a phrase's pattern is compiled when a text first
    holds that word. Python's ``re`` tries an alternation of hundreds of phrases at every
    position of a text, which is slower than the phrases one by one; the index skips nearly all.

    A phrase's pattern must match only where its first word stands whole in the text (as
    :func:`term_pattern`'s do, and the inner phrases' of :class:`RoleVocabulary`).

    Args:
        phrases: the phrases, in the order matches are reported.
        patterns: a pattern per phrase (default: :func:`term_pattern`, compiled on first use).
    """

    def __init__(self, phrases: Iterable[str], patterns: Optional[Iterable[Pattern[str]]] = None):
        self.phrases: tuple[str, ...] = tuple(phrases)
        self._patterns: list[Optional[Pattern[str]]] = (list(patterns) if patterns is not None
                                                         else [None] * len(self.phrases))
        self._by_first: dict[str, list[int]] = {}
        self._anywhere: list[int] = []
        for i, phrase in enumerate(self.phrases):
            first = None if CJK.search(phrase) else _WORD.search(phrase)
            if first is None:
                self._anywhere.append(i)
            else:
                self._by_first.setdefault(first.group(0), []).append(i)

    def __len__(self) -> int:
        return len(self.phrases)

    def matching(self, text: str, words: Optional[AbstractSet[str]] = None) -> Iterator[int]:
        """The positions of the phrases found in ``text``, in the index's order.

        Args:
            text: the text searched (normalised as the phrases are).
            words: its words (:func:`words_of`), when the caller searches it with several indexes.

        Returns:
            An iterator over positions in :attr:`phrases`.
        """
        words = words_of(text) if words is None else words
        candidates = {i for w in words for i in self._by_first.get(w, ())}
        candidates.update(i for i in self._anywhere if self.phrases[i] in text)
        return (i for i in sorted(candidates) if self.pattern(i).search(text))

    def found_in(self, text: str, words: Optional[AbstractSet[str]] = None) -> bool:
        """Whether any phrase occurs in ``text`` (see :meth:`matching`)."""
        return next(self.matching(text, words), None) is not None

    def pattern(self, i: int) -> Pattern[str]:
        """The pattern of phrase ``i`` (two threads may both compile it: the same pattern either way)."""
        rx = self._patterns[i]
        if rx is None:
            rx = self._patterns[i] = term_pattern(self.phrases[i])
        return rx


def words_of(text: str) -> frozenset[str]:
    """The words of a text as :class:`PhraseIndex` indexes phrases by (runs of letters and digits)."""
    return frozenset(_WORD.findall(text))


@dataclass(frozen=True)
class RoleVocabulary:
    """Every role phrase of every language, and the role of Android's own ids."""

    exact: dict[str, str]  # normalised phrase -> role
    rank: dict[str, int]  # normalised phrase -> preference within its file's list
    ids: dict[str, str]  # short resource id -> role
    inner: tuple[tuple[str, Pattern[str]], ...]  # phrases that also count inside a longer label, longest first
    agreement: tuple[Pattern[str], ...] = ()  # words of a dialog that asks the user to agree (see roles/README.md)
    # label -> role, remembered: a label no phrase matches whole is searched for every inner
    # phrase of every language (hundreds of patterns), and screens repeat their labels step
    # after step. Bounded: labels are text from screens, and a screen may be hostile.
    _memo: dict[str, Optional[str]] = field(default_factory=dict, compare=False, repr=False)
    _inner_index: Optional[PhraseIndex] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # a label is searched only with the inner phrases whose first word it holds, longest first
        object.__setattr__(self, "_inner_index", PhraseIndex([p for p, _ in self.inner], [rx for _, rx in self.inner]))

    def phrase_role(self, text: str) -> Optional[str]:
        """The role of a label: the whole label first, then the longest phrase inside it
        (phrases of two or more words, or CJK phrases of two or more characters)."""
        try:
            return self._memo[text]
        except KeyError:
            pass
        role = self._phrase_role(text)
        if len(self._memo) >= MEMO_LABELS:
            self._memo.clear()
        self._memo[text] = role
        return role

    def _phrase_role(self, text: str) -> Optional[str]:
        lab = norm(text)
        if not lab:
            return None
        hit = self.exact.get(lab)
        if hit is not None:
            return hit
        first = next(self._inner_index.matching(lab), None)
        return None if first is None else self.exact[self.inner[first][0]]

    def asks_agreement(self, texts: list[str]) -> bool:
        """Does a dialog with these texts ask the user to agree to terms or give consent?"""
        blob = " | ".join(norm(t) for t in texts if t)
        return any(rx.search(blob) for rx in self.agreement)

    def id_role(self, resource_id: str) -> Optional[str]:
        """The role Android's own id gives a control (``button2``: dismiss), None for other ids."""
        if not resource_id:
            return None
        return self.ids.get(resource_id.split("/", 1)[-1].lower())

    def control_role(self, text: str, resource_id: str) -> Optional[str]:
        """The raw role of a control: its label's, else its id's — except that a positive
        button (``button1``) under a label of its own that no phrase knows has no known role.

        Android names a dialog's answer buttons by position, not by what they do: the
        positive one is OK on a notice but "VIEW PLANS" on an ad and "USE THIS FOLDER" on a
        picker, so only its label says whether it closes anything.

        Args:
            text: the control's label (its text, else its description; a button without
                either may carry its id's words, "button1").
            resource_id: its resource id.

        Returns:
            dismiss / engage / destructive / neutral / acknowledge, or None when unknown.
        """
        named = self.phrase_role(text)
        if named is not None:
            return named
        by_id = self.id_role(resource_id)
        if by_id == "acknowledge" and _own_label(text, resource_id):
            return None
        return by_id


def _own_label(text: str, resource_id: str) -> bool:
    """Whether ``text`` is a label of the control's own, not empty and not its id's words."""
    own = norm(text)
    return bool(own) and own != norm(resource_id.split("/", 1)[-1].replace("_", " "))


def _inner_pattern(phrase: str) -> Optional[Pattern[str]]:
    if CJK.search(phrase):
        return re.compile(re.escape(phrase)) if len(phrase) >= 2 else None
    if " " not in phrase:
        return None  # one word inside a longer label would mislabel ordinary controls ("Search settings")
    return re.compile(rf"(?<![\w/.:]){re.escape(phrase)}(?![\w/.])")


def term_pattern(term: str) -> Pattern[str]:
    """Whole-word matching for Latin scripts; CJK terms match anywhere. A ``*`` between
    words stands for any one word ("create a * account": an app's name in between)."""
    if CJK.search(term):
        return re.compile(re.escape(term))
    body = r"\s+".join(r"[^\W_]+" if w == "*" else re.escape(w) for w in term.split())
    return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])")


@lru_cache(maxsize=1)
def vocabulary() -> RoleVocabulary:
    folder = resources.files("ttir.core").joinpath("data/roles")
    exact: dict[str, str] = {}
    where: dict[str, str] = {}
    rank: dict[str, int] = {}
    ids: dict[str, str] = {}
    agreement: list[Pattern[str]] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        data = load_package_yaml(entry.read_text(encoding="utf-8")) or {}
        for role, phrases in data.items():
            if role == "language":
                continue
            if role == "agreement":
                agreement.extend(term_pattern(norm(str(w))) for w in phrases or [])
                continue
            if role not in ROLES:
                raise ValueError(f"ttir/core/data/roles/{entry.name}: {role!r} is not a role; expected one of {', '.join(ROLES)}")
            for i, raw in enumerate(phrases or []):
                if not isinstance(raw, str):
                    raise ValueError(f"ttir/core/data/roles/{entry.name}: {role}: {raw!r} is not a string (quote it: "
                                     "YAML reads no / yes / on / off as booleans)")
                p = norm(raw)
                if entry.name == "ids.yaml":
                    ids[p] = role
                    continue
                if p in exact and exact[p] != role:
                    raise ValueError(f"ttir/core/data/roles: {raw!r} is {exact[p]} in {where[p]} and {role} in {entry.name}; "
                                     "a phrase has one role")
                exact[p] = role
                where.setdefault(p, entry.name)
                rank.setdefault(p, i)
    inner = tuple((p, rx) for p in sorted(exact, key=len, reverse=True) if (rx := _inner_pattern(p)) is not None)
    return RoleVocabulary(exact=exact, rank=rank, ids=ids, inner=inner, agreement=tuple(agreement))


def control_role(e: UIElement) -> Optional[str]:
    """The raw role of a control (``acknowledge`` included), from its label, else its id."""
    return vocabulary().control_role(label(e), e.resource_id)


def role_of(e: UIElement) -> str:
    """dismiss / engage / destructive / neutral. An acknowledge control (OK, Got it)
    counts as dismiss here: callers that know whether a decline exists beside it
    resolve it themselves (:func:`resolve_roles`)."""
    return _resolved(control_role(e), has_decline=False)


def resolve_roles(raw: list[Optional[str]], *, unnamed: str = "neutral", asks_agreement: bool = False) -> list[str]:
    """Roles for the controls of one dialog: acknowledge dismisses when it is the only
    way out and engages when a decline exists or the dialog asks the user to agree
    (there OK is consent); an unknown control gets ``unnamed``."""
    engages = "dismiss" in raw or asks_agreement
    return [_resolved(r, engages, unnamed) for r in raw]


def _resolved(r: Optional[str], has_decline: bool, unnamed: str = "neutral") -> str:
    if r == "acknowledge":
        return "engage" if has_decline else "dismiss"
    return r or unnamed


def dismiss_rank(e: UIElement) -> int:
    """Preference among dismiss controls (lower first): their order in the vocabulary."""
    v = vocabulary()
    lab = norm(label(e))
    if lab in v.rank and v.exact.get(lab) in ("dismiss", "acknowledge"):
        return v.rank[lab] + (50 if v.exact[lab] == "acknowledge" else 0)
    return 100


@lru_cache(maxsize=1)
def loading_words() -> tuple[str, ...]:
    """The words of a screen that is still loading (``ttir/core/data/loading.yaml``), lower case."""
    data = load_package_yaml(resources.files("ttir.core").joinpath("data/loading.yaml").read_text(encoding="utf-8")) or {}
    words = data.get("loading_words")
    if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
        raise ValueError(f"ttir/core/data/loading.yaml: loading_words must be a list of words, got {words!r}")
    return tuple(norm(w) for w in words)


def button_words() -> dict[str, tuple[str, ...]]:
    """Every phrase by role (all languages)."""
    out: dict[str, list[str]] = {r: [] for r in ROLES}
    for p, r in vocabulary().exact.items():
        out[r].append(p)
    return {r: tuple(ps) for r, ps in out.items()}
