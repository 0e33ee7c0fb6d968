"""The episode loop (AndroidWorld's episode_runner, with perturbation and guard logs)."""

from __future__ import annotations

import asyncio
import inspect
import numbers
import time
import traceback
from typing import Any, Callable, Literal, Optional

from loguru import logger
from pydantic import BaseModel, ConfigDict, Field

from benchmark.device import ActionError, missing_episode_methods
from ttir.core.types import AgentStep, Observation, as_agent, as_step
from ttir.core.validation import short_repr

# How an episode ended: the agent declared the goal done (status complete) or infeasible,
# the step budget ran out, or the agent (or the harness) raised.
Termination = Literal["done", "infeasible", "budget", "error"]
TERMINATIONS: tuple[str, ...] = ("done", "infeasible", "budget", "error")
# Records written before the vocabulary above used these names.
LEGACY_TERMINATIONS = {"complete": "done", "agent_error": "error"}
# AndroidWorld scores ``agent_successful = task_successful if interaction_results.done else 0.0``
# (suite_utils._run_task); its agents report ``done`` when they issue a status action, whatever
# its goal_status. So an episode counts only when the agent itself ended it.
ENDED_BY_AGENT = ("done", "infeasible")


def gated_success(verified: bool, termination: str) -> bool:
    """Done-gated success (AndroidWorld): the verifier says yes AND the agent ended the episode.
    A task whose state is right when the budget runs out is not a success."""
    return bool(verified) and LEGACY_TERMINATIONS.get(termination, termination) in ENDED_BY_AGENT


