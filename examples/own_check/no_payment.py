"""A domain rule as a guard check: never start a payment the goal does not ask for.

The check reviews every tap the agent proposes (``reviews=``) before it reaches the
phone. A tap on a control labelled with one of ``words`` ("Pay", "Buy", "Start free
trial" …) is blocked unless the goal names the purchase; the recovery backs out of the
screen instead, and the agent is told why. In Python::

    import ttir
    from no_payment import make_check

    agent = ttir.guard(my_agent, checks=[*ttir.default_checks(), make_check()])

In a config or an experiment spec (see ``spec.yaml``), by import path::

    guard_config:
      checks: [{factory: "no_payment:make_check", params: {words: [pay, buy]}}]
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from ttir import Action, AgentStep, Check, DiagnosisContext, Diagnoser, Finding, Observation, Recovery, RecoveryContext

WORDS = ("pay", "buy", "purchase", "subscribe")  # what the rule blocks when the spec names none
LARGEST_SHARE = 0.25  # a node covering more of the screen than this is a container, not the tapped control


def _mentions(text: str, words: Sequence[str]) -> list[str]:
    low = text.lower()
    return [w for w in words if re.search(rf"\b{re.escape(w.lower())}\b", low)]


def tapped_labels(obs: Observation, action: Action) -> list[str]:
    """The labels of the controls under a tap (the button and the text inside it)."""
    point = action.point(obs.elements) if action.is_touch else None
    if point is None:
        return []
    w, h = obs.screen_size
    screen = max(1, w * h)
    return [e.label for e in obs.elements if e.label and e.contains(*point) and e.area <= LARGEST_SHARE * screen]


class PaymentRule(Diagnoser):
    """Is the agent about to tap a payment control the goal does not ask for?"""

    name = "no_payment"

    def __init__(self, words: Sequence[str] = WORDS):
        super().__init__(mode="rules")
        self.words = tuple(words)

    def rules(self, ctx: DiagnosisContext) -> Finding:
        step = ctx.pending
        if step is None:  # not reviewing a step: nothing is about to be tapped
            return Finding(diagnoser=self.name, problem=False, verdict="false", evidence=["no pending tap"])
        hits = [(label, w) for label in tapped_labels(ctx.observation, step.action)
                for w in _mentions(label, self.words)]
        if not hits:
            return Finding(diagnoser=self.name, problem=False, verdict="false", evidence=["not a payment control"])
        asked = [w for _, w in hits if _mentions(ctx.goal, [w])]
        if asked:
            return Finding(diagnoser=self.name, problem=False, verdict="false",
                           evidence=[f"the goal asks for it ({asked[0]!r})"])
        label, word = hits[0]
        return Finding(diagnoser=self.name, problem=True, verdict="true", confidence=1.0,
                       evidence=[f"tap on {label[:60]!r} ({word!r}) and the goal does not ask for a payment"])


class BackOut(Recovery):
    """Leave the payment screen (one back press) instead of tapping."""

    name = "back_out"

    def rules(self, ctx: RecoveryContext) -> Optional[AgentStep]:
        if ctx.taken:  # one back press; the agent decides again on the screen it leads to
            return None
        return AgentStep(action=Action(action_type="navigate_back"), thought="The goal does not ask for a payment.",
                         summary="Back out of the payment screen")


def _taps(step: AgentStep) -> bool:
    return step.action.is_touch


def make_check(config: Any = None, words: Sequence[str] = WORDS) -> Check:
    """The check, as a config or spec names it: ``make_check(config, **params)``."""
    return Check(PaymentRule(words), BackOut(), screens=False, reviews=_taps,
                 on_recovery="a tap on a payment control was blocked: the goal does not ask for a purchase")
