"""The label as a perfect interference verdict (``ttir tune eval --real --oracle``).

An ablation, not a model: it answers the diagnose prompt's interference question with
the screen's label (and says nothing is wrong on the other three), so that the guard's
own path — what the rules locate beside the model's verdict, the held verdicts on
dialogs the goal needs, the dismiss recovery's choice of control, its Back fallback —
runs on every pop-up of the corpus, not only on those the rules find. It separates
what the recoveries would do from what the diagnoser finds: the figures a capable
model in the cascade would inherit. Nothing it answers is a measurement of a model.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from diagnosers.judgment import Judgment
from ttir.model.client import CallUsage, VLMResult

ORACLE_TIER = "oracle"


class LabelOracle:
    """A stand-in for :class:`ttir.model.client.VLMClient` that answers from one screen's label."""

    sends_images = False  # it reads no prompt: the label is the answer

    def __init__(self, interference: bool):
        self.interference = interference

    def _answer(self, schema: Optional[type]) -> VLMResult[Any]:
        if schema is not Judgment:
            # only the diagnose prompt has an answer in a label; the recovery stays in its rule tier
            raise TypeError(f"LabelOracle answers the diagnose prompt (Judgment), not {schema!r}")
        value = Judgment(repeat_failure_detected=False, previous_intended_effect_satisfied="uncertain",
                         interference_present=self.interference, task_alignment="on_track",
                         reason="the screen's label (oracle ablation)")
        return VLMResult(value=value, raw="", usage=CallUsage(model_calls=0, model="label-oracle"))

    def ask(self, render: Callable[[bool], Any], schema: Optional[type] = None, **_: Any) -> VLMResult[Any]:
        return self._answer(schema)

    async def aask(self, render: Callable[[bool], Any], schema: Optional[type] = None, **_: Any) -> VLMResult[Any]:
        return self._answer(schema)


ORACLE_MODES = ("vlm", "cascade")


def oracle_overrides(mode: str = "vlm") -> dict[str, Any]:
    """The guard's settings under the oracle. ``vlm``: the interference diagnoser asks
    the "model" (the label) on every screen, the rules only locating what it sees — the
    recoveries on every pop-up. ``cascade``: it asks only where the rules are uncertain —
    the most a perfect model could add to the cascade as configured. The other three
    diagnosers keep their rules, and there is no sanity probe (a label has no opinion of
    the probe's home screen)."""
    if mode not in ORACLE_MODES:
        raise ValueError(f"oracle mode {mode!r}: expected one of {', '.join(ORACLE_MODES)}")
    return {"interference.mode": mode, "stuck_loop.mode": "rules", "action_effect.mode": "rules",
            "task_alignment.mode": "rules", "cascade.probe": False}
