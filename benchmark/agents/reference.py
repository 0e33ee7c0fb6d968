"""ReferenceAgent: executes a task's semantic reference solution, grounding each
step on the current screen (scrolling to reveal off-screen targets)."""

from __future__ import annotations

from typing import Optional, Sequence

from benchmark.plan import PlanStep, ground
from ttir.core.types import Action, AgentStep, Observation

MAX_REVEAL_SCROLLS = 6


class ReferenceAgent:
    """Follows a plan step by step. It does not handle interruptions: that is what
    the robust :class:`~benchmark.agents.oracle.OracleAgent` adds."""

    name = "reference"

    def __init__(self, plan: Sequence[PlanStep]):
        self.plan = list(plan)
        self.reset("")

    def reset(self, goal: str) -> None:
        self.goal = goal
        self.i = 0
        self.scrolls = 0
        self.scroll_dir = "down"

    @property
    def done(self) -> bool:
        return self.i >= len(self.plan)

    def current(self) -> Optional[PlanStep]:
        return None if self.done else self.plan[self.i]

    def step(self, obs: Observation) -> AgentStep:
        if self.done:
            return AgentStep(action=Action(action_type="status", goal_status="complete"),
                             thought="Every step of the plan is done.", summary="Declare the task complete")
        step = self.plan[self.i]
        action = ground(step, obs)
        while action is None and step.optional and self.i + 1 < len(self.plan):
            self.i += 1  # an optional step whose target is absent: skip it
            step = self.plan[self.i]
            action = ground(step, obs)
        if action is None:
            return self._reveal(step, obs)
        self.i += 1
        self.scrolls = 0
        self.scroll_dir = "down"
        self._hid_keyboard = False
        return AgentStep(action=action, thought=f"Next step of the plan: {step.describe()}.", summary=step.describe())

    def _reveal(self, step: PlanStep, obs: Observation) -> AgentStep:
        """The target is not visible: hide the keyboard if it covers the screen, then
        scroll down, then up, looking for it."""
        if any("inputmethod" in e.package for e in obs.elements) and not getattr(self, "_hid_keyboard", False):
            self._hid_keyboard = True
            return AgentStep(action=Action(action_type="navigate_back"),
                             thought="The keyboard hides part of the screen; close it first.", summary="Hide the keyboard")
        self.scrolls += 1
        if self.scrolls > MAX_REVEAL_SCROLLS:
            if self.scroll_dir == "down":
                self.scroll_dir, self.scrolls = "up", 1
            else:
                # give up on this step; the episode's verifier will say whether it mattered
                self.i += 1
                self.scrolls, self.scroll_dir = 0, "down"
                return AgentStep(action=Action(action_type="wait", seconds=1.0),
                                 thought=f"Could not find the target of: {step.describe()}.", summary="Wait")
        return AgentStep(
            action=Action(action_type="scroll", direction=self.scroll_dir),  # type: ignore[arg-type]
            thought=f"The target of '{step.describe()}' is not visible; scroll {self.scroll_dir} to reveal it.",
            summary=f"Scroll {self.scroll_dir} to find {step.target.describe() if step.target else 'the target'}",
        )
