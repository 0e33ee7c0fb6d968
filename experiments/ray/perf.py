"""``python -m experiments.perf ray``: the local process pool vs the Ray executor, measured in one run.

Both run the same small sweep with 2 workers, alternating (local, ray, local, ray, …)
so that machine noise hits both; medians are reported with their ratio. Ray's
costs are split into the fixed ones (starting Ray, starting the actors) and the
per-episode one (the driver round trip, measured on episodes that do nothing).
"""

from __future__ import annotations

import logging
import statistics
import tempfile
import time
from typing import Any

WORKERS = 2
ROUNDS = 2
NOOP_EPISODES = 200


def noop_episode(ep: Any, **_: Any) -> dict[str, Any]:
    """An episode that does nothing: what remains of its time is the executor's own."""
    return {"id": ep.id, "status": "ok", "success": True}


def _spec() -> Any:
    from experiments.spec import AgentSpec, ExperimentSpec

    return ExperimentSpec(name="perf-ray", tasks=["SystemWifiTurnOn", "ExpenseAddSingle", "SimpleSmsSend", "ClockTimerEntry"],
                          perturbations=["clean", "popup_permission", "action_drop_random"],
                          agents=[AgentSpec(name="planner", kind="planner")], guard=["off", "rules"],
                          budget_multiplier=4, workers=WORKERS, screenshots="none")


def _sweep(spec: Any, executor: str) -> tuple[float, float]:
    """(elapsed seconds, summed per-episode wall seconds) of one fresh run."""
    from experiments.runner import run
    from experiments.store import RunStore

    options = {"ship_files": False} if executor == "ray" else {}
    with tempfile.TemporaryDirectory(prefix="ttir-perf-") as out:
        t0 = time.perf_counter()
        run(spec, out, workers=WORKERS, executor=executor, progress=False, **options)
        elapsed = time.perf_counter() - t0
        busy = sum(r.get("wall_s", 0.0) for r in RunStore(out).records())
    return elapsed, busy


def measure_ray(rounds: int = ROUNDS) -> dict[str, Any]:
    try:
        import ray
    except ImportError:
        return {"skipped": "ray is not installed (pip install 'ttir[ray]')"}
    from experiments.ray.executor import RayExecutor

    if ray.is_initialized():
        return {"skipped": "Ray is already initialised in this process; run `python -m experiments.perf ray` alone"}
    spec = _spec()
    n = len(spec.episodes())
    t0 = time.perf_counter()
    ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray_start_s = time.perf_counter() - t0
    try:
        runs: dict[str, list[tuple[float, float]]] = {"local": [], "ray": []}
        for _ in range(rounds):
            for kind in ("local", "ray"):
                runs[kind].append(_sweep(spec, kind))
        # the driver round trip alone: episodes that do nothing, on actors already started
        ex = RayExecutor(workers=WORKERS, ship_files=False, run_fn=noop_episode)
        try:
            eps = spec.episodes() * (NOOP_EPISODES // n + 1)
            t_start = time.perf_counter()
            list(ex.run(eps[:WORKERS], root=tempfile.gettempdir()))  # starts the actors
            actor_start_s = time.perf_counter() - t_start
            t1 = time.perf_counter()
            list(ex.run(eps[:NOOP_EPISODES], root=tempfile.gettempdir()))
            noop_ms = (time.perf_counter() - t1) * 1000 / NOOP_EPISODES
        finally:
            ex.close()
    finally:
        ray.shutdown()
    out: dict[str, Any] = {"episodes": n, "workers": WORKERS, "rounds": rounds, "ray_start_s": round(ray_start_s, 2)}
    for kind, values in runs.items():
        elapsed = statistics.median(v[0] for v in values)
        busy = statistics.median(v[1] for v in values)
        out[kind] = {"elapsed_s": round(elapsed, 2), "episodes_per_s": round(n / elapsed, 3),
                     "idle_ms_per_episode": round((elapsed * WORKERS - busy) * 1000 / n, 1)}
    out["ratio_ray_to_local_eps"] = round(out["ray"]["episodes_per_s"] / out["local"]["episodes_per_s"], 3)
    out["ray_extra_s_per_sweep"] = round(out["ray"]["elapsed_s"] - out["local"]["elapsed_s"], 2)
    out["ray_overhead_ms_per_episode"] = round(out["ray_extra_s_per_sweep"] * 1000 / n, 1)
    out["ray_actor_start_s"] = round(actor_start_s, 2)
    out["ray_round_trip_ms_per_noop_episode"] = round(noop_ms, 2)
    return out
