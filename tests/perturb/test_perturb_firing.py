"""Whether and when a perturbation fired (perturb.firing), and ``timing.before_reference_end``:
a trigger that would come after a short task is over is brought forward to the task's last
reference step, so the task is perturbed too."""

from __future__ import annotations

import random

import pytest

import perturb
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import ReferenceAgent
from perturb.firing import first_effect_step, fired_from_counts
from perturb.timing import Timing

SHORT = "SystemBrightnessMax"  # its reference solution is 2 actions long


def _run(task_name: str, name: str, **overrides):
    task = make_task(task_name)
    env = perturb.PerturbedDevice(SimDevice(), [perturb.make(name, **overrides)], seed=0)
    with env:
        result = run_episode(env, task, ReferenceAgent(task.reference_solution()))
        return result, env.event_log()


def test_first_effect_step_ignores_bookkeeping():
    log = [{"step": 0, "perturbation": "antrap_schedule", "event": "trap_selected"},
           {"step": 4, "perturbation": "trap_loop", "event": "loop_back"},
           {"step": 6, "perturbation": "device", "event": "restored"}]
    assert first_effect_step(log) == 4
    assert first_effect_step(log[:1] + log[2:]) is None
    assert not fired_from_counts({"restored": 1, "trap_selected": 1}) and fired_from_counts({"dropped": 1})


def test_a_deadline_brings_a_trigger_step_forward_and_forces_a_probability_trigger():
    late = Timing(trigger_step=5, before_reference_end=True)
    assert late.deadline(3) == 2 and Timing(trigger_step=5).deadline(3) is None
    assert not late.fires(1, 0, random.Random(0), deadline=2) and late.fires(2, 0, random.Random(0), deadline=2)
    never = Timing(probability=0.0, before_reference_end=True, max_triggers=None)
    assert not never.fires(0, 0, random.Random(0), deadline=1)
    assert never.fires(1, 0, random.Random(0), deadline=1)  # not fired by the deadline: fires there
    assert not never.fires(2, 1, random.Random(0), deadline=1)  # only the first firing is forced


@pytest.mark.parametrize("name, overrides, expected", [
    ("display_size_dpi_zoomed_out", {"trigger_step": 3}, None),
    ("display_size_dpi_zoomed_out", {"trigger_step": 3, "before_reference_end": True}, 1),
    ("action_drop_random", {"magnitude.probability": 0.0}, None),
    ("action_drop_random", {"magnitude.probability": 0.0, "before_reference_end": True}, 1),
    ("popup_security", {"before_reference_end": False}, None),
    ("popup_security", {}, 1),  # the shipped transition profiles fire by the last reference step
])
def test_short_tasks_are_perturbed_before_their_last_reference_step(name, overrides, expected):
    result, events = _run(SHORT, name, **overrides)
    assert first_effect_step(events) == expected, events
    if expected is not None:
        assert expected < result.steps  # the agent still had a reference action to take under it


def test_a_long_task_keeps_its_trigger_step():
    _, events = _run("ContactsAddContact", "display_size_dpi_zoomed_out", trigger_step=3, before_reference_end=True)
    assert first_effect_step(events) == 3
