"""ReplayAgent: replays the coordinates of a clean run (AndroidReality's stale-coordinate
agent, error ①). When the screen does not change after its action it retries the very
same action; it treats whatever is on screen as part of the task."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from benchmark.agents import screen
from ttir.types import Action, AgentStep, Observation


_RECORDED: dict[tuple[str, str, int], list[AgentStep]] = {}


def _record(task: Any) -> list[AgentStep]:
    from benchmark.agents.reference import ReferenceAgent
    from benchmark.episode import run_episode
    from benchmark.sim.device import SimDevice

    result = run_episode(SimDevice(), task, ReferenceAgent(task.reference_solution()))
    steps = [AgentStep(**{**s.agent_step, "action": Action(**s.agent_step["action"])}) for s in result.trajectory]
    return [s for s in steps if s.action.action_type != "status"]


class ReplayAgent:
    name = "replay"

    def __init__(self, steps: Sequence[AgentStep], *, max_retries: Optional[int] = None):
        self.steps = list(steps)
        self.max_retries = max_retries  # None: retry until the budget runs out, as the paper observed
        self.reset("")

    @classmethod
    def from_task(cls, task: Any, **kwargs: Any) -> "ReplayAgent":
        """Record the task's reference solution on a private clean simulated phone
        (once per task instance and process: a sweep replays each one many times)."""
        key = (type(task).__name__, repr(sorted(task.params.items())), task.seed)
        steps = _RECORDED.get(key)
        if steps is None:
            steps = _RECORDED[key] = _record(task)
        return cls([s.model_copy() for s in steps], **kwargs)

    def reset(self, goal: str) -> None:
        self.goal = goal
        self.i = 0
        self.retries = 0
        self.last_sig: Optional[str] = None

    def step(self, obs: Observation) -> AgentStep:
        sig = screen.signature(obs)
        if self.last_sig is not None:
            if sig == self.last_sig and self.i > 0 and (self.max_retries is None or self.retries < self.max_retries):
                self.retries += 1
                prev = self.steps[self.i - 1]
                self.last_sig = sig
                return prev  # the stale coordinate, again
            self.retries = 0
        self.last_sig = sig
        if self.i >= len(self.steps):
            return AgentStep(action=Action(action_type="status", goal_status="complete"),
                             thought="I replayed every step.", summary="Declare the task complete")
        step = self.steps[self.i]
        self.i += 1
        return step
