"""``ttir run SPEC``: every combination, in worker processes, resumable, with a progress bar."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from loguru import logger

from experiments.executor import check_executor, make_executor
from experiments.spec import EpisodeSpec, ExperimentSpec
from experiments.store import RunStore, check_run_folder

WORKERS_PER_CORE = 2  # simulated episodes are CPU-bound: more processes than this only add memory


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # what this process may use (containers, taskset)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(requested: int, episodes: int, executor: str = "local") -> tuple[int, Optional[str]]:
    """How many workers to start for ``episodes`` episodes, and why fewer than ``requested`` (or None).

    Never more than the episodes to run, nor (local processes) than ``WORKERS_PER_CORE`` x the cores."""
    n, why = requested, None
    if executor == "local":
        cores = available_cores()
        if n > WORKERS_PER_CORE * cores:
            n, why = WORKERS_PER_CORE * cores, f"{WORKERS_PER_CORE} per core on {cores} core(s)"
    if n > max(1, episodes):
        n, why = max(1, episodes), f"only {episodes} episode(s) to run"
    return n, why


def run(spec: ExperimentSpec, out: Path | str, *, workers: Optional[int] = None, executor: str = "local",
        progress: bool = True, retry_errors: bool = False, factories: Optional[Mapping[str, Any]] = None,
        force: bool = False, **executor_options: Any) -> dict[str, Any]:
    """Run ``spec`` into ``out``; finished episodes found there are skipped (resume).

    Args:
        spec: the experiment spec.
        out: the run folder (held by this process while it runs: a second run on it is refused).
        workers: worker processes (default: the spec's).
        executor: ``local`` or ``ray``.
        progress: show a progress bar.
        retry_errors: episodes recorded as errors are run again (their records replaced).
        factories: {agent name: factory} for the spec's kind python agents, handed over from Python.
        force: resume a folder whose episodes came from another spec (otherwise refused).
        executor_options: passed to the executor (``address`` for Ray).

    Returns:
        The run's summary (also written to ``out/run.json``).

    Raises:
        ValueError: ``workers`` is not a whole number of 1 or more, or ``executor`` or one of its
            options is unknown (nothing is written).
        NotADirectoryError: ``out`` is an existing file.
        ConfigError: ``out`` is a folder of other files, not a run's (nothing is written).
        RunFolderBusy: another process runs into ``out``.
        SpecChanged: ``out`` holds episodes of another spec and ``force`` is not set.
    """
    from experiments.python_agents import factories_registered

    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        # before the run folder is touched: a bad count leaves nothing behind
        raise ValueError(f"workers={workers!r} must be a whole number of worker processes, 1 or more; "
                         f"leave it out to use the spec's `workers` ({spec.workers})")
    check_executor(executor, {**executor_options, "devices": spec.devices})  # before the run folder is touched
    with factories_registered(factories):  # this run's only: not a later spec's agent of the same name
        spec.check()  # a bad parameter fails now, not once per episode
        check_run_folder(Path(out))
        store = RunStore(out)
        with store.exclusive():
            store.claim_spec(spec.model_dump(mode="json"), force=force)
            return _run(spec, store, workers, executor, progress, retry_errors, factories, executor_options)


def _run(spec: ExperimentSpec, store: RunStore, workers: Optional[int], executor: str, progress: bool,
         retry_errors: bool, factories: Optional[Mapping[str, Any]], executor_options: dict[str, Any]) -> dict[str, Any]:
    episodes = spec.episodes()
    if spec.guard_config and all(mode == "off" for mode in spec.guard):
        logger.warning("{}: guard_config is set, and every guard mode of the spec is off: it applies to no "
                       "episode (add a mode to `guard`, e.g. [off, rules])", spec.name)
    if retry_errors:
        failed = {r["id"] for r in store.records() if r.get("status") == "error"}
        if failed:
            logger.info("{}: running {} episode(s) that raised again", spec.name, store.drop(failed))
    done = store.done_ids()
    todo = [e for e in episodes if e.id not in done]
    requested = spec.workers if workers is None else workers
    n_workers, why = worker_count(requested, len(todo), executor)
    if why is not None:
        logger.info("{}: {} worker(s) instead of the {} asked for: {}", spec.name, n_workers, requested, why)
    logger.info("{}: {} episodes, {} already done, {} to run on {} worker(s)", spec.name, len(episodes),
                len(episodes) - len(todo), len(todo), n_workers)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(episodes), initial=len(episodes) - len(todo), unit="ep", dynamic_ncols=True,
                   desc=spec.name, smoothing=0.1)
    ok = succ = errors = 0
    t0 = time.perf_counter()
    ex = make_executor(executor, n_workers, devices=spec.devices, **executor_options)
    try:
        extra = {"factories": dict(factories)} if factories else {}
        for rec in ex.run(todo, root=str(store.root), screenshots=spec.screenshots, width=spec.screenshot_width,
                          save_xml=spec.save_xml, **extra):
            store.append(rec)
            ok += 1
            succ += bool(rec.get("success"))
            errors += rec.get("status") == "error"
            if bar is not None:
                bar.update(1)
                bar.set_postfix(success=f"{succ}/{ok}", errors=errors)
    finally:
        ex.close()
        if bar is not None:
            bar.close()
    in_spec_order(store, episodes)  # records were appended as they finished (the longest started first)
    elapsed = time.perf_counter() - t0
    summary = {"episodes": len(episodes), "ran": ok, "skipped": len(episodes) - len(todo), "successes_this_run": succ,
               "errors_this_run": errors, "workers": n_workers, "elapsed_s": round(elapsed, 2),
               "episodes_per_s": round(ok / elapsed, 3) if elapsed > 0 and ok else None}
    store.write_meta("run.json", summary)
    return summary


def in_spec_order(store: RunStore, episodes: Iterable[EpisodeSpec]) -> bool:
    """Put the lines of ``store``'s episodes.jsonl in the order of ``episodes`` (the spec's), once a run
    has finished: workers finish episodes in any order, and reports list agents, perturbations and
    tasks in the order their records come, so a finished run's file reads the same at any worker count.
    Lines of no episode in ``episodes`` (another spec's, kept with ``--force``) stay first, as they were.
    The file is written beside itself and renamed into place (a crash keeps one or the other).

    Returns:
        Whether the file was rewritten (False when already in order, empty, or ending in a cut line).
    """
    path = store.path
    data = path.read_bytes() if path.exists() else b""
    if not data.endswith(b"\n"):
        return False  # empty, or a line cut short by a crash: left for the next append to trim
    rank = {ep.id: i for i, ep in enumerate(episodes)}
    lines = data.splitlines(keepends=True)

    def key(line: bytes) -> int:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            return -1
        rid = rec.get("id") if isinstance(rec, dict) else None
        return rank.get(rid, -1) if isinstance(rid, str) else -1

    keys = [key(line) for line in lines]
    if all(a <= b for a, b in zip(keys, keys[1:])):
        return False
    order = sorted(range(len(lines)), key=keys.__getitem__)  # stable
    tmp = path.with_name(path.name + ".sorting")
    with tmp.open("wb") as fh:
        fh.writelines(lines[i] for i in order)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return True
