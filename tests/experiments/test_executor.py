"""The local executor and what it takes for a run to scale with its workers: the longest
episodes (by an estimate known before they run) start first, a finished run's
episodes.jsonl is in spec order whatever the worker count, records and files are the same
at 1 and 2 workers, and screenshots encoded on a helper thread are the bytes made in line."""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import experiments.executor as executor
import experiments.worker as worker
from experiments.executor import LocalExecutor, estimated_cost, longest_first
from experiments.runner import in_spec_order, run
from experiments.spec import AgentSpec, EpisodeSpec, ExperimentSpec
from experiments.store import RunStore

# reference steps: SystemWifiTurnOn 3, SimpleSmsSend 6, ExpenseAddSingle 10 (budgets x4: 12, 24, 40)
TASKS = ["SystemWifiTurnOn", "SimpleSmsSend", "ExpenseAddSingle"]


def _spec(**kw: Any) -> ExperimentSpec:
    base: dict[str, Any] = dict(name="scale", tasks=TASKS, perturbations=["clean", "popup_permission", "trap_visual_obscuration"],
                                agents=[AgentSpec(name="planner", kind="planner")], guard=["off", "rules"],
                                budget_multiplier=4, screenshots="none")
    return ExperimentSpec(**{**base, **kw})


# ------------------------------------------------------------------------------ the estimate and the order


def test_the_estimate_is_the_step_budget_then_the_guard():
    from benchmark import make_task

    eps = {(e.task, e.perturbation, e.guard): e for e in _spec().episodes()}
    for (task, pert, guard), ep in eps.items():
        budget = worker.budget_for(ep, make_task(task, seed=ep.task_seed, i=ep.instance))
        assert estimated_cost(ep) == (budget, int(guard != "off"))
    trap = estimated_cost(eps[("SimpleSmsSend", "trap_visual_obscuration", "off")])
    plain = estimated_cost(eps[("SimpleSmsSend", "popup_permission", "off")])
    assert trap[0] > plain[0]  # AnTrap's budget x1.15 makes it longer
    assert estimated_cost(eps[("SimpleSmsSend", "clean", "rules")]) > estimated_cost(eps[("SimpleSmsSend", "clean", "off")])


def test_an_episode_whose_task_cannot_be_built_is_estimated_cheapest_not_raised():
    ep = EpisodeSpec(task="NoSuchTask", agent=AgentSpec(name="planner", kind="planner"))
    assert estimated_cost(ep) == (0, 0)
    good = _spec().episodes()[0]
    assert longest_first([ep, good]) == [good, ep]


def test_longest_first_orders_by_the_estimate_and_keeps_spec_order_among_equals():
    eps = _spec().episodes()
    ordered = longest_first(eps)
    assert sorted(e.id for e in ordered) == sorted(e.id for e in eps)  # every episode, once
    costs = [estimated_cost(e) for e in ordered]
    assert costs == sorted(costs, reverse=True)
    assert ordered[0].task == "ExpenseAddSingle" and ordered[0].perturbation == "trap_visual_obscuration"
    assert ordered[0].guard == "rules"
    position = {e.id: i for i, e in enumerate(eps)}
    for a, b in zip(ordered, ordered[1:]):
        if estimated_cost(a) == estimated_cost(b):
            assert position[a.id] < position[b.id]
    assert [e.id for e in longest_first(eps)] == [e.id for e in ordered]  # deterministic


class _InlinePool:
    """A process pool that runs each call at once, in this process, and notes what was submitted."""

    submitted: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any):
        pass

    def __enter__(self) -> "_InlinePool":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def submit(self, fn: Any, ep: EpisodeSpec, **kwargs: Any) -> Future:
        _InlinePool.submitted.append(ep.id)
        fut: Future = Future()
        fut.set_result(fn(ep, **kwargs))
        return fut


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_several_workers_are_given_the_longest_episodes_first_one_worker_the_spec_order(monkeypatch, workers):
    monkeypatch.setattr(executor, "ProcessPoolExecutor", _InlinePool)
    monkeypatch.setattr(executor, "warm_up", lambda: None)
    ran: list[str] = []

    def run_one(ep: EpisodeSpec, **kwargs: Any) -> dict[str, Any]:
        ran.append(ep.id)
        return {"id": ep.id}

    monkeypatch.setattr(worker, "run_one", run_one)
    _InlinePool.submitted = []
    eps = _spec().episodes()
    records = list(LocalExecutor(workers).run(eps, root="unused"))
    expected = [e.id for e in (eps if workers == 1 else longest_first(eps))]
    assert expected != [e.id for e in eps] or workers == 1  # the spec's order is not longest first
    assert ran == expected
    assert sorted(r["id"] for r in records) == sorted(e.id for e in eps)
    if workers > 1:
        assert _InlinePool.submitted == expected


# ------------------------------------------------------------------------------ the file in spec order


def _ids(store: RunStore) -> list[str]:
    return [r["id"] for r in store.records()]


def test_a_finished_file_is_put_in_spec_order_byte_for_byte(tmp_path):
    eps = _spec().episodes()[:5]
    store = RunStore(tmp_path)
    store.append({"id": "from-another-spec", "status": "ok", "x": 1.5})
    for i in (3, 0, 4, 1, 2):
        store.append({"id": eps[i].id, "status": "ok", "wall_s": 0.1 * i, "goal": "é ✓"})
    before = sorted(store.path.read_bytes().splitlines(keepends=True))
    assert in_spec_order(store, eps) is True
    assert _ids(store) == ["from-another-spec"] + [e.id for e in eps]  # foreign lines first, as they were
    assert sorted(store.path.read_bytes().splitlines(keepends=True)) == before  # the same lines, moved
    assert in_spec_order(store, eps) is False  # already in order: not rewritten
    assert not list(tmp_path.glob("*.sorting"))


