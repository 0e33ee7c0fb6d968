"""Typed run records (experiments/records.py): older records load with the readers' defaults,
unknown keys are kept, a record written back is the line it was read from, and a wrong type is
an error that names the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loguru import logger

from experiments.metrics.episodes import RunData, fired, pair_key, perturbation_label, succeeded, termination_of, verified
from experiments.records import (SCHEMA_VERSION, ActionView, EpisodeRecord, EventRecord, RecordError, Trajectory,
                                 as_episode)
from experiments.store import EPISODES, RunStore
from tests.support.metrics_support import click, ev, finding, rec, recovery, step, traj

# a record as experiments.worker.run_one writes it today
CURRENT = {"id": "T-i0__popup_security__planner__rules__s0r0", "task": "T", "instance": 0,
           "perturbation": "popup_security", "component": "transition", "layer": None, "overrides": {},
           "agent": "planner", "agent_kind": "planner", "guard": "rules", "seed": 0, "repeat": 0, "episode_seed": 12,
           "status": "ok", "goal": "Do it", "success": True, "verified": True, "steps": 7, "budget": 20,
           "termination": "done", "error": None,
           "guard_summary": {"steps": 7, "sessions": 1, "resolved": 1, "triggers": {"interference": 1},
                             "unavailable": {}, "recovery_steps": 1, "model_calls": 0, "model_calls_per_step": 0.0,
                             "model_errors": 0, "model_requests": 0, "tokens": 0, "guard_ms_median": 0.5,
                             "errors": 0, "blocked_claims": 0},
           "events": {"overlay_shown": 1, "overlay_dismissed": 1}, "fired": True, "fired_step": 2, "wall_s": 1.25}


def test_an_old_record_missing_optional_keys_loads_with_the_readers_defaults():
    old = EpisodeRecord.parse({"id": "x", "task": "A", "agent": "p", "success": True, "termination": "complete"})
    assert old.schema_version == SCHEMA_VERSION == 1
    assert (old.perturbation, old.guard, old.instance, old.seed, old.repeat, old.status) == ("clean", "off", 0, 0, 0, "ok")
    assert old.overrides == {} and old.dump is None and old.layer is None and old.agent_kind == "?"
    assert old.component is None and old.component_label == "clean"
    assert old.verified is True  # written before `verified`: the worker's `success` stands for it
    assert old.fired is None and old.events is None and old.guard_summary is None and old.steps is None
    assert succeeded(old) and termination_of(old) == "done" and fired(old)
    assert pair_key(old) == ("A", 0, "p", "off", 0, 0, None) and perturbation_label(old) == "clean"
    # a null where a count or a list belongs reads as zero / empty, as `x or 0` did
    summary = EpisodeRecord.parse({**CURRENT, "guard_summary": {"model_calls": None, "triggers": None}}).guard_summary
    assert summary is not None and summary.model_calls == 0 and summary.triggers == {} and summary.tokens == 0
    assert EpisodeRecord.parse({**CURRENT, "overrides": None}).overrides == {}


def test_an_old_trajectory_loads_with_defaults():
    t = Trajectory.parse({"trajectory": [{"index": 0, "observation": {"foreground": "a/.B"}, "agent_step": {}}]})
    (s,) = t.trajectory
    assert s.action is None and s.action_type is None and s.guard_events == [] and s.truth is None
    assert s.observation.screen_size is None and s.agent_step.summary is None
    assert t.events == [] and t.guard is None and t.final_screen is None and t.reset_events == []
    report = Trajectory.parse({"guard": {"sessions": [{"diagnoser": "stuck_loop"}], "usage": [{"guard_ms": None}]}}).guard
    assert report is not None and report.findings is None  # older reports: the steps' guard events say
    assert report.sessions[0].outcome == "open" and report.sessions[0].actions == []
    assert report.usage[0].guard_ms == 0.0 and report.blocked_claims == 0 and report.errors == []


def test_a_guard_event_written_under_type_reads_as_its_event():
    """Runs written before the guard's step log took the perturbation log's shape name an event under
    ``type``: it reads as ``event``, and the metrics count it."""
    old = {"index": 0, "observation": {}, "agent_step": {}, "guard_events": [{"step": 0, "type": "recovery_step"}]}
    new = {**old, "guard_events": [recovery()]}
    (s_old,), (s_new,) = Trajectory.parse({"trajectory": [old]}).trajectory, Trajectory.parse({"trajectory": [new]}).trajectory
    assert s_old.guard_events[0].event == s_new.guard_events[0].event == "recovery_step"
    assert s_old.guard_events[0].to_json()["event"] == "recovery_step"


def test_a_session_that_named_its_recovery_strategy_reads_as_its_recovery():
    """Reports written before a session's recovery had one name called it ``strategy``: the guard's
    own report and the runs' typed view both read it as ``recovery``; the guard writes ``recovery``."""
    from experiments.records import GuardReportView
    from ttir.guarded.report import GuardReport, SessionRecord

    old = {"id": 1, "diagnoser": "interference", "strategy": "dismiss_interference", "opened_at": 2,
           "outcome": "resolved"}
    assert SessionRecord.model_validate(old).recovery == "dismiss_interference"
    assert GuardReportView.model_validate({"sessions": [old]}).sessions[0].recovery == "dismiss_interference"
    written = GuardReport(sessions=[SessionRecord.model_validate(old)]).to_dict()["sessions"][0]
    assert written["recovery"] == "dismiss_interference" and "strategy" not in written


