"""No false alarms on clean runs: every registered task's reference solution, run
on a clean SimDevice, with all four rule diagnosers asked at every step exactly
as the guard would ask them (history + current observation; the final
``status: complete`` step as ``pending``). Tasks added later are covered too."""

from __future__ import annotations

import pytest

from benchmark import SimDevice, make_task, run_episode, task_names
from benchmark.agents import ReferenceAgent
from diagnosers import (
    ActionEffectDiagnoser,
    DiagnosisContext,
    InterferenceDiagnoser,
    StuckLoopDiagnoser,
    TaskAlignmentDiagnoser,
)
from ttir.core.types import AgentStep, StepRecord


def contexts(name: str):
    """(step index, context) for every decision of a clean reference run of ``name``."""
    task = make_task(name, seed=0)
    result = run_episode(SimDevice(), task, ReferenceAgent(task.reference_solution()), keep_observations=True)
    assert result.success, f"{name}: the clean reference run itself failed"
    steps = [AgentStep(**s.agent_step) for s in result.trajectory]
    history: list[StepRecord] = []
    for i, (obs, step) in enumerate(zip(result.observations, steps)):
        pending = step if step.action.action_type == "status" else None
        yield i, step, DiagnosisContext(goal=task.goal, observation=obs, history=list(history), pending=pending)
        history.append(StepRecord(observation=obs, step=step, source="agent"))


@pytest.mark.parametrize("name", task_names())
def test_no_diagnoser_reports_a_problem_on_a_clean_run(name):
    diagnosers = [StuckLoopDiagnoser(), ActionEffectDiagnoser(), InterferenceDiagnoser(), TaskAlignmentDiagnoser()]
    alarms = []
    claims = 0
    for i, step, ctx in contexts(name):
        claims += ctx.pending is not None
        for d in diagnosers:
            f = d.diagnose(ctx)
            assert f.tier in ("rules", "cascade")  # no model configured: the rules answered
            if f.problem:
                alarms.append(f"step {i} ({step.summary}): {f.diagnoser}={f.verdict}: {f.evidence}")
    assert claims == 1, f"{name}: the run should end with one completion claim"
    assert not alarms, f"{name}: false alarms on a clean run:\n" + "\n".join(alarms)