def test_a_file_ending_in_a_cut_line_or_empty_is_left_alone(tmp_path):
    eps = _spec().episodes()[:2]
    store = RunStore(tmp_path)
    assert in_spec_order(store, eps) is False  # no file yet
    store.append({"id": eps[1].id, "status": "ok"})
    store.append({"id": eps[0].id, "status": "ok"})
    with store.path.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "cut')
    data = store.path.read_bytes()
    assert in_spec_order(store, eps) is False
    assert store.path.read_bytes() == data


def _strip_timing(obj: Any) -> Any:
    """A record or trajectory without its clock readings (they differ from run to run)."""
    if isinstance(obj, dict):
        return {k: _strip_timing(v) for k, v in obj.items()
                if k not in ("wall_s", "timing_ms", "timing_s", "guard_ms", "guard_ms_median")}
    if isinstance(obj, list):
        return [_strip_timing(v) for v in obj]
    return obj


def _contents(out: Path) -> tuple[list[dict[str, Any]], dict[str, str]]:
    records = [_strip_timing(json.loads(line)) for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines()]
    files = {}
    for f in sorted((out / "episodes").rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            if f.name == "trajectory.json":
                data = json.dumps(_strip_timing(json.loads(data)), sort_keys=True).encode()
            files[str(f.relative_to(out))] = hashlib.sha256(data).hexdigest()
    return records, files


def test_one_and_two_workers_write_the_same_records_and_files_in_spec_order(tmp_path):
    spec = _spec(tasks=["SystemWifiTurnOn", "ExpenseAddSingle"], perturbations=["clean", "popup_permission"],
                 screenshots="all")
    eps = spec.episodes()
    assert [e.id for e in longest_first(eps)] != [e.id for e in eps]  # two workers start them in another order
    one, two = tmp_path / "one", tmp_path / "two"
    assert run(spec, one, workers=1, progress=False)["workers"] == 1
    assert run(spec, two, workers=2, progress=False)["workers"] == 2
    rec1, files1 = _contents(one)
    rec2, files2 = _contents(two)
    assert [r["id"] for r in rec1] == [r["id"] for r in rec2] == [e.id for e in eps]
    assert rec1 == rec2
    assert any(name.endswith(".jpg") for name in files1)
    assert files1 == files2


# ------------------------------------------------------------------------------ screenshots on a helper thread


def test_screenshots_from_the_helper_thread_are_the_bytes_made_in_line(tmp_path, monkeypatch):
    spec = _spec(tasks=["SystemWifiTurnOn"], perturbations=["popup_permission"], guard=["off"], screenshots="all")
    ep = spec.episodes()[0]
    worker.run_one(ep, root=str(tmp_path / "thread"), screenshots="all")

    def in_line(self: Any, img: Any) -> Future:
        fut: Future = Future()
        fut.set_result(worker._jpeg(img, self.width))
        return fut

    monkeypatch.setattr(worker._Encoder, "submit", in_line)
    worker.run_one(ep, root=str(tmp_path / "inline"), screenshots="all")
    shots = sorted((tmp_path / "inline" / "episodes" / ep.id).glob("*.jpg"))
    assert len(shots) >= 2
    for shot in shots:
        assert (tmp_path / "thread" / "episodes" / ep.id / shot.name).read_bytes() == shot.read_bytes()


def test_at_most_shots_in_flight_frames_wait_for_the_encoder(monkeypatch):
    gate = threading.Event()

    def slow_jpeg(img: Any, width: int) -> bytes:
        gate.wait()
        return b"jpeg"

    from PIL import Image

    monkeypatch.setattr(worker, "_jpeg", slow_jpeg)
    frame = Image.new("RGB", (8, 16))
    enc = worker._Encoder(360)
    try:
        futures = [enc.submit(frame) for _ in range(worker.SHOTS_IN_FLIGHT)]  # none of them blocks
        extra = threading.Thread(target=enc.submit, args=(frame,), daemon=True)
        extra.start()
        extra.join(timeout=0.3)
        assert extra.is_alive(), "a frame beyond SHOTS_IN_FLIGHT was taken while the encoder was stuck"
        gate.set()
        extra.join(timeout=30)
        assert not extra.is_alive()
        assert [f.result() for f in futures] == [b"jpeg"] * worker.SHOTS_IN_FLIGHT
    finally:
        gate.set()
        enc.close()


def test_a_workers_phone_remembers_its_recent_frames_and_shows_the_same_screens():
    """Each worker's phone keeps its last ``WORKER_FRAMES`` frames: the second run of an episode is served
    from them, and what it observes is what a phone without the memo observes."""
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import ReferenceAgent
    from experiments.worker import WORKER_FRAMES, sim_device

    def episode(device):
        task = make_task("ContactsAddContact")
        seen = []
        run_episode(device, task, ReferenceAgent(task.reference_solution()),
                    on_observation=lambda i, obs: seen.append((obs.xml, obs.screenshot.tobytes())))
        return seen

    phone = sim_device()
    memo = phone.frame_memo
    assert memo is not None and memo.max_frames == WORKER_FRAMES
    first = episode(phone)
    hits = memo.hits
    assert episode(phone) == first == episode(SimDevice())
    assert memo.hits > hits and len(memo) <= WORKER_FRAMES
