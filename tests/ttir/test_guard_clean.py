"""No harm on clean runs: zero false recoveries, success unchanged, on every task."""

from __future__ import annotations

import pytest

import ttir
from benchmark import SimDevice, make_task, run_episode, task_names
from benchmark.agents import ReferenceAgent

RULES = ttir.TTIRConfig.with_mode("rules")


@pytest.mark.parametrize("name", task_names())
def test_no_false_recoveries_on_clean_runs(name):
    task = make_task(name)
    plain = run_episode(SimDevice(), task, ReferenceAgent(task.reference_solution()))
    agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=RULES)
    guarded = run_episode(SimDevice(), task, agent)
    assert not agent.report.sessions, [s.trigger for s in agent.report.sessions]
    assert not agent.report.errors
    assert guarded.success == plain.success is True
    assert guarded.steps == plain.steps
