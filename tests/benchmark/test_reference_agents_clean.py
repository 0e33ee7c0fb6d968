"""Every reference agent finishes every task on a clean phone: done-gated success (the
verifier says yes AND the agent declared the task done itself), and the oracle and the
planner within 1.5x the task's reference length.

The replay's stale-coordinate retries are a perturbed-run behaviour: on a clean phone a
step whose effect is invisible (Markor's silent Save) must not send it into a loop, which
used to end MarkorCreateNote and MarkorEditNote by budget exhaustion scored as a success.
The agents are built exactly as `ttir run` builds them (experiments.agents.build_agent).
"""

from __future__ import annotations

import math

import pytest

from benchmark import SimDevice, make_task, run_episode, task_names
from experiments.agents import build_agent
from experiments.spec import AgentSpec, EpisodeSpec

REFERENCE_KINDS = ("replay", "planner", "oracle", "reference")
STEP_BOUND = {"oracle": 1.5, "planner": 1.5}  # x the task's reference length


@pytest.fixture(scope="module")
def phone():
    d = SimDevice()
    yield d
    d.close()


@pytest.mark.parametrize("kind", REFERENCE_KINDS)
@pytest.mark.parametrize("task_name", task_names())
def test_reference_agent_finishes_clean(phone, task_name, kind):
    task = make_task(task_name)
    ep = EpisodeSpec(task=task_name, agent=AgentSpec(name=kind, kind=kind))
    result = run_episode(phone, task, build_agent(ep, task), 20 * task.reference_steps)
    summaries = [s.agent_step.get("summary") for s in result.trajectory[-5:]]
    assert result.termination == "done", f"{kind} on {task_name}: ended by {result.termination}; last steps {summaries}"
    assert result.verified and result.success, f"{kind} on {task_name}: declared done on an unverified state"
    bound = STEP_BOUND.get(kind)
    if bound is not None:
        limit = math.floor(bound * task.reference_steps)
        assert result.steps <= limit, (f"{kind} on {task_name}: {result.steps} steps, more than {bound}x the "
                                       f"reference length {task.reference_steps}; last steps {summaries}")