class StepLog(BaseModel):
    """One step of a trajectory."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="The step's number, from 0.")
    observation: dict[str, Any] = Field(description="The screen the step was chosen on, summarised (no pixels: "
                                                    ":meth:`Observation.summary`), with ``ref`` when it was saved.")
    agent_step: dict[str, Any] = Field(description="What the agent (or the guard in its place) returned, as a dict; "
                                                   "empty when the agent raised.")
    action_error: Optional[str] = Field(None, description="Why the device could not execute the action, if it could not.")
    perturbation_events: list[dict[str, Any]] = Field(default_factory=list,
                                                      description="What the perturbations did during the step.")
    guard_events: list[dict[str, Any]] = Field(default_factory=list,
                                               description="What the guard did during the step (findings, sessions).")
    timing_ms: dict[str, float] = Field(default_factory=dict,
                                        description="Milliseconds spent by the agent and by the device.")


class EpisodeResult(BaseModel):
    """What one episode produced; ``observations`` (with screenshots) only when kept."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    task: str = Field(description="The task's name, e.g. ``SystemWifiTurnOn``.")
    goal: str = Field(description="The instruction the agent was given.")
    params: dict[str, Any] = Field(description="The task's seeded parameters.")
    seed: int = Field(description="The task instance's seed.")
    success: bool = Field(description="Done-gated success: ``verified`` and the agent ended the episode itself "
                                      "(see :func:`gated_success`).")
    verified: bool = Field(description="The task's verifier on the device state at the end, whoever ended the episode.")
    steps: int = Field(description="Steps taken.")
    budget: int = Field(description="The step budget the episode ran under.")
    termination: Termination = Field(description="How it ended: done, infeasible (the agent's status), budget or error.")
    answer: Optional[str] = Field(None, description="The agent's last ``answer`` text, if it gave one.")
    error: Optional[str] = Field(None, description="The traceback of the exception that ended the episode (termination "
                                                   "``error``).")
    trajectory: list[StepLog] = Field(default_factory=list, description="One log per step, in order.")
    reset_events: list[dict[str, Any]] = Field(default_factory=list,
                                               description="What the perturbations did while the device was reset.")
    timing_s: dict[str, float] = Field(default_factory=dict, description="Seconds spent per phase (agent, device …).")
    observations: list[Any] = Field(default_factory=list, exclude=True,
                                    description="The observations, with screenshots, when kept (never serialised).")

    def to_json_dict(self) -> dict[str, Any]:
        """The result as a JSON-serialisable dict, without the kept observations."""
        return self.model_dump(mode="json", exclude={"observations"})

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The action dict of every step, in order."""
        return [s.agent_step.get("action", {}) for s in self.trajectory]


def _drain(obj: Any) -> list[dict[str, Any]]:
    pop = getattr(obj, "pop_events", None)
    return list(pop()) if callable(pop) else []


class LoopRunningError(RuntimeError):
    """run_episode was called with an async agent inside a running event loop (the caller's mistake,
    raised, not recorded as the agent's crash)."""


def _episode_loop() -> asyncio.AbstractEventLoop:
    """A new event loop for one episode of an async agent; refused inside a running one (a notebook's,
    an async program's), where this synchronous loop would block it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.new_event_loop()
    raise LoopRunningError("run_episode is synchronous and an event loop is already running here; with an async "
                           "agent, call it from a thread (await asyncio.to_thread(run_episode, device, task, agent)) "
                           "or outside the running loop")


def _check_episode_arguments(device: Any, task: Any, budget: Any) -> None:
    """A caller's mistake named before anything runs: a task's name for the task reached
    ``task.budget`` as an AttributeError, and a budget of 0, -1 or 2.5 ran 0 or 2 steps silently."""
    missing = missing_episode_methods(device)
    if missing:
        raise TypeError(f"device={type(device).__name__!r} is not a device: it has no {', '.join(missing)}(); "
                        "expected a benchmark.SimDevice, an AdbDevice or a PerturbedDevice around one")
    # a Task, or a wrapper of one (a served phone's PhoneTask): what run_episode reads of it
    if not (isinstance(getattr(task, "goal", None), str) and callable(getattr(task, "verify", None))):
        hint = f"make_task({task!r})" if isinstance(task, str) else "make_task('ContactsAddContact')"
        raise TypeError(f"task={type(task).__name__!r} ({short_repr(task)}) is not a task: expected a benchmark task, "
                        f"e.g. benchmark.{hint} (see `ttir tasks`)")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, numbers.Integral) or budget < 1):
        raise ValueError(f"budget={short_repr(budget)} must be a whole number of steps, 1 or more; leave it out "
                         f"for the task's own ({task.budget})")


def run_episode(
    device: Any,
    task: Any,
    agent: Any,
    budget: Optional[int] = None,
    *,
    keep_observations: bool = False,
    on_observation: Optional[Callable[[int, Observation], Optional[str]]] = None,
) -> EpisodeResult:
    """Run ``agent`` on ``task`` until it claims a status or the budget is spent.

    ``device`` is any Device (SimDevice, AdbDevice, PerturbedDevice …); ``verified`` is
    ``task.verify`` on the unwrapped device's state, never the agent's claim, and
    ``success`` is ``verified`` gated on the agent having ended the episode (AndroidWorld).
    ``on_observation(i, obs)`` may persist the observation and return a reference
    (e.g. a screenshot path) that is stored in the step log.

    The loop: ``obs = device.reset(task)``, ``agent.reset(task.goal)``, then per step
    ``agent.step(obs)`` -> ``device.execute(action)`` -> ``device.observe()``, until a
    ``status`` action or the budget. An action the device refuses is logged in the step
    (``action_error``) and the episode goes on; an exception from the agent ends it
    (termination ``error``, the traceback in ``error``).

    Args:
        device: the device to run on.
        task: the task (:func:`benchmark.make_task`); its ``setup`` runs on reset.
        agent: an agent, a guarded agent, or a callable ``fn(obs)``; one whose ``step`` is
            ``async def`` (an :class:`~ttir.guarded.middleware.AsyncGuardedAgent` too) is run on an
            event loop of the episode's own.
        budget: the step budget; None: ``task.budget`` (20 x its reference length).
        keep_observations: keep every observation, screenshots included, in the result.
        on_observation: called as ``on_observation(i, obs)`` for each screen.

    Returns:
        The :class:`EpisodeResult`: success (done-gated), verified, termination, the trajectory.

    Raises:
        TypeError: ``device`` is no device, ``task`` no task (a task's name: build it with
            :func:`benchmark.make_task`), or ``agent`` no agent.
        ValueError: ``budget`` is not a whole number of steps, 1 or more.
        LoopRunningError: ``agent`` is async and an event loop is already running in this thread.
    """
    _check_episode_arguments(device, task, budget)
    agent = as_agent(agent)
    budget = int(budget if budget is not None else task.budget)
    t_start = time.perf_counter()
    obs = device.reset(task)
    reset_events = _drain(device)
    # an agent whose step is async def is driven on an event loop of the episode's own (one for all its
    # steps, so that a client bound to the loop keeps working); it gave "got coroutine" and ended the episode
    loops: list[asyncio.AbstractEventLoop] = []

    def call(result: Any) -> Any:
        if not inspect.isawaitable(result):
            return result
        if not loops:
            try:
                loops.append(_episode_loop())
            except LoopRunningError:
                if inspect.iscoroutine(result):
                    result.close()  # never run: no "was never awaited" warning on top of the error
                raise
        return loops[0].run_until_complete(result)

    try:
        call(agent.reset(task.goal))
        _drain(agent)
        trajectory: list[StepLog] = []
        observations: list[Observation] = []
        termination: Termination = "budget"
        answer: Optional[str] = None
        error: Optional[str] = None
        agent_s = device_s = 0.0
        steps = 0
        for i in range(budget):
            obs_ref = {"step": i, **obs.summary()}
            if on_observation is not None:
                ref = on_observation(i, obs)
                if ref:
                    obs_ref["ref"] = ref
            if keep_observations:
                observations.append(obs)
            t0 = time.perf_counter()
            try:
                step: AgentStep = as_step(call(agent.step(obs)))
            except LoopRunningError:
                raise  # the caller's mistake, not the agent's crash
            except Exception as exc:  # noqa: BLE001 - an agent crash ends the episode, it is recorded
                termination, error = "error", "".join(traceback.format_exception(exc))
                logger.warning("agent raised at step {}: {}", i, exc)
                trajectory.append(StepLog(index=i, observation=obs_ref, agent_step={}, guard_events=_drain(agent)))
                break
            t1 = time.perf_counter()
            agent_s += t1 - t0
            log = StepLog(index=i, observation=obs_ref, agent_step=step.bounded().to_dict(), guard_events=_drain(agent))
            trajectory.append(log)
            a = step.action
            if a.action_type == "status":
                termination = "done" if a.goal_status == "complete" else "infeasible"
                log.timing_ms = {"agent": (t1 - t0) * 1000}
                break
            if a.action_type == "answer":
                answer = a.text
            steps += 1
            try:
                device.execute(a)
            except ActionError as exc:
                log.action_error = str(exc)
            obs = device.observe()
            t2 = time.perf_counter()
            device_s += t2 - t1
            log.perturbation_events = _drain(device)
            log.timing_ms = {"agent": (t1 - t0) * 1000, "device": (t2 - t1) * 1000}
    finally:
        for loop in loops:
            loop.close()
    base = getattr(device, "unwrapped", device)
    verified = bool(task.verify(base))
    return EpisodeResult(
        task=task.name,
        goal=task.goal,
        params=task.params,
        seed=task.seed,
        success=gated_success(verified, termination),
        verified=verified,
        steps=steps,
        budget=budget,
        termination=termination,
        answer=answer,
        error=error,
        trajectory=trajectory,
        reset_events=reset_events,
        timing_s={"total": time.perf_counter() - t_start, "agent": agent_s, "device": device_s},
        observations=observations,
    )
