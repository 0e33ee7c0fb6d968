"""A checkpoint episode in a worker: the prefix replayed, the screen checked, the agent primed.

``experiments.worker.run_one`` calls :func:`at_checkpoint` for an episode whose spec carries a
checkpoint (``EpisodeSpec.checkpoint``): the device it hands to the episode loop replays the
recorded prefix in ``reset`` (:class:`ReplayedStart`) and raises :class:`CheckpointMismatch` when
the restored screen differs from the checkpoint's (the episode is then recorded as an error);
the agent is primed with the checkpoint's neutral history in ``reset``
(:class:`ResumedAgent`, ``ttir.guarded.resume.resume_agent``); the step budget is the task's
budget minus the prefix. The episode's success is done-gated as always.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from experiments.checkpoints.model import Checkpoint
from experiments.checkpoints.replay import replay_prefix, screen_digest
from ttir.core.errors import TTIRError


class CheckpointMismatch(TTIRError, RuntimeError):
    """The replayed prefix did not restore the checkpoint's screen."""


class ReplayedStart:
    """A device whose ``reset`` restores a checkpoint; everything else is the wrapped device's."""

    def __init__(self, inner: Any, ck: Checkpoint, encode: Callable[[Any, int], bytes],
                 then: Optional[list[dict[str, Any]]] = None):
        self.inner = inner
        self.ck = ck
        self.encode = encode  # how the run encodes a screenshot (experiments.worker._jpeg)
        self.then = list(then or [])  # actions executed after the restored screen was checked (prefs' candidates)
        self.observations: list[Any] = []

    def reset(self, task: Any = None, **kwargs: Any) -> Any:
        seen = replay_prefix(self.inner, self.inner.reset(task, **kwargs), self.ck.actions)
        digest, _, _ = screen_digest(seen[-1], self.ck.screenshot_width, self.encode)
        if not digest.matches(self.ck.screen):
            raise CheckpointMismatch(f"checkpoint {self.ck.id}: the replayed prefix ({self.ck.prefix_steps} steps) "
                                     "did not restore the checkpoint's screen")
        if self.then:
            seen = seen[:-1] + replay_prefix(self.inner, seen[-1], self.then)
        self.observations = seen
        return seen[-1]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)


class ResumedAgent:
    """An agent whose ``reset(goal)`` starts it at the checkpoint with the checkpoint's history."""

    def __init__(self, agent: Any, start: ReplayedStart):
        self.agent = agent
        self.start = start
        self.how: Optional[str] = None

    def reset(self, goal: str) -> None:
        from ttir.core.types import Action, AgentStep, StepRecord
        from ttir.guarded.resume import resume_agent

        from experiments.checkpoints.history import history_step

        ck = self.start.ck
        steps = [*ck.history, *(history_step(ck.prefix_steps + i, a, None) for i, a in enumerate(self.start.then))]
        history = [StepRecord(observation=obs, step=AgentStep(action=Action(**h.action), summary=h.summary))
                   for obs, h in zip(self.start.observations, steps)]
        self.how = resume_agent(self.agent, goal, history)

    def step(self, obs: Any) -> Any:
        return self.agent.step(obs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.agent, name)


def at_checkpoint(checkpoint: dict[str, Any], shown: Any, agent: Any,
                  encode: Callable[[Any, int], bytes]) -> tuple[Any, Any, int, dict[str, Any]]:
    """(device, agent, remaining budget, record fields) of a checkpoint episode.

    Args:
        checkpoint: the episode's checkpoint (``EpisodeSpec.checkpoint``).
        shown: the device the agent would see from the task's start.
        agent: the episode's agent (guarded or not).
        encode: the run's screenshot encoder (``experiments.worker._jpeg``).
    """
    ck = Checkpoint.model_validate(checkpoint)
    start = ReplayedStart(shown, ck, encode)
    meta = {"id": ck.id, "source_id": ck.source_id, "position": ck.position, "offset": ck.offset,
            "error_class": ck.error_class, "ttir_category": ck.ttir_category, "steps_taken": ck.steps_taken,
            "prefix_steps": ck.prefix_steps}
    return start, ResumedAgent(agent, start), ck.remaining_budget, meta
