"""OracleAgent: the robust reference used to prove that every perturbation preserves
solvability — the reference solution, re-grounded every step by text / id, declining
pop-ups by their dismiss button or back, waiting out loading, re-opening a closed or
left app and retrying (after a wait) any action that had no visible effect — or, for a
plan step whose effect never shows (Markor's Save), doing it a second time."""

from __future__ import annotations

from typing import Any, Sequence

from benchmark.agents.planner import PlannerAgent, PlannerParams
from benchmark.plan import PlanStep

ORACLE = PlannerParams(engage_probability=0.0, move_on_probability=0.0, drift_probability=0.0, max_rewinds=6,
                       repeat_silent_steps=True)


class OracleAgent(PlannerAgent):
    name = "oracle"

    def __init__(self, plan: Sequence[PlanStep], **overrides: Any):
        # validated (model_copy(update=) would take a typo or a wrong type silently)
        super().__init__(plan, PlannerParams.model_validate({**ORACLE.model_dump(), **overrides}) if overrides else ORACLE)

    @classmethod
    def for_task(cls, task: Any) -> "OracleAgent":
        return cls(task.reference_solution())
