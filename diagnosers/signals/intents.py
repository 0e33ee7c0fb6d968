"""What a dialog asks for and whether the goal asks for the same (``data/intents.yaml``):
the camera permission of a scanning task, Google's account chooser of a "sign in with
Google" task. Such a dialog is the task's own, not an interruption."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Pattern

from diagnosers.signals.data import builtin
from diagnosers.signals.lexicon import flat
from ttir.core.lexicon import PhraseIndex, words_of


@dataclass(frozen=True)
class Intent:
    name: str
    dialog: PhraseIndex
    goal: PhraseIndex
    surface: bool = False  # the dialog is the capability itself (an account chooser, a share sheet), not a request for it
    unless: PhraseIndex = PhraseIndex(())  # wording that makes a dialog something else ("Save password?" after a sign-in)


@lru_cache(maxsize=1)
def intents() -> tuple[Intent, ...]:
    data = builtin("intents").get("intents") or {}
    out = []
    for name, spec in data.items():
        if not isinstance(spec, dict) or not spec.get("dialog") or not spec.get("goal"):
            raise ValueError(f"diagnosers/data/intents.yaml: intents.{name} needs non-empty 'dialog' and 'goal' lists")
        out.append(Intent(name=str(name),
                          dialog=PhraseIndex(flat(str(w)) for w in spec["dialog"]),
                          goal=PhraseIndex(flat(str(w)) for w in spec["goal"]),
                          surface=bool(spec.get("surface", False)),
                          unless=PhraseIndex(flat(str(w)) for w in spec.get("unless") or ())))
    return tuple(out)


@lru_cache(maxsize=1)
def _surfaces() -> frozenset[str]:
    return frozenset(i.name for i in intents() if i.surface)


def intents_for(kind: str, needed: frozenset[str]) -> frozenset[str]:
    """What of ``needed`` a candidate of ``kind`` can be wanted for: a capability is asked for by a
    permission request; any other dialog is wanted only when it is the capability's own surface
    (an account chooser for a sign-in goal) - an ad consent that mentions "files" asks nothing of it.
    A permission request is no capability's surface: its "recover your account" asks nothing of a
    sign-in goal."""
    return needed - _surfaces() if kind == "permission" else needed & _surfaces()


@lru_cache(maxsize=1)
def _requester_patterns() -> tuple[Pattern[str], ...]:
    import re

    return tuple(re.compile(str(p), re.IGNORECASE) for p in builtin("intents").get("requester_patterns") or ())


def without_requester(texts: Iterable[str]) -> list[str]:
    """A permission request names the app asking ("Allow Files to record audio?"): that name asks for
    nothing (``requester_patterns`` in data/intents.yaml cut it out)."""
    out = []
    for t in texts:
        for rx in _requester_patterns():
            t = rx.sub(" ", t or "")
        out.append(t)
    return out


@lru_cache(maxsize=256)
def goal_intents(goal: str) -> frozenset[str]:
    """The intents a goal asks for."""
    g = flat(goal)
    words = words_of(g)
    return frozenset(i.name for i in intents() if i.goal.found_in(g, words))


def dialog_intents(texts: Iterable[str], package: str = "") -> frozenset[str]:
    """The intents a dialog's text (or the package it comes from) asks for."""
    blob = " | ".join(flat(t) for t in [*texts, package] if t)
    words = words_of(blob)
    return frozenset(i.name for i in intents() if i.dialog.found_in(blob, words) and not i.unless.found_in(blob, words))


def shared_intents(goal: str, texts: Iterable[str], package: str = "", apps: Iterable[str] = ()) -> frozenset[str]:
    """The intents both the goal and the dialog ask for. The name of the app a dialog
    interrupts says nothing of what it asks ("Allow Files to send you notifications?"
    asks nothing of a goal about a file): each word of ``apps`` (the apps' names or
    packages: the agent's own open_app names, the task's packages) counts once less in
    each text, and the dialog's ``package`` counts only when it is another app's (the
    permission controller, Google Play services)."""
    wanted = goal_intents(goal)
    if not wanted:
        return frozenset()
    apps = list(apps)
    own = package in apps  # the app's own dialog: its package says no more than its name
    texts = without_requester(texts)
    return wanted & dialog_intents(without_app_names(texts, [package, *apps]), "" if own else package)


_WORD = re.compile(r"\w+")
_NAME_PARTS = re.compile(r"[\W_]+")


def without_app_names(texts: Iterable[str], apps: Iterable[str]) -> list[str]:
    """Each text with the first occurrence of every word of an app's name, or inside the
    last part of its package ("sms" in com.simplemobiletools.smsmessenger), left out
    (words of three letters or more)."""
    parts = set()
    for a in apps:
        if a and "." in a and " " not in a:
            parts.add(a.lower().rsplit(".", 1)[-1])
        elif a:
            parts.update(_NAME_PARTS.split(a.lower()))
    parts = {p for p in parts if len(p) > 2}
    out = []
    for t in texts:
        dropped: set[str] = set()
        kept = []
        for w in _WORD.findall(t or ""):
            lw = w.lower()
            if len(lw) >= 3 and lw not in dropped and any(lw in seg for seg in parts):
                dropped.add(lw)
                continue
            kept.append(w)
        out.append(" ".join(kept))
    return out
