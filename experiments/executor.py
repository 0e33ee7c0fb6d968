"""Executors run episodes and stream records back; the runner does not know which it has.

``LocalExecutor`` uses worker processes (one simulated device each); with one worker
it runs in-process. With several it starts the longest episodes first (:func:`longest_first`):
episode times are heavy-tailed (an episode that runs to its step budget takes 100x the
median), and in spec order the longest ones started last left every other worker idle at
the end. The Ray executor (``experiments.ray.executor``) implements the same two methods."""

from __future__ import annotations

import gc
import inspect
import multiprocessing as mp
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Optional, Protocol, get_args

from experiments.spec import EpisodeSpec
from ttir.core.errors import ConfigError, did_you_mean

ExecutorName = Literal["local", "ray"]  # where a run's episodes run: worker processes here, or a Ray cluster
EXECUTOR_NAMES: tuple[ExecutorName, ...] = get_args(ExecutorName)

RunFn = Callable[..., dict[str, Any]]


class Executor(Protocol):
    def run(self, episodes: Iterable[EpisodeSpec], **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Run every episode; yield each record as soon as it is finished."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    def __init__(self, workers: int = 1):
        if workers < 1:
            raise ValueError(f"workers={workers} must be >= 1")
        self.workers = workers

    def run(self, episodes: Iterable[EpisodeSpec], **kwargs: Any) -> Iterator[dict[str, Any]]:
        from experiments.python_agents import register_all
        from experiments.worker import run_one

        todo = list(episodes)
        if self.workers > 1:
            todo = longest_first(todo)  # the records come back in another order: the runner sorts the file at the end
        factories = kwargs.pop("factories", None)
        register_all(factories)  # python agents' factories: this process has them, forked workers inherit them
        if self.workers == 1:
            for ep in todo:
                yield run_one(ep, **kwargs)
            return
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        if factories and ctx.get_start_method() != "fork":
            kwargs["factories"] = factories  # spawned workers: sent along (module-level functions only)
        if ctx.get_start_method() == "fork":
            warm_up()  # forked workers inherit the imports and caches instead of each paying for them
            # and no garbage: a forked worker would collect the parent's unreachable objects itself, running
            # finalisers that are not fork-safe there (a dropped Ray client's gRPC queue crashed a worker so,
            # in a process that had called ray.init) and copying the pages they sit on
            gc.collect()
        from experiments.process_lifetime import die_with_parent

        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=die_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            pending: set[Future] = set()
            it = iter(todo)
            # keep a small queue per worker so a kill loses little and results stream in order of completion
            for ep in it:
                pending.add(pool.submit(run_one, ep, **kwargs))
                if len(pending) >= 2 * self.workers:
                    break
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    yield f.result()
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(run_one, nxt, **kwargs))

    def close(self) -> None:
        pass


def estimated_cost(ep: EpisodeSpec, tasks: Optional[dict[tuple[str, int, int], Any]] = None) -> tuple[int, int]:
    """What ``ep`` is expected to cost, known before it runs (larger runs longer): its step budget
    (``worker.budget_for``: multiplier x the task's reference steps, x the trap factor), then 1 for a
    guarded episode (the guard adds to every step). Episodes that never finish run to their budget,
    and they are the long tail. An episode whose task cannot be built costs (0, 0): it fails at once.
    ``tasks``: built tasks by (name, seed, instance), shared between calls (each is built once)."""
    from benchmark import make_task
    from experiments.worker import budget_for

    key = (ep.task, ep.task_seed, ep.instance)
    built = tasks if tasks is not None else {}
    try:
        if key not in built:
            built[key] = make_task(ep.task, seed=ep.task_seed, i=ep.instance)
        budget = budget_for(ep, built[key])
    except Exception:  # noqa: BLE001 - the worker records the error; the order only has to be made
        return (0, 0)
    return (budget, int(ep.guard != "off"))


def longest_first(episodes: Iterable[EpisodeSpec]) -> list[EpisodeSpec]:
    """``episodes`` by :func:`estimated_cost`, the largest first; equal estimates keep their order
    (deterministic: the same spec is always scheduled the same way)."""
    todo = list(episodes)
    tasks: dict[tuple[str, int, int], Any] = {}
    costs = [estimated_cost(ep, tasks) for ep in todo]
    order = sorted(range(len(todo)), key=lambda i: costs[i], reverse=True)  # stable: ties stay in spec order
    return [todo[i] for i in order]


def warm_up() -> None:
    """Import what every episode needs and render one frame (fonts, layout caches)."""
    import diagnosers  # noqa: F401
    import perturb  # noqa: F401
    import recoveries  # noqa: F401
    import ttir.guarded.middleware  # noqa: F401
    from benchmark import SimDevice, task_names
    from benchmark.agents import OracleAgent  # noqa: F401

    task_names()
    SimDevice().observe()


# the run's own keyword arguments (experiments.run, experiments.runner.run): the rest go to the executor
RUN_ARGUMENTS = ("workers", "executor", "progress", "retry_errors", "force", "agents", "factories")


def check_executor(kind: str, options: Mapping[str, Any]) -> None:
    """Refuse an unknown executor or an option it does not take, before a run folder is touched
    (an unknown one was found only after the folder was claimed; an option the local executor
    does not take was dropped without a word).

    Args:
        kind: ``local`` or ``ray``.
        options: the executor's options, ``devices`` (the spec's phones) among them.

    Raises:
        ValueError: the executor or an option is unknown (the message lists what it takes).
        ConfigError: ``address`` names no Ray head node that accepts a connection.
    """
    if kind not in EXECUTOR_NAMES:
        raise ValueError(f"executor={kind!r} is unknown; expected {' or '.join(EXECUTOR_NAMES)}"
                         f"{did_you_mean(str(kind), EXECUTOR_NAMES)}")
    extra = sorted(set(options) - {"devices"})
    for name in extra:  # a misspelt argument of the run itself lands among the executor's options
        hint = did_you_mean(name, RUN_ARGUMENTS)
        if hint:
            raise ValueError(f"{name}: not an argument of run, nor an option of its executor{hint}")
    if kind == "local" and extra:
        raise ValueError(f"executor option(s) {', '.join(extra)}: the local executor takes none; address and the "
                         "others are the Ray executor's (executor='ray'; --executor ray on the command line)")
    devices = options.get("devices")
    if kind == "local" and devices is not None and getattr(devices, "kind", "sim") != "sim":
        raise ValueError(f"devices.kind={devices.kind!r} runs on the Ray executor (--executor ray); "
                         "the local executor drives simulated phones only (devices.kind='sim')")
    if kind == "ray" and extra:
        from experiments.ray.executor import RayExecutor, address_problem  # ray is imported when a cluster starts

        known = [n for n in inspect.signature(RayExecutor).parameters if n not in ("workers", "devices")]
        unknown = [n for n in extra if n not in known]
        if unknown:
            raise ValueError(f"executor option(s) {', '.join(unknown)}: the Ray executor takes {', '.join(known)}"
                             f"{did_you_mean(unknown[0], known)}")
        problem = address_problem(options["address"]) if options.get("address") else None
        if problem is not None:  # ray.init would retry it for minutes
            raise ConfigError(f"address={options['address']!r}: {problem}")


def make_executor(kind: str = "local", workers: int = 1, **options: Any) -> Executor:
    check_executor(kind, options)
    if kind == "local":
        return LocalExecutor(workers)
    if kind == "ray":
        from experiments.ray.executor import RayExecutor

        return RayExecutor(workers=workers, **options)
    raise AssertionError(f"executor={kind!r}: check_executor let it through")  # pragma: no cover
