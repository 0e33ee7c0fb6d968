"""The history a resumed agent receives (AndroidFlux §C.6.2, §C.8).

One :class:`HistoryStep` per replayed action: the action as recorded and a short neutral
summary. A source summary is kept only when it passes :func:`neutral` (a plain description of
the action, no word about an error, a mistake, a retry, a replay or a recovery); otherwise an
action-type template stands in (``Tap "Save"``, ``Type "Ann"``, ``Go back`` …). The source
agent's thoughts (explanations of purpose) are never carried over. Nothing in a history says
that the prefix was replayed or authored by another agent.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict

from ttir.core.types import ACTION_GROUPS

# words a resumed agent must never be told (an error happened, the prefix was replayed, ...)
BANNED_WORDS = ("error", "mistake", "wrong", "replay", "recover", "retry", "again", "fail", "lost", "no effect",
                "nothing changed", "giving up", "give up", "in the way", "checkpoint", "rewind", "inject", "guard",
                "interruption", "drift", "stuck", "problem")
_QUOTED = re.compile(r'"([^"]{1,80})"')
TOUCH_VERBS = {"click": "Tap", "long_press": "Long-press", "double_tap": "Double-tap"}


class HistoryStep(BaseModel):
    """One step of a resumed agent's history."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: int
    action: dict[str, Any]
    summary: str


def neutral(text: Optional[str]) -> bool:
    """True when ``text`` may be shown to a resumed agent as it is."""
    t = (text or "").lower()
    return bool(t.strip()) and not any(w in t for w in BANNED_WORDS)


def template(action: dict[str, Any], summary: Optional[str] = None) -> str:
    """A neutral description of ``action`` (a quoted target of ``summary`` is kept when neutral)."""
    kind = action.get("action_type") or "action"
    quoted = _QUOTED.findall(summary or "")
    target = quoted[0] if quoted and neutral(quoted[0]) else None
    if kind in ACTION_GROUPS["touch"]:
        verb = TOUCH_VERBS.get(kind, "Tap")
        return f'{verb} "{target}"' if target else f"{verb} at ({action.get('x')}, {action.get('y')})"
    if kind == "input_text":
        return f'Type "{action.get("text", "")}"'
    if kind == "scroll":
        return f"Scroll {action.get('direction') or 'down'}"
    if kind == "open_app":
        return f"Open the {action.get('app_name')} app"
    fixed = {"navigate_back": "Go back", "navigate_home": "Go to the home screen", "keyboard_enter": "Press enter",
             "wait": "Wait", "app_switch": "Show recent apps", "swipe": "Swipe", "answer": "Answer",
             "status": "Finish"}
    return fixed.get(kind, kind.replace("_", " ").capitalize())


def history_step(step: int, action: dict[str, Any], summary: Optional[str]) -> HistoryStep:
    """The history entry of one recorded step (its summary if neutral, else the template)."""
    text = summary.strip() if neutral(summary) and summary else template(action, summary)
    return HistoryStep(step=step, action=dict(action), summary=text[:200])
