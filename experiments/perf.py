"""Speed, measured not guessed: ``python -m experiments.perf``.

Reports medians and ratios measured in ONE run (shared machines are noisy, so
absolute numbers from different runs are not comparable; ratios within a run are).

Sections:
- ``sim``    the simulated device's step: execute + observe (render + XML) at 1080x2400;
- ``guard``  the free-tier guard's added time per step (rules and screen model; the rules alone
             beside it, and the difference), and its ratio to a simulated step;
- ``runner`` episodes per second of a sweep at 1, 2, 4, … worker processes up to the cores (a small
             built-in sweep, or ``--spec``; see ``measure_runner`` for the 16-core command);
- ``ray``    the same small sweep on the local process pool and on the Ray executor (2 workers each);
- ``adb``    one served-phone step through the real adb server (tap + screencap + dump) vs in-process.
- ``proxy``  what ``ttir proxy`` adds to an agent's ``input tap`` on a served phone: with a fresh
             screen the agent pulled through it, and without (the guard dumps).
- ``ocr``    text read from a 1080x2400 screenshot (the ``ttir[ocr]`` extra): uncached, and a cache hit by
             content (a new capture of the same screen) and by the same image object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Optional


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return 0.0
    k = min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))
    return s[k]


def _stats(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median_ms": statistics.median(values) if values else 0.0,
            "p95_ms": _pct(values, 0.95), "mean_ms": statistics.fmean(values) if values else 0.0}


def measure_sim(rounds: int = 3) -> dict[str, Any]:
    """Per-step cost of execute + observe over every task's reference solution."""
    from benchmark import SimDevice, make_task, task_names
    from benchmark.plan import ground

    times: list[float] = []
    device = SimDevice()
    for _ in range(rounds):
        for name in task_names():
            task = make_task(name)
            obs = device.reset(task)
            for step in task.reference_solution():
                action = ground(step, obs)
                if action is None:
                    break
                t0 = time.perf_counter()
                try:
                    device.execute(action)
                except Exception:  # noqa: BLE001 - a timing run, not a correctness run
                    pass
                obs = device.observe()
                times.append((time.perf_counter() - t0) * 1000)
    out = _stats(times)
    out["screen"] = "1080x2400"
    return out


