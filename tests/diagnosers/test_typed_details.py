"""The diagnosers' findings carry typed details (ttir.core.diagnosis.DETAILS_TYPES): what the
recoveries read by attribute. Checked on real dumps of the corpus's dev split and on the
guard's own findings in simulated episodes where each diagnoser reports a problem."""

from __future__ import annotations

import pydantic
import pytest

import perturb
import ttir
from benchmark import SimDevice, make_task, run_episode
from benchmark.agents import PlannerAgent, PlannerParams, ReplayAgent
from diagnosers import DiagnosisContext, InterferenceDiagnoser
from experiments.real_screens.corpus import load_corpus
from ttir.core.diagnosis import (DETAILS_TYPES, ActionEffectDetails, Finding, FindingDetails, InterferenceDetails,
                                 OverlayButton, StuckLoopDetails, TaskAlignmentDetails)
from ttir.core.lexicon import ROLES


def test_interference_details_on_real_dev_dumps_are_typed():
    diagnoser = InterferenceDiagnoser()
    screens = [s for s in load_corpus("dev") if s.label.category == "interference" and not s.label.malformed]
    assert len(screens) >= 100
    located = 0
    for s in screens:
        f = diagnoser.diagnose(DiagnosisContext(goal=s.label.goal, observation=s.observation(), history=[]))
        details = f.typed_details
        assert isinstance(details, InterferenceDetails), s.id
        if details.kind is not None:
            located += 1
            assert all(isinstance(b, OverlayButton) and b.role in ROLES for b in details.buttons), s.id
            assert details.model_dump(exclude_unset=True).keys() <= f.details.keys()  # nothing invented
    assert located >= len(screens) // 2  # the rules locate most of the labelled pop-ups' overlays


def _guarded(task, agent, perturbation, budget=None):
    guarded = ttir.guard(agent, config=ttir.TTIRConfig.with_mode("rules"))
    with perturb.PerturbedDevice(SimDevice(), [perturbation], seed=0) as env:
        run_episode(env, task, guarded, budget=budget)
    return guarded.report.findings


def test_each_diagnosers_findings_in_simulated_episodes_are_its_typed_details():
    maze = make_task("BrowserMaze", seed=0)
    contacts = make_task("ContactsAddContact")
    brightness = make_task("SystemBrightnessMax")
    wifi = make_task("SystemWifiTurnOn")
    tapper = lambda obs: ttir.Action(action_type="click", x=540, y=1300)  # noqa: E731 - empty space, again and again
    drifter = PlannerParams(engage_probability=0.0, move_on_probability=0.0, drift_probability=1.0)
    records = (_guarded(maze, ReplayAgent.from_task(maze), perturb.make("display_size_dpi_zoomed_out", trigger_step=3))
               + _guarded(contacts, ReplayAgent.from_task(contacts), perturb.make("font_size_small"))
               + _guarded(brightness, PlannerAgent(brightness.reference_solution(), drifter), perturb.make("notification_message"))
               + _guarded(wifi, tapper, perturb.make("font_size_small"), budget=10))
    seen = set()
    for record in records:
        f = Finding.model_validate({k: v for k, v in record.items() if k not in ("step", "claim")})
        details = f.typed_details
        assert type(details) is DETAILS_TYPES[f.diagnoser], (f.diagnoser, f.details)
        if f.problem:
            seen.add(f.diagnoser)
    assert seen >= {"interference", "stuck_loop", "action_effect"}, seen
    assert {r["diagnoser"] for r in records} == set(DETAILS_TYPES)


def test_details_of_the_wrong_shape_are_a_validation_error_not_a_silent_default():
    f = Finding(diagnoser="interference", problem=True, verdict="true", details={"kind": "nagware"})
    with pytest.raises(pydantic.ValidationError, match="kind"):
        f.typed_details
    own = Finding(diagnoser="my_check", problem=True, verdict="yes", details={"score": 3})
    assert type(own.typed_details) is FindingDetails and own.typed_details.model_extra == {"score": 3}
    assert own.details_as(InterferenceDetails).kind is None  # a user's check read in the interference keys
    assert isinstance(Finding(diagnoser="action_effect", problem=False, verdict="false", details={"no_change": True}).typed_details, ActionEffectDetails)
    assert TaskAlignmentDetails is DETAILS_TYPES["task_alignment"] and StuckLoopDetails is DETAILS_TYPES["stuck_loop"]
