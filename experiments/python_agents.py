"""Your own agent in a spec: ``{name: mine, kind: python, factory: "my_pkg.agents:make_agent", params: {...}}``.

The factory is called once per episode, inside the worker that runs it, as
``make_agent(facts, **params)``: ``facts`` is the episode's :class:`EpisodeFacts`
(goal, task name, app names, screen size, seed), ``params`` the spec's. It returns
an agent: an object with ``step(obs)`` (and ``reset(goal)``), or a callable
``fn(obs) -> AgentStep | Action``.

A factory string names a module and an attribute (``package.module:function``);
it is imported with the spec file's folder and the current directory on
``sys.path``, so a ``my_agent.py`` beside the spec needs no install. A spec that
names a factory runs that code, as ``python -m`` would. Factories can also be
handed over from Python (``experiments.run(spec, agents={"mine": make_agent})``):
they are registered in this process, inherited by forked workers and shipped to
Ray actors with each episode.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field

from ttir.core.errors import ImportTargetError
from ttir.core.imports import IMPORT_FORM, import_callable
from ttir.core.types import as_agent
from ttir.core.validation import short_repr

Factory = Callable[..., Any]
FACTORY_FORM = IMPORT_FORM
EXPECTED = "def make_agent(facts: EpisodeFacts, **params) -> Agent (an object with step(obs), or a callable fn(obs))"

_REGISTERED: dict[str, Factory] = {}  # agent name -> factory handed over from Python


class EpisodeFacts(BaseModel):
    """What an agent may know about its episode before the first screen (nothing about perturbations)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: str = Field(..., description="The task's goal in words, as the agent is told it.")
    task: str = Field(..., description="The task's name (e.g. ContactsAddContact).")
    apps: tuple[str, ...] = Field((), description="Names of the apps the task uses, as open_app takes them ('Contacts').")
    packages: tuple[str, ...] = Field((), description="Their package names (com.google.android.contacts).")
    screen_size: tuple[int, int] = Field(..., description="The phone's screen in pixels (width, height), before any perturbation.")
    seed: int = Field(0, description="The agent's seed for this episode (the same for every guard mode).")
    budget: int = Field(0, description="The most steps the episode allows.")


class FactoryError(ImportTargetError):
    """A python agent's factory cannot be imported, called, or returned no agent."""


def register(name: str, factory: Factory) -> None:
    """Make ``factory`` the factory of the spec agent called ``name`` in this process."""
    if not callable(factory):
        raise FactoryError(f"agents[{name!r}]={short_repr(factory)} is not callable; expected {EXPECTED}")
    _REGISTERED[name] = factory


def registered() -> dict[str, Factory]:
    return dict(_REGISTERED)


def register_all(factories: Optional[Mapping[str, Factory]]) -> None:
    for name, factory in (factories or {}).items():
        register(name, factory)


@contextmanager
def factories_registered(factories: Optional[Mapping[str, Factory]]) -> Iterator[None]:
    """``factories`` registered for the duration of a run only: afterwards the registry is as it
    was, so a later spec's agent of the same name is not silently given this run's factory.

    Args:
        factories: agent name -> factory (None: none).
    """
    saved = dict(_REGISTERED)
    try:
        register_all(factories)
        yield
    finally:
        _REGISTERED.clear()
        _REGISTERED.update(saved)


def describe(factory: Factory) -> str:
    """``module:qualname`` of a factory handed over from Python (for messages and records)."""
    return f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', type(factory).__name__)}"


def import_factory(spec: str, folder: Optional[str] = None) -> Factory:
    """Resolve ``package.module:attribute`` (``folder`` and the current directory on ``sys.path``)."""
    return import_callable(spec, folder, what="factory", expected=EXPECTED, error=FactoryError)


def resolve(name: str, factory: Optional[str], folder: Optional[str] = None) -> tuple[Factory, str]:
    """The factory of agent ``name`` and how to name it in messages: one handed over from
    Python wins, else the spec's ``factory`` string."""
    if name in _REGISTERED:
        fn = _REGISTERED[name]
        return fn, describe(fn)
    if not factory:
        raise FactoryError(f"agent {name!r} (kind python) has no factory: set factory: 'package.module:function' "
                           f"in the spec, or pass agents={{{name!r}: make_agent}} to experiments.run")
    return import_factory(factory, folder), factory


def check_signature(fn: Factory, label: str, params: Mapping[str, Any]) -> None:
    """A factory that cannot be called as ``fn(facts, **params)`` fails here, naming what is wrong."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to check before the call
        return
    try:
        sig.bind(None, **params)
    except TypeError as exc:
        raise FactoryError(f"factory {label} cannot be called as {_name(fn)}(facts, **params) with params "
                           f"{short_repr(dict(params))}: {exc}; its signature is {_name(fn)}{sig}; "
                           f"expected {EXPECTED}") from None


def build(name: str, factory: Optional[str], params: Mapping[str, Any], facts: EpisodeFacts,
          folder: Optional[str] = None, *, checking: bool = False) -> Any:
    """Import, check and call the factory; return the agent it made (as an Agent).

    In an episode the factory's own exceptions propagate (the episode is recorded as an
    error with its traceback); ``checking`` (at spec load) turns them into a FactoryError
    that names the factory."""
    fn, label = resolve(name, factory, folder)
    check_signature(fn, label, params)
    try:
        made = fn(facts, **dict(params))
    except Exception as exc:  # noqa: BLE001 - the user's factory may raise anything
        if not checking:
            raise
        raise FactoryError(f"factory {label} raised {type(exc).__name__}: {exc} (called with params "
                           f"{short_repr(dict(params))} for task {facts.task})") from exc
    try:
        return as_agent(made)
    except TypeError:
        raise FactoryError(f"factory {label} returned {short_repr(made)} ({type(made).__name__}), "
                           f"not an agent; expected {EXPECTED}") from None


def check_agent(agent: Any, task: Any) -> None:
    """Spec load: the ``AgentSpec``'s factory imported, called for ``task`` and its result checked."""
    from benchmark.sim.device import BASE_SIZE

    build(agent.name, agent.factory, agent.params, facts_for(task, BASE_SIZE, seed=0), agent.path, checking=True)


def build_for(ep: Any, task: Any, screen_size: Optional[tuple[int, int]] = None, budget: int = 0) -> Any:
    """The agent of episode ``ep`` (an ``EpisodeSpec`` whose agent is kind python)."""
    from benchmark.sim.device import BASE_SIZE

    facts = facts_for(task, screen_size or BASE_SIZE, seed=ep.agent_seed, budget=budget)
    return build(ep.agent.name, ep.agent.factory, ep.agent.params, facts, ep.agent.path)


def facts_for(task: Any, screen_size: tuple[int, int], seed: int, budget: int = 0) -> EpisodeFacts:
    """The facts of an episode of ``task`` on a phone of ``screen_size``."""
    return EpisodeFacts(goal=task.goal, task=task.name, apps=tuple(app_names(task.apps)), packages=tuple(task.apps),
                        screen_size=(int(screen_size[0]), int(screen_size[1])), seed=seed, budget=budget)


def app_names(packages: Any) -> list[str]:
    from benchmark.apps import APP_CLASSES

    labels = {cls.package: cls.label for cls in APP_CLASSES}
    return [labels.get(p, p) for p in packages]


def _name(fn: Factory) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


__all__ = ["EpisodeFacts", "FactoryError", "build", "build_for", "check_agent", "check_signature", "facts_for", "import_factory", "register",
           "register_all", "registered", "resolve"]