def measure_guard(rounds: int = 2) -> dict[str, Any]:
    """The rule-tier guard's own time per step around the reference agent, clean runs."""
    import ttir
    from benchmark import SimDevice, make_task, run_episode, task_names
    from benchmark.agents import ReferenceAgent

    guard_ms: list[float] = []
    rules_alone_ms: list[float] = []
    step_ms: list[float] = []
    device = SimDevice()
    cfg = ttir.TTIRConfig.with_mode("rules")  # the free tier: rules and the screen model
    alone = cfg.override({"interference.screen_model": False})
    for _ in range(rounds):
        for name in task_names():
            # the same episode with and without the screen model, alternating, so both see the same machine
            for config, sink in ((cfg, guard_ms), (alone, rules_alone_ms)):
                task = make_task(name)
                agent = ttir.guard(ReferenceAgent(task.reference_solution()), config=config)
                result = run_episode(device, task, agent)
                sink.extend(u.guard_ms for u in agent.report.usage)
                if config is cfg:
                    step_ms.extend(s.timing_ms.get("device", 0.0) for s in result.trajectory if "device" in s.timing_ms)
    g, a, s = _stats(guard_ms), _stats(rules_alone_ms), _stats(step_ms)
    return {"guard": g, "guard_rules_alone": a, "screen_model_added_ms": g["median_ms"] - a["median_ms"],
            "sim_step": s, "ratio_guard_to_step": (g["median_ms"] / s["median_ms"]) if s["median_ms"] else None}


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, … up to ``cores``, and ``cores`` itself (1, 2, 4, 6 on six)."""
    counts = [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    return counts + ([cores] if cores not in counts else [])


def _spec_for_runner(spec: Optional[str], tasks: Optional[int]) -> Any:
    """The sweep to time: the built-in small one (``tasks`` of the suite's tasks, 16 by default; 128
    episodes, no screenshots), or the spec file ``spec``, with only ``tasks`` of its tasks when given."""
    from benchmark import task_names
    from experiments.spec import AgentSpec, ExperimentSpec

    if spec is None:
        n = tasks or 16
        names = task_names()[::max(1, len(task_names()) // n)][:n]
        return ExperimentSpec(name="perf", tasks=names,
                              perturbations=["clean", "font_size_large", "action_drop_random", "popup_permission"],
                              agents=[AgentSpec(name="planner", kind="planner")], guard=["off", "rules"],
                              screenshots="none")
    full = ExperimentSpec.from_yaml(spec)
    if not tasks:
        return full
    every = full.task_list()
    keep = every[::max(1, len(every) // tasks)][:tasks]

    class SomeTasks(ExperimentSpec):
        """The spec's episodes of some of its tasks, each as the whole spec runs it (naming fewer ``tasks``
        would change them: ``pairing: paper`` gives each task the perturbation of its place in the list)."""

        keep_tasks: list[str]

        def episodes(self) -> list[Any]:
            return [e for e in super().episodes() if e.task in self.keep_tasks]

    return SomeTasks.model_validate({**full.model_dump(), "keep_tasks": keep})


def measure_runner(tasks: Optional[int] = None, spec: Optional[str] = None, workers: Optional[list[int]] = None,
                   rounds: int = 2) -> dict[str, Any]:
    """Episodes per second of one sweep at 1, 2, 4, … worker processes (up to this machine's cores),
    alternating the counts round by round, in one run: the ratios are what carry over between machines.

    The default sweep is small (128 episodes, ~1 min on 2 cores). To time the AndroidReality sweep (384
    episodes, screenshots of failures) as it was timed on 16 cores (225.6 s with 2 workers, 60.2 s with
    16), in about 7 minutes on 16 cores (8 before the longest-first scheduling)::

        python -m experiments.perf runner --spec experiments/specs/androidreality.yaml \
            --workers 2,4,8,16 --rounds 1 --json runner-16.json

    1 worker is left out there: alone it would take as long as all the others together. With it (1, 2, 4,
    8, 16: ``--workers`` left out), ``--tasks 24`` keeps the time (192 episodes, each as the whole sweep
    runs it), but without the sweep's longest episodes (RecipeAddMultipleRecipes): 16 workers then wait
    on a 20 s episode, and the figure says less.

    Args:
        tasks: run only this many of the sweep's tasks (evenly spaced; the built-in sweep: 16).
        spec: a spec file to time instead of the built-in sweep (its ``workers`` is ignored).
        workers: the worker counts (default :func:`worker_counts` of the cores).
        rounds: runs per count (the median is reported).

    Returns:
        ``workers`` {count: episodes/s}, ``speedup`` and ``efficiency_vs_linear`` {count: ...} against the
        smallest count (``baseline_workers``), ``machine_speedup`` {count: what that many processes buy for
        pure CPU work here: the ceiling}, ``elapsed_s`` {count: s}, ``cores``; and, as before, the 1- and
        2-worker figures (None when a count was not run).
    """
    import shutil
    import tempfile

    from experiments.runner import available_cores, run, worker_count

    sweep = _spec_for_runner(spec, tasks)
    n_episodes = len(sweep.episodes())
    cores = available_cores()
    counts = sorted(set(workers or worker_counts(cores)))
    for n in counts:
        started, why = worker_count(n, n_episodes)
        if started != n:
            raise ValueError(f"workers={n}: the runner would start {started} ({why})")
    rates: dict[int, list[float]] = {n: [] for n in counts}
    elapsed: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(rounds):
        for n in counts:
            out = tempfile.mkdtemp(prefix="ttir-perf-")
            try:
                summary = run(sweep, out, workers=n, progress=False)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            rates[n].append(summary["episodes_per_s"])
            elapsed[n].append(summary["elapsed_s"])
            print(f"runner: {n} worker(s): {n_episodes} episodes in {summary['elapsed_s']:.1f} s", file=sys.stderr)
    rate = {n: statistics.median(v) for n, v in rates.items()}
    base = counts[0]
    speedup = {n: rate[n] / rate[base] for n in counts}
    machine = {n: machine_speedup_at(n) for n in counts if n > 1}
    one, two = rate.get(1), rate.get(2)
    speedup_2 = two / one if one and two else None
    machine_2 = machine_speedup() if 2 in counts else None
    return {"spec": spec or "built-in", "episodes": n_episodes, "cores": cores, "os_cpu_count": os.cpu_count(),
            "rounds": rounds, "baseline_workers": base,
            "workers": {str(n): rate[n] for n in counts},
            "elapsed_s": {str(n): statistics.median(elapsed[n]) for n in counts},
            "speedup": {str(n): speedup[n] for n in counts},
            "efficiency_vs_linear": {str(n): speedup[n] / (n / base) for n in counts},
            "machine_speedup": {str(n): machine[n] for n in machine},
            # the figures of before (1 and 2 workers)
            "episodes_per_s_1_worker": one, "episodes_per_s_2_workers": two,
            "speedup_2_vs_1": speedup_2, "machine_speedup_2_vs_1": machine_2,
            "parallel_efficiency": (speedup_2 / machine_2) if speedup_2 and machine_2 else None,
            "samples": {str(k): v for k, v in rates.items()}}


def machine_speedup_at(workers: int, n: int = 3_000_000) -> float:
    """What ``workers`` processes buy over one on this machine for pure CPU work (2 jobs each)."""
    from concurrent.futures import ProcessPoolExecutor

    times = {}
    for w in (1, workers):
        t0 = time.perf_counter()
        with ProcessPoolExecutor(w) as ex:
            list(ex.map(_spin, [n] * (2 * workers)))
        times[w] = time.perf_counter() - t0
    return times[1] / times[workers]


def _spin(n: int) -> int:
    s = 0
    for i in range(n):
        s += i * i
    return s


def machine_speedup(n: int = 3_000_000, jobs: int = 8) -> float:
    """What 2 processes buy on this machine for pure CPU work (the ceiling for any runner):
    shared or throttled vCPUs often give far less than 2x."""
    from concurrent.futures import ProcessPoolExecutor

    times = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        with ProcessPoolExecutor(workers) as ex:
            list(ex.map(_spin, [n] * jobs))
        times[workers] = time.perf_counter() - t0
    return times[1] / times[2]


def measure_ray() -> dict[str, Any]:
    """Local process pool vs Ray executor (skipped, with a message, without Ray)."""
    from experiments.ray.perf import measure_ray as measure

    return measure()


def measure_adb() -> dict[str, Any]:
    """A ``ttir serve-adb`` phone through the real adb server vs the in-process simulator."""
    from experiments.adb_perf import measure_adb as measure

    return measure()


def measure_proxy() -> dict[str, Any]:
    """Median added ms per ``input tap`` through ``ttir proxy`` vs direct, with and without a fresh agent-pulled screen."""
    from experiments.proxy_perf import measure_proxy as measure

    return measure()


def measure_ocr(screens: int = 12) -> dict[str, Any]:
    """OCR per simulated 1080x2400 screen (each task's first screens): uncached (the cache
    cleared before each read), a content hit (an identical new image) and an object hit."""
    from benchmark import SimDevice, make_task, task_names
    from benchmark.plan import ground
    from ttir.core import ocr
    from ttir.core.types import Observation

    ocr.require()
    images = []
    device = SimDevice()
    for name in task_names():
        if len(images) >= screens:
            break
        task = make_task(name)
        obs = device.reset(task)
        images.append(obs.screenshot)
        step = next(iter(task.reference_solution()), None)
        action = ground(step, obs) if step is not None else None
        if action is not None and len(images) < screens:
            device.execute(action)
            images.append(device.observe().screenshot)
    Observation.from_screenshot(images[0])  # the engine loads once per process: not part of a read
    uncached, content, same = [], [], []
    lines = []
    for img in images:
        ocr.CACHE.clear()
        t0 = time.perf_counter()
        lines.append(len(Observation.from_screenshot(img).elements))
        uncached.append((time.perf_counter() - t0) * 1000)
        for _ in range(5):
            copy = img.copy()
            t0 = time.perf_counter()
            Observation.from_screenshot(copy)
            content.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            Observation.from_screenshot(img)
            same.append((time.perf_counter() - t0) * 1000)
    return {"screen": "x".join(map(str, images[0].size)), "screens": len(images),
            "lines_per_screen": statistics.median(lines), "uncached": _stats(uncached),
            "hit_same_content": _stats(content), "hit_same_image": _stats(same),
            "threads_env": ocr.THREADS_ENV}


def measure_model_load() -> dict[str, Any]:
    """100 async guarded episodes at once against a slow endpoint: step times against the deadline, calls accounted."""
    from experiments.model_load_perf import measure_model_load as measure

    return measure()


def measure_adbd_limits() -> dict[str, Any]:
    """What one hostile client makes a served phone hold (memory, threads), and a good client's wait meanwhile."""
    from experiments.adbd_limits_probe import measure_adbd_limits as measure

    return measure()


SECTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "sim": measure_sim,
    "guard": measure_guard,
    "runner": measure_runner,
    "ray": measure_ray,
    "adb": measure_adb,
    "proxy": measure_proxy,
    "ocr": measure_ocr,
    "model_load": measure_model_load,
    "adbd_limits": measure_adbd_limits,
}


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.perf", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sections", nargs="*", default=list(SECTIONS), help=f"which to run (default all): {', '.join(SECTIONS)}")
    p.add_argument("--json", dest="json_path", default=None, help="also write the figures to this JSON file")
    r = p.add_argument_group("runner")
    r.add_argument("--spec", default=None, help="time this spec file instead of the built-in small sweep")
    r.add_argument("--tasks", type=int, default=None, help="only this many of the sweep's tasks (evenly spaced)")
    r.add_argument("--workers", default=None, help="worker counts, e.g. 2,4,8,16 (default 1, 2, 4, … up to the cores)")
    r.add_argument("--rounds", type=int, default=2, help="runs per worker count (default 2; the median is kept)")
    args = p.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        p.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    try:
        counts = [int(x) for x in args.workers.split(",")] if args.workers else None
    except ValueError:
        p.error(f"--workers {args.workers!r}: expected counts separated by commas, e.g. 2,4,8,16")
    if (counts and min(counts) < 1) or args.rounds < 1 or (args.tasks is not None and args.tasks < 1):
        p.error("--workers, --rounds and --tasks take numbers of 1 or more")
    runner_options = {"spec": args.spec, "tasks": args.tasks, "workers": counts, "rounds": args.rounds}
    results: dict[str, Any] = {}
    for name in args.sections:
        print(f"measuring {name} …", file=sys.stderr)
        if name == "runner":
            try:
                results[name] = measure_runner(**runner_options)
            except (ValueError, FileNotFoundError) as exc:  # a spec that cannot be read, a count the runner would not start
                p.error(f"runner: {exc}")
        else:
            results[name] = SECTIONS[name]()
        print(f"{name}: {json.dumps(results[name], indent=2)}")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
