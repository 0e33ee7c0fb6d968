"""The Ray executor against the local one: same outcomes, actor deaths survived, resumable.

One local Ray (num_cpus=2) for the whole module; it also declares two fake phones as
``ttir_adb:SERIAL`` resources so the adb path can be scheduled without a phone.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.xdist_group("ray")]  # one Ray instance, on one test worker

ray = pytest.importorskip("ray")

from experiments.runner import run as run_spec  # noqa: E402
from experiments.spec import AgentSpec, DeviceSpec, ExperimentSpec  # noqa: E402
from experiments.store import RunStore  # noqa: E402

OUTCOME = ("status", "success", "verified", "steps", "termination", "events", "fired", "fired_step")


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    import logging

    # the test helpers below travel to the actors by value: the actors cannot import this file
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, resources={"ttir_adb:fake-a": 1, "ttir_adb:fake-b": 1}, include_dashboard=False,
             log_to_driver=False, logging_level=logging.ERROR)
    yield
    ray.shutdown()


def small_spec(name: str, tasks: list[str], perturbations: list[str]) -> ExperimentSpec:
    return ExperimentSpec(name=name, tasks=tasks, perturbations=perturbations,
                          agents=[AgentSpec(name="planner", kind="planner"),
                                  # the literal plan follower ignores pop-ups: a failure under popup_permission
                                  AgentSpec(name="reference", kind="reference")],
                          guard=["off", "rules"],
                          workers=2, screenshots="failures", screenshot_width=96,
                          budget_multiplier=4)  # a small budget: failures end fast


def lines(run_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]


# -- fault injection (runs inside the actors) ------------------------------------------------------
def run_or_die(ep, *, victim: str, marker: str, how: str, **kwargs):
    """Run the episode, except: the victim dies mid-episode (first try only unless how='always')."""
    from experiments.worker import run_one

    if ep.id == victim and (how == "always" or not os.path.exists(marker)):
        Path(marker).touch()
        if how == "ray.kill":
            ray.kill(ray.get_runtime_context().current_actor)
            time.sleep(60)  # never reached: the kill ends this process
        os._exit(1)  # a crash: the device's process is gone
    return run_one(ep, **kwargs)


def slow_run(ep, *, delay: float, **kwargs):
    """Every episode takes at least ``delay`` seconds: a kill from the driver lands mid-episode."""
    from experiments.worker import run_one

    time.sleep(delay)
    return run_one(ep, **kwargs)


def stall_or_skip(ep, *, victim: str, marker: str, **kwargs):
    """The victim hangs on its first try (a frozen phone); every other episode returns at once."""
    if ep.id == victim and not os.path.exists(marker):
        Path(marker).touch()
        time.sleep(120)
    return {"id": ep.id, "status": "ok", "success": True}


def sim_unless(binding, *, broken: str):
    """A device factory: the phone `broken` cannot be opened (lost), the others are simulated."""
    from benchmark import SimDevice

    if binding.serial == broken:
        raise ConnectionError(f"device {binding.serial} not found")
    return SimDevice()


# -- tests -------------------------------------------------------------------------------------------
def test_same_outcomes_as_the_local_executor_and_resume(tmp_path):
    # one task is enough: its popup_permission run by the literal reference agent ends on the budget
    spec = small_spec("same", ["SystemWifiTurnOn"], ["clean", "popup_permission"])
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    run_spec(spec, local_dir, workers=2, progress=False)
    summary = run_spec(spec, ray_dir, workers=2, executor="ray", progress=False)
    assert summary["ran"] == len(spec.episodes()) and summary["errors_this_run"] == 0

    local = {r["id"]: r for r in lines(local_dir)}
    remote = {r["id"]: r for r in lines(ray_dir)}
    assert sorted(remote) == sorted(local) == sorted(e.id for e in spec.episodes())
    for eid, rec in local.items():
        assert {k: remote[eid].get(k) for k in OUTCOME} == {k: rec.get(k) for k in OUTCOME}, eid
    assert any(not r["success"] for r in local.values()), "the spec should include a failure"
    assert any(r["termination"] == "budget" for r in local.values()), "... and a budget exhaustion"
    # trajectories came back to the driver's run directory (the actors wrote to scratch folders)
    store = RunStore(ray_dir)
    for eid, rec in remote.items():
        assert store.trajectory(eid)["steps"] == rec["steps"]
        shots = list(store.episode_dir(eid).glob("*.jpg"))
        summary = rec.get("guard_summary") or {}
        acted = bool(summary.get("sessions") or summary.get("blocked_claims"))
        assert bool(shots) == (not rec["success"] or acted), eid  # failures and recoveries, as locally

    # resume: a run cut short (two lines lost, one half-written) runs only what is missing
    text = (ray_dir / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (ray_dir / "episodes.jsonl").write_text("".join(text[:-2]) + text[-2][:25], encoding="utf-8")
    again = run_spec(spec, ray_dir, workers=2, executor="ray", progress=False)
    assert (again["ran"], again["skipped"]) == (2, len(text) - 2)
    assert sorted(r["id"] for r in lines(ray_dir)) == sorted(remote)
    done = run_spec(spec, ray_dir, workers=2, executor="ray", progress=False)
    assert done["ran"] == 0 and len(lines(ray_dir)) == len(remote)


def make_tapper(facts, taps: int = 1):
    """A factory handed over from Python (this module travels to the actors by value)."""
    from ttir import Action, AgentStep

    done = []

    def step(obs):
        if len(done) < taps:
            done.append(1)
            return AgentStep(action=Action(action_type="open_app", app_name=facts.apps[0]))
        return Action(action_type="status", goal_status="complete")

    return step


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own_agent"


def test_python_agents_give_the_same_outcomes_under_both_executors(tmp_path):
    spec = ExperimentSpec(name="own", tasks=["SystemWifiTurnOn"],  # one task holds successes and failures
                          perturbations=["clean", "popup_permission"],
                          agents=[AgentSpec(name="words", kind="python", factory="my_agent:make_agent", path=str(EXAMPLE),
                                            params={"max_taps": 4}),
                                  AgentSpec(name="tapper", kind="python", params={"taps": 2})],
                          guard=["off", "rules"], workers=2, budget_multiplier=4)
    local_dir, ray_dir = tmp_path / "local", tmp_path / "ray"
    factories = {"tapper": make_tapper}
    run_spec(spec, local_dir, workers=2, progress=False, factories=factories)
    summary = run_spec(spec, ray_dir, workers=2, executor="ray", progress=False, factories=factories)
    assert summary["errors_this_run"] == 0
    local = {r["id"]: r for r in lines(local_dir)}
    remote = {r["id"]: r for r in lines(ray_dir)}
    assert sorted(remote) == sorted(local) == sorted(e.id for e in spec.episodes())
    for eid, rec in local.items():
        assert rec["status"] == "ok", rec.get("error")
        assert {k: remote[eid].get(k) for k in OUTCOME} == {k: rec.get(k) for k in OUTCOME}, eid
        steps = [[s["agent_step"] for s in RunStore(d).trajectory(eid)["trajectory"]] for d in (local_dir, ray_dir)]
        assert steps[0] == steps[1], eid  # step for step, not only the outcome
    assert {r["success"] for r in local.values()} == {True, False}, "the spec should hold successes and failures"


def test_an_actor_killed_mid_episode_is_replaced_and_the_episode_retried(tmp_path):
    spec = small_spec("kill", ["SystemWifiTurnOn"], ["clean", "action_drop_random", "popup_permission"])
    victim = spec.episodes()[2].id
    fn = functools.partial(run_or_die, victim=victim, marker=str(tmp_path / "killed"), how="ray.kill")
    summary = run_spec(spec, tmp_path / "run", workers=2, executor="ray", progress=False, run_fn=fn)
    assert (tmp_path / "killed").exists(), "the victim's actor should have been killed"
    recs = lines(tmp_path / "run")
    assert sorted(r["id"] for r in recs) == sorted(e.id for e in spec.episodes())  # exactly one each
    assert summary["errors_this_run"] == 0 and all(r["status"] == "ok" for r in recs)
    assert {r["id"]: r.get("retries", 0) for r in recs}[victim] == 1


def test_killing_an_actor_from_the_driver_loses_no_episode(tmp_path):
    from experiments.ray.executor import RayExecutor

    spec = small_spec("driverkill", ["SystemWifiTurnOn"], ["clean", "popup_permission"])
    store = RunStore(tmp_path / "run")
    # actors write the run directory themselves (same disk); slow episodes so the kill lands mid-episode
    ex = RayExecutor(workers=2, ship_files=False, run_fn=functools.partial(slow_run, delay=1.0))
    killed = False
    try:
        for rec in ex.run(spec.episodes(), root=str(store.root), screenshots="none", width=96, save_xml=False):
            store.append(rec)
            busy = [s for s in ex._slots if s.state == "busy"]
            if not killed and busy:
                ray.kill(busy[0].actor)  # it is running an episode now
                killed = True
        assert killed
        assert len(ex.actors) == 2  # the dead actor was replaced
    finally:
        ex.close()
    recs = store.records()
    assert sorted(r["id"] for r in recs) == sorted(e.id for e in spec.episodes())
    assert all(r["status"] == "ok" for r in recs)
    assert sum(r.get("retries", 0) for r in recs) >= 1
    assert all(store.trajectory(r["id"]) is not None for r in recs)


def test_an_episode_that_keeps_killing_its_actor_becomes_an_error_and_the_sweep_ends(tmp_path):
    spec = small_spec("poison", ["SystemWifiTurnOn"], ["clean", "action_drop_random"])
    target = spec.episodes()[1]
    victim = target.id
    fn = functools.partial(run_or_die, victim=victim, marker=str(tmp_path / "m"), how="always")
    summary = run_spec(spec, tmp_path / "run", workers=2, executor="ray", progress=False, run_fn=fn, max_attempts=2)
    recs = {r["id"]: r for r in lines(tmp_path / "run")}
    assert sorted(recs) == sorted(e.id for e in spec.episodes())
    assert summary["errors_this_run"] == 1
    bad = recs[victim]
    assert (bad["status"], bad["success"], bad["retries"]) == ("error", False, 2)
    assert "failed on 2 actor(s)" in bad["error"]
    assert (bad["task"], bad["perturbation"], bad["guard"], bad["episode_seed"]) == (
        target.task, target.perturbation, target.guard, target.episode_seed)
    assert all(r["status"] == "ok" for i, r in recs.items() if i != victim)


def test_adb_actors_bind_one_declared_phone_each_and_a_lost_phone_is_given_up(tmp_path):
    spec = small_spec("adb", ["SystemWifiTurnOn"], ["clean", "action_drop_random"])
    spec.devices = DeviceSpec(kind="adb")  # discover: the module's Ray declares fake-a and fake-b
    factory = functools.partial(sim_unless, broken="fake-b")
    summary = run_spec(spec, tmp_path / "run", workers=2, executor="ray", progress=False, device_factory=factory,
                       max_restarts=1)
    recs = lines(tmp_path / "run")
    assert summary["errors_this_run"] == 0 and len(recs) == len(spec.episodes())
    assert {r["device"] for r in recs} == {"adb:fake-a"}  # fake-b's actor never started; nothing ran there


def test_an_episode_past_its_timeout_kills_its_actor_and_runs_again(tmp_path):
    from experiments.ray.executor import RayExecutor

    spec = small_spec("timeout", ["SystemWifiTurnOn"], ["clean", "action_drop_random"])
    victim = spec.episodes()[0].id
    fn = functools.partial(stall_or_skip, victim=victim, marker=str(tmp_path / "stalled"))
    ex = RayExecutor(workers=2, run_fn=fn, episode_timeout_s=2.0)
    try:
        recs = {r["id"]: r for r in ex.run(spec.episodes(), root=str(tmp_path))}
    finally:
        ex.close()
    assert sorted(recs) == sorted(e.id for e in spec.episodes())
    assert recs[victim]["status"] == "ok" and recs[victim]["retries"] == 1
