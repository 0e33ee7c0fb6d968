"""experiments package: specs, the runner, metrics and reports.

``experiments.run(spec, agents={"mine": make_agent})`` runs a spec from Python, with
your own agents' factories handed over directly (see :mod:`experiments.python_agents`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Union

from ttir.core.logs import quiet_library

if TYPE_CHECKING:  # pragma: no cover
    from experiments.spec import ExperimentSpec

quiet_library(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it


def run(spec: Union["ExperimentSpec", str, Path, Mapping[str, Any]], out: Union[str, Path, None] = None, *,
        agents: Optional[Mapping[str, Callable[..., Any]]] = None, workers: Optional[int] = None,
        executor: str = "local", progress: bool = True, retry_errors: bool = False, force: bool = False,
        **executor_options: Any) -> dict[str, Any]:
    """Run ``spec`` (a spec file, a mapping or an ExperimentSpec) into ``out`` (default ``runs/<name>``).

    ``agents`` maps agent names to factories, each called as ``factory(facts, **params)``
    per episode (:class:`experiments.python_agents.EpisodeFacts`) and returning an agent.
    A name the spec lists (``{name: mine, kind: python}``, no factory needed) gets its params
    from the spec; a name it does not list is added as a kind python agent without params —
    it replaces the default agent when the spec lists none. Resumable like ``ttir run``
    (one run per folder at a time; a folder holding another spec's episodes is refused
    unless ``force``); returns the run summary.

    Args:
        spec: the path of a spec file, a mapping of one, or an :class:`~experiments.spec.ExperimentSpec`.
        out: the run folder; None: ``runs/<spec name>``.
        agents: ``{agent name: factory}``, each called as ``factory(facts, **params)``.
        workers: worker processes (default: the spec's).
        executor: ``local`` or ``ray``.
        progress: show a progress bar.
        retry_errors: run the episodes recorded as errors again.
        force: resume a folder whose episodes came from another spec.
        **executor_options: passed to the executor (``address`` for Ray).

    Returns:
        The run's summary (also written to ``out/run.json``).

    Raises:
        TypeError: ``spec`` or ``agents`` is none of the kinds above.
        ValueError: the spec is invalid (the message names each bad key), or ``agents`` names a
            spec agent that is not kind ``python``.
        experiments.runner.RunFolderBusy: another process runs into ``out``.
        experiments.runner.SpecChanged: ``out`` holds another spec's episodes and ``force`` is not set.
    """
    from experiments.python_agents import factories_registered
    from experiments.runner import run as run_spec
    from experiments.spec import AgentSpec, ExperimentSpec

    if not isinstance(spec, (str, Path, Mapping, ExperimentSpec)):
        raise TypeError(f"spec={spec!r:.80} ({type(spec).__name__}): expected the path of a spec file, a mapping of "
                        "one or an ExperimentSpec, e.g. experiments.run('experiments/specs/quickstart.yaml')")
    if agents is not None and not isinstance(agents, Mapping):
        raise TypeError(f"agents={agents!r:.80} ({type(agents).__name__}): expected {{agent name: factory}}, e.g. "
                        "agents={'mine': make_agent} with def make_agent(facts, **params) -> Agent")
    with factories_registered(agents):  # for this run only; first: loading the spec builds each agent once
        if isinstance(spec, (str, Path)):
            spec = ExperimentSpec.from_yaml(spec)
        elif not isinstance(spec, ExperimentSpec):
            spec = ExperimentSpec.from_dict(dict(spec))
        if agents:
            kept = list(spec.agents) if "agents" in spec.model_fields_set else []  # not the default planner
            listed = {a.name: a for a in kept}
            for name in agents:
                if name in listed and listed[name].kind != "python":
                    raise ValueError(f"agents={{{name!r}: …}}: the spec's agent {name!r} is kind "
                                     f"{listed[name].kind!r}; a factory handed over from Python needs kind 'python' "
                                     "(or a name the spec does not use)")
            added = [AgentSpec(name=n, kind="python") for n in agents if n not in listed]
            if added:
                data = spec.model_dump(mode="json")
                data["agents"] = [a.model_dump(mode="json") for a in kept + added]
                spec = ExperimentSpec.from_dict(data)
        return run_spec(spec, Path(out) if out is not None else Path("runs") / spec.name, workers=workers,
                        executor=executor, progress=progress, retry_errors=retry_errors, factories=agents,
                        force=force, **executor_options)


def __getattr__(name: str) -> Any:  # the facts a python agent's factory receives, without importing the runner
    if name == "EpisodeFacts":
        from experiments.python_agents import EpisodeFacts

        return EpisodeFacts
    raise AttributeError(f"module 'experiments' has no attribute {name!r}")


__all__ = ["EpisodeFacts", "run"]
