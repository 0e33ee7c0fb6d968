"""Starting an agent part-way through an episode: ``resume_agent(agent, goal, history)``.

Used to resume agents from checkpoints (``experiments.checkpoints``). ``history`` is the list
of past steps (:class:`~ttir.core.types.StepRecord`: the observation each step was decided on
and the step taken). How an agent receives it:

- an agent with its own ``resume(goal, history)`` method gets the list as it is (your agent
  renders it in its own context format);
- otherwise the agent is reset and shown each past observation in order, its own decisions
  discarded (a stateful agent rebuilds its state from the screens it saw);
- a guarded agent (:class:`~ttir.guarded.middleware.GuardedAgent`) primes its wrapped agent
  as above and starts its own history from ``history``, so its checks see the past steps.
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

from ttir.core.types import StepRecord
from ttir.guarded.middleware import GuardedAgent

ResumeHow = Literal["resume", "observed", "reset"]


def resume_agent(agent: Any, goal: str, history: Sequence[StepRecord]) -> ResumeHow:
    """Start ``agent`` on ``goal`` with ``history`` behind it (see the module docstring).

    Args:
        agent: any agent (``reset``/``step``), guarded or not.
        goal: the task's goal.
        history: the past steps, oldest first.

    Returns:
        How the history reached the agent: ``resume`` (its own method), ``observed`` (shown the
        past observations) or ``reset`` (no history: a fresh start).
    """
    if isinstance(agent, GuardedAgent):
        how = resume_agent(agent.inner, goal, history)
        agent.start_with_history(goal, list(history))
        return how
    own = getattr(agent, "resume", None)
    if callable(own):
        own(goal, list(history))
        return "resume"
    agent.reset(goal)
    if not history:
        return "reset"
    for rec in history:
        agent.step(rec.observation)  # its decisions are discarded: the recorded steps were taken
    return "observed"