def test_the_guard_names_the_recovery_in_its_sessions_events_and_hook():
    """A session, its step-log events and the agent's ``on_recovery`` hook name the recovery under
    ``recovery`` (one name for the concept), never ``strategy``."""
    import perturb
    from benchmark.agents.planner import PlannerAgent
    from benchmark.episode import run_episode
    from benchmark.sim.device import SimDevice
    from benchmark.tasks import make_task
    from ttir import guard

    told: list[dict] = []

    class Told(PlannerAgent):
        def on_recovery(self, event: dict) -> None:
            told.append(event)
            super().on_recovery(event)

    task = make_task("ContactsAddContact")
    agent = guard(Told(task.reference_solution()))
    device = perturb.PerturbedDevice(SimDevice(), [perturb.make("popup_permission")], seed=0)
    run_episode(device, task, agent)
    assert agent.report.sessions and told
    assert all(s.recovery for s in agent.report.sessions)
    named = [e for e in agent.events if e["event"] in ("session_opened", "recovery_step")] + told
    assert named and all(e["recovery"] and "strategy" not in e for e in named), named


def test_the_guard_and_the_perturbations_log_events_in_one_shape():
    """A guarded agent's step log and a perturbed device's event log both name an event under ``event``
    beside its ``step``."""
    import perturb
    from benchmark.agents.planner import PlannerAgent, PlannerParams
    from benchmark.episode import run_episode
    from benchmark.sim.device import SimDevice
    from benchmark.tasks import make_task
    from ttir import guard

    task = make_task("RecipeDeleteMultipleRecipes")
    engager = PlannerParams(engage_probability=1.0, move_on_probability=0.0, drift_probability=0.0)
    agent = guard(PlannerAgent(task.reference_solution(), engager))  # no endpoint: the rule tier
    device = perturb.PerturbedDevice(SimDevice(), [perturb.make("popup_security")], seed=0)
    run_episode(device, task, agent)
    guard_events, device_events = agent.events, device.event_log()
    assert guard_events and device_events
    for e in guard_events + device_events:
        assert isinstance(e["step"], int) and isinstance(e["event"], str) and "type" not in e, e


def test_unknown_keys_are_kept_at_every_level():
    r = EpisodeRecord.parse({**CURRENT, "schema_version": 2, "cost_usd": 0.25,
                             "guard_summary": {**CURRENT["guard_summary"], "new_count": 3}})
    assert r.schema_version == 2 and r.cost_usd == 0.25 and r.model_extra == {"cost_usd": 0.25}
    assert r.guard_summary is not None and r.guard_summary.new_count == 3
    assert r.to_json()["cost_usd"] == 0.25 and r.to_json()["guard_summary"]["new_count"] == 3
    t = Trajectory.parse(traj([{**step(0, click(1, 2)), "timing_ms": {"agent": 1.0}, "later": [1]}]))
    assert t.trajectory[0].later == [1] and t.to_json()["trajectory"][0]["timing_ms"] == {"agent": 1.0}
    a = ActionView.parse({"action_type": "wait", "seconds": 2})  # keys the metrics do not read stay as written
    assert a.seconds == 2 and a.fields() == {"action_type": "wait", "seconds": 2}


def test_a_record_round_trips_key_for_key_and_in_order():
    line = json.dumps(CURRENT, separators=(",", ":"))
    r = EpisodeRecord.parse(json.loads(line))
    assert json.dumps(r.to_json(), separators=(",", ":")) == line
    assert EpisodeRecord.parse(r.to_json()) == r and as_episode(r) is r
    shuffled = dict(reversed(list(CURRENT.items())))  # the order keys were read in does not make records differ
    assert EpisodeRecord.parse(shuffled) == r and list(EpisodeRecord.parse(shuffled).to_json()) == list(shuffled)
    old = {"id": "x", "task": "A", "agent": "p", "success": False}
    assert EpisodeRecord.parse(old).to_json() == {**old, "verified": False}  # nothing else added
    t = traj([step(0, click(540, 1200), events=[ev(0, "dropped")], guard_events=[finding(0, "stuck_loop"), recovery()]),
              step(1, {"y": 3, "action_type": "click", "x": 4})], events=[ev(0, "dropped", where="x")],
             guard={"findings": [finding(0, "stuck_loop")], "sessions": [], "usage": [], "errors": []})
    text = json.dumps(t)
    assert json.dumps(Trajectory.parse(json.loads(text)).to_json()) == text


