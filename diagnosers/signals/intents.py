"""What a dialog asks for and whether the goal asks for the same (``data/intents.yaml``):
the camera permission of a scanning task, Google's account chooser of a "sign in with
Google" task. Such a dialog is the task's own, not an interruption."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Pattern

from diagnosers.signals.data import builtin
from diagnosers.signals.lexicon import flat, term_pattern


@dataclass(frozen=True)
class Intent:
    name: str
    dialog: tuple[Pattern[str], ...]
    goal: tuple[Pattern[str], ...]


@lru_cache(maxsize=1)
def intents() -> tuple[Intent, ...]:
    data = builtin("intents").get("intents") or {}
    out = []
    for name, spec in data.items():
        if not isinstance(spec, dict) or not spec.get("dialog") or not spec.get("goal"):
            raise ValueError(f"diagnosers/data/intents.yaml: intents.{name} needs non-empty 'dialog' and 'goal' lists")
        out.append(Intent(name=str(name),
                          dialog=tuple(term_pattern(flat(str(w))) for w in spec["dialog"]),
                          goal=tuple(term_pattern(flat(str(w))) for w in spec["goal"])))
    return tuple(out)


@lru_cache(maxsize=256)
def goal_intents(goal: str) -> frozenset[str]:
    """The intents a goal asks for."""
    g = flat(goal)
    return frozenset(i.name for i in intents() if any(rx.search(g) for rx in i.goal))


def dialog_intents(texts: Iterable[str], package: str = "") -> frozenset[str]:
    """The intents a dialog's text (or the package it comes from) asks for."""
    blob = " | ".join(flat(t) for t in [*texts, package] if t)
    return frozenset(i.name for i in intents() if any(rx.search(blob) for rx in i.dialog))


def shared_intents(goal: str, texts: Iterable[str], package: str = "") -> frozenset[str]:
    wanted = goal_intents(goal)
    return wanted & dialog_intents(texts, package) if wanted else frozenset()
