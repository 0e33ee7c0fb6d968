"""ReplayAgent: replays the coordinates of a clean run (AndroidReality's stale-coordinate
agent, error ①). When the screen does not change after its action although it did in the
clean run, it retries the very same action; it treats whatever is on screen as part of
the task. A step that left the screen unchanged in the clean run too (Markor's silent
Save) is not retried: on a clean phone the replay finishes."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from benchmark.agents import screen
from ttir.core.types import Action, AgentStep, Observation


_RECORDED: dict[tuple[str, str, int], tuple[list[AgentStep], list[bool]]] = {}


def _record(task: Any) -> tuple[list[AgentStep], list[bool]]:
    """The clean run's steps, and per step whether the screen changed after it."""
    from benchmark.agents.reference import ReferenceAgent
    from benchmark.episode import run_episode
    from benchmark.sim.device import SimDevice

    seen: list[str] = []
    result = run_episode(SimDevice(), task, ReferenceAgent(task.reference_solution()),
                         on_observation=lambda i, obs: seen.append(screen.signature(obs)))
    steps = [AgentStep(**{**s.agent_step, "action": Action(**s.agent_step["action"])}) for s in result.trajectory]
    kept = [i for i, s in enumerate(steps) if s.action.action_type != "status"]
    changed = [i + 1 >= len(seen) or seen[i] != seen[i + 1] for i in kept]
    return [steps[i] for i in kept], changed


class ReplayAgent:
    name = "replay"

    def __init__(self, steps: Sequence[AgentStep], *, max_retries: Optional[int] = None,
                 changed: Optional[Sequence[bool]] = None):
        self.steps = list(steps)
        self.max_retries = max_retries  # None: retry until the budget runs out, as the paper observed
        # per step: did the screen change after it in the clean run (None: assume every step changes it)
        self.changed = list(changed) if changed is not None else [True] * len(self.steps)
        if len(self.changed) != len(self.steps):
            raise ValueError(f"changed has {len(self.changed)} entries; expected one per step ({len(self.steps)})")
        self.reset("")

    @classmethod
    def from_task(cls, task: Any, **kwargs: Any) -> "ReplayAgent":
        """Record the task's reference solution on a private clean simulated phone
        (once per task instance and process: a sweep replays each one many times)."""
        key = (type(task).__name__, repr(sorted(task.params.items())), task.seed)
        recorded = _RECORDED.get(key)
        if recorded is None:
            recorded = _RECORDED[key] = _record(task)
        steps, changed = recorded
        return cls([s.model_copy() for s in steps], changed=changed, **kwargs)

    def reset(self, goal: str) -> None:
        self.goal = goal
        self.i = 0
        self.retries = 0
        self.last_sig: Optional[str] = None

    def step(self, obs: Observation) -> AgentStep:
        sig = screen.signature(obs)
        if self.last_sig is not None:
            expected_change = self.i > 0 and self.changed[self.i - 1]
            if sig == self.last_sig and expected_change and (self.max_retries is None or self.retries < self.max_retries):
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