def test_a_wrong_type_is_an_error_naming_the_field():
    with pytest.raises(RecordError, match=r"record 3: field 'seed': Input should be a valid integer.*'abc'"):
        EpisodeRecord.parse({**CURRENT, "seed": "abc"}, "record 3")
    with pytest.raises(RecordError, match=r"field 'guard_summary.model_calls'"):
        EpisodeRecord.parse({**CURRENT, "guard_summary": {"model_calls": "many"}})
    with pytest.raises(RecordError, match=r"field 'events'"):
        EpisodeRecord.parse({**CURRENT, "events": ["overlay_shown"]})
    with pytest.raises(RecordError, match=r"field 'id' is missing"):
        EpisodeRecord.parse({"task": "A", "agent": "p"})
    with pytest.raises(RecordError, match=r"t.json: field 'trajectory.1.agent_step.action.x'"):
        Trajectory.parse(traj([step(0, click(1, 2)), step(1, click("left", 2))]), "t.json")  # type: ignore[arg-type]
    with pytest.raises(RecordError, match=r"field 'step'"):
        EventRecord.parse({"step": "soon", "event": "dropped"})
    with pytest.raises(RecordError, match="expected a JSON object, got list"):
        EpisodeRecord.parse([1, 2])
    with pytest.raises(ValueError, match=r"record 1: field 'agent' is missing"):  # RunData, as before
        RunData([rec(), {"id": "y", "task": "A"}])


def test_the_metrics_read_a_dict_and_its_typed_record_alike():
    for raw in (rec(), rec(perturbation="p", fired=False), rec(termination="budget"), rec(status="error"),
                {"id": "x", "task": "A", "agent": "p", "perturbation": "p", "events": {"restored": 1}}):
        typed = EpisodeRecord.parse(raw)
        assert (succeeded(raw), verified(raw), fired(raw), termination_of(raw), pair_key(raw)) == \
            (succeeded(typed), verified(typed), fired(typed), termination_of(typed), pair_key(typed))


def _write_run(root: Path, lines: list[str], trajectories: dict[str, dict]) -> None:
    (root / "episodes").mkdir(parents=True)
    (root / EPISODES).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    for eid, t in trajectories.items():
        (root / "episodes" / eid).mkdir()
        (root / "episodes" / eid / "trajectory.json").write_text(json.dumps(t), encoding="utf-8")


def test_the_loader_types_each_record_once_and_skips_a_bad_line_with_a_warning(tmp_path: Path):
    good, old = rec(task="A"), {"id": "B-old", "task": "B", "agent": "planner", "success": True, "termination": "done"}
    lines = [json.dumps(good), "{not json", json.dumps({**rec(task="C"), "seed": "abc"}), json.dumps(old)]
    _write_run(tmp_path, lines, {good["id"]: traj([step(0, click(1, 2))])})
    seen: list[str] = []
    logger.enable("experiments")
    sink = logger.add(lambda m: seen.append(str(m)), level="WARNING")
    try:
        run = RunData.load(tmp_path)
    finally:
        logger.remove(sink)
        logger.disable("experiments")
    assert [r.id for r in run.records] == [good["id"], "B-old"]
    assert all(isinstance(r, EpisodeRecord) for r in run.records)
    assert any(":2: not a JSON record; skipped" in m for m in seen)
    assert any(":3: field 'seed'" in m and "skipped" in m for m in seen)
    t = run.trajectory(run.records[0])
    assert isinstance(t, Trajectory) and t.trajectory[0].action == ActionView(action_type="click", x=1, y=2)
    assert run.trajectory(run.records[1]) is None
    assert [r["id"] for r in RunStore(tmp_path).records()] == [good["id"], rec(task="C")["id"], "B-old"]  # plain dicts


def test_a_trajectory_of_the_wrong_shape_names_its_file_and_field(tmp_path: Path):
    good = rec(task="A")
    _write_run(tmp_path, [json.dumps(good)], {good["id"]: {"trajectory": [{"index": "first"}]}})
    run = RunData.load(tmp_path)
    with pytest.raises(RecordError, match=r"trajectory.json: field 'trajectory.0.index'"):
        run.trajectory(run.records[0])
