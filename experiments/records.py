"""Typed run records: the shapes metrics, reports and the viewer read from a run directory.

A run directory holds two kinds of records (``experiments.store.RunStore``):

- :class:`EpisodeRecord` — one line of ``RUN_DIR/episodes.jsonl`` (``experiments.worker.run_one``):
  the episode's identity (``id``, ``task``, ``instance``, ``perturbation`` with ``overrides``,
  ``component`` and ``layer``, ``agent`` and ``agent_kind``, ``guard``, ``seed``, ``repeat``,
  ``dump``), how it went (``status``, ``verified``, ``success``, ``termination``, ``steps``,
  ``budget``, ``error``), whether its perturbation took effect (``fired``, ``fired_step``, and
  the event counts ``events`` of records older than ``fired``) and what the guard did
  (:class:`GuardSummary`, ``GuardReport.summary()``).
- :class:`Trajectory` — ``RUN_DIR/episodes/<id>/trajectory.json``: the steps
  (:class:`TrajectoryStep`: its :class:`StepObservation`, the agent's :class:`AgentStepView`
  with its :class:`ActionView`, the :class:`GuardEvent` list and the harness's
  :class:`StepTruth`), the perturbation event log (:class:`EventRecord`), the guard's
  report (:class:`GuardReportView`: findings, :class:`GuardSession`, :class:`GuardUsage`) and
  the :class:`FinalScreen`.

A perturbation event's ``details`` and the guard's free-form parts (a finding's evidence, a
session's trigger and actions) stay dicts: their keys are each event's own vocabulary, owned
by ``perturb/`` and the guard, not by the run's record format.

Rules every model follows:

- **Defaults are what a reader assumed for a missing key** (``rec.get("guard", "off")`` became
  ``guard: str = "off"``), so a record of an older run, which lacks keys the worker writes
  today, loads; a ``null`` where a count or a list belongs reads as 0 or empty, as
  ``x or 0`` did. A record without ``verified`` (written before it existed) takes ``success``.
- **Unknown keys are kept** (``extra="allow"``): a newer writer's keys load too, and
  :meth:`RunModel.to_json` gives back the keys a record was read with, in the order it
  had them (nothing added but ``verified`` of a record that lacked it).
- **A wrong type is an error naming the field** (:class:`RecordError`, a ``ValueError``):
  ``experiments.store.RunStore.episode_records`` skips such a line of episodes.jsonl with a
  warning, as it skips a line that is not JSON.
- ``EpisodeRecord.schema_version`` says which shape a record follows: :data:`SCHEMA_VERSION`
  (1, this module) when the record does not say.

The metrics take these records; their entry points also accept the plain dicts of a
hand-built record (:func:`as_episode`, :func:`as_trajectory`, :func:`as_event`), checked the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Callable, Iterable, Optional, TypeVar, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_serializer, model_validator

from ttir.core.validation import renamed_key

SCHEMA_VERSION = 1

M = TypeVar("M", bound="RunModel")


def _none_as(default: Callable[[], Any]) -> BeforeValidator:
    """``null`` reads as the default (the readers wrote ``x or default``)."""
    return BeforeValidator(lambda v: default() if v is None else v)


Count = Annotated[int, _none_as(int)]
Millis = Annotated[float, _none_as(float)]
AnyDict = Annotated[dict[str, Any], _none_as(dict)]
AnyList = Annotated[list[Any], _none_as(list)]


class RecordError(ValueError):
    """A record that does not have the shape of this module (the message names the field)."""


def describe(exc: ValidationError) -> str:
    """The first problem of a validation error, as ``field 'a.b': what is wrong (got …)``."""
    err = exc.errors(include_url=False)[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "record"
    got = err.get("input")
    shown = "" if err.get("type") == "missing" else f" (got {str(got)[:80]!r})"
    more = f"; {len(exc.errors()) - 1} more problem(s)" if len(exc.errors()) > 1 else ""
    return f"field {loc!r}: {err.get('msg', 'invalid')}{shown}{more}"


class RunModel(BaseModel):
    """A record, or a part of one: typed where read, open to keys it does not declare, immutable."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_keys(cls, data: Any, handler: Any) -> Any:
        model = handler(data)
        if isinstance(data, dict) and model.__pydantic_private__ is None:
            # the keys it was read with, in their order: beside the fields, not one of them (and not a
            # declared private attribute, whose default pydantic resolves for every model: twice the time)
            object.__setattr__(model, "__pydantic_private__", {"keys": tuple(data)})
        return model

    def __eq__(self, other: object) -> bool:  # the order keys were read in does not make two records differ
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (type(self) is type(other) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__)

    __hash__ = None  # type: ignore[assignment]  # records hold dicts and lists

    @model_serializer(mode="wrap")
    def _in_read_order(self, handler: Any) -> Any:
        out = handler(self)
        keys = (self.__pydantic_private__ or {}).get("keys")
        if not keys or not isinstance(out, dict):
            return out
        first = {k: out[k] for k in keys if k in out}
        return first | {k: v for k, v in out.items() if k not in first}

    @classmethod
    def parse(cls: type[M], data: Any, where: str = "record") -> M:
        """``data`` as this model; :class:`RecordError` naming ``where`` and the field otherwise."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise RecordError(f"{where}: expected a JSON object, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RecordError(f"{where}: {describe(exc)}") from None

    def to_json(self) -> dict[str, Any]:
        """The record as JSON: the keys it was read with (and those set since), in their order."""
        return self.model_dump(mode="json", exclude_unset=True)


# -- an episode record (episodes.jsonl) -------------------------------------------------------

class GuardSummary(RunModel):
    """``GuardReport.summary()`` as the episode record keeps it (the counts the metrics read)."""

    steps: Count = 0
    sessions: Count = 0
    triggers: Annotated[dict[str, int], _none_as(dict)] = Field(default_factory=dict)  # sessions per check
    model_calls: Count = 0
    tokens: Count = 0
    errors: Count = 0
    blocked_claims: Count = 0


class EpisodeRecord(RunModel):
    """One line of ``RUN_DIR/episodes.jsonl``."""

    schema_version: int = SCHEMA_VERSION
    id: str
    task: str
    agent: str
    instance: int = 0
    perturbation: str = "clean"
    overrides: AnyDict = Field(default_factory=dict)
    component: Optional[str] = None  # state, action, transition; clean (None: a record that does not say)
    layer: Optional[str] = None
    dump: Optional[str] = None  # the dump style, when not the default (all_windows)
    agent_kind: str = "?"
    guard: str = "off"
    seed: int = 0
    repeat: int = 0
    episode_seed: Optional[int] = None
    status: str = "ok"  # ok, or error: the episode raised
    goal: Optional[str] = None
    success: Optional[bool] = None  # done-gated, as the worker scored it
    verified: Optional[bool] = None  # the verifier said yes at the end (records without it: ``success``)
    steps: Optional[int] = None
    budget: Optional[int] = None
    termination: Optional[str] = None  # done, infeasible, budget, error (older names: LEGACY_TERMINATIONS)
    error: Optional[str] = None
    guard_summary: Optional[GuardSummary] = None
    events: Optional[dict[str, int]] = None  # event counts by name
    fired: Optional[bool] = None  # None: clean, or written before ``fired`` existed
    fired_step: Optional[int] = None
    wall_s: Optional[float] = None

    @model_validator(mode="before")
    @classmethod
    def _verified_from_success(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "verified" not in data and "success" in data:
            data = {**data, "verified": data["success"]}
        return data

    @classmethod
    def parse(cls, data: Any, where: str = "record") -> "EpisodeRecord":
        if isinstance(data, Mapping):
            for key in ("id", "task", "agent"):
                if key not in data:
                    raise RecordError(f"{where}: field {key!r} is missing (got keys {sorted(data)})")
        return super().parse(data, where)

    @property
    def is_clean(self) -> bool:
        return self.perturbation == "clean"

    @property
    def component_label(self) -> str:
        """The component, ``clean`` when the record does not name one (the success table's reading)."""
        return self.component if self.component is not None else "clean"


# -- a trajectory (episodes/<id>/trajectory.json) ---------------------------------------------

class ActionView(RunModel):
    """An action as the trajectory stores it (``ttir.core.types.Action``, ``None`` fields left out)."""

    action_type: Optional[str] = None
    index: Optional[int] = None
    x: Optional[int] = None
    y: Optional[int] = None
    x2: Optional[int] = None
    y2: Optional[int] = None
    text: Optional[str] = None
    direction: Optional[str] = None
    goal_status: Optional[str] = None
    app_name: Optional[str] = None

    @property
    def empty(self) -> bool:
        return not self.model_fields_set and not self.model_extra

    def fields(self) -> dict[str, Any]:
        """Its keys and values as stored, in their order."""
        return self.model_dump(exclude_unset=True)


class AgentStepView(RunModel):
    action: Optional[ActionView] = None
    thought: Optional[str] = None
    summary: Optional[str] = None


class StepObservation(RunModel):
    """The summary of what the agent saw (``Observation.summary()``, plus ``ref``: its screenshot)."""

    step: Optional[int] = None
    foreground: Optional[str] = None
    screen_size: Optional[tuple[int, int]] = None
    orientation: Optional[str] = None
    n_elements: Optional[int] = None
    ref: Optional[str] = None


class StepTruth(RunModel):
    """The harness's ground truth of a step (runs with ``save_xml``: ``experiments.tune.truth``)."""

    screen_key: Optional[str] = None


class EventRecord(RunModel):
    """One entry of the perturbation event log (``PerturbedDevice.event_log()``). ``event`` is a
    name of ``perturb.events.PerturbationEvent``, read as a plain string so that a run written
    before a name changed still loads; ``details`` are the event's own keys (``perturb/``)."""

    step: Count = 0
    perturbation: Optional[str] = None
    event: Optional[str] = None
    details: AnyDict = Field(default_factory=dict)


class GuardEvent(RunModel):
    """One guard event of a step (``event``: finding, session_opened, recovery_step …, a name of
    ``ttir.guarded.report.GuardEventName``), or one finding of the guard's report. Runs written before
    the guard's log took the perturbation log's shape name it under ``type``: read as ``event``."""

    step: Count = 0
    event: Optional[str] = None
    diagnoser: Optional[str] = None
    problem: Optional[bool] = None
    claim: Optional[bool] = None

    @model_validator(mode="before")
    @classmethod
    def _event_from_type(cls, data: Any) -> Any:
        return renamed_key(data, "type", "event")


class GuardSession(RunModel):
    """A recovery session of the guard's report (``ttir.guarded.report.SessionRecord``). Runs written
    before a session named its recovery ``recovery`` called it ``strategy``: read as ``recovery``."""

    diagnoser: str
    recovery: Optional[str] = None
    outcome: Optional[str] = "open"
    actions: AnyList = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _recovery_from_strategy(cls, data: Any) -> Any:
        return renamed_key(data, "strategy", "recovery")


class GuardUsage(RunModel):
    """The guard's cost at one step (``ttir.guarded.report.StepUsage``)."""

    model_calls: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    guard_ms: Millis = 0.0


class GuardReportView(RunModel):
    """The guard's report in the trajectory (``GuardReport.to_dict()``)."""

    findings: Optional[list[GuardEvent]] = None  # None: older reports, the steps' guard events say
    sessions: Annotated[list[GuardSession], _none_as(list)] = Field(default_factory=list)
    usage: Annotated[list[GuardUsage], _none_as(list)] = Field(default_factory=list)
    errors: AnyList = Field(default_factory=list)
    blocked_claims: Count = 0


class TrajectoryStep(RunModel):
    """One step of a trajectory (``benchmark.episode.StepLog``)."""

    index: Optional[int] = None
    observation: Annotated[StepObservation, _none_as(StepObservation)] = Field(default_factory=StepObservation)
    agent_step: Annotated[AgentStepView, _none_as(AgentStepView)] = Field(default_factory=AgentStepView)
    action_error: Optional[str] = None
    perturbation_events: Annotated[list[EventRecord], _none_as(list)] = Field(default_factory=list)
    guard_events: Annotated[list[GuardEvent], _none_as(list)] = Field(default_factory=list)
    truth: Optional[StepTruth] = None

    @property
    def action(self) -> Optional[ActionView]:
        """The step's action; None when it has none."""
        a = self.agent_step.action
        return None if a is None or a.empty else a

    @property
    def action_type(self) -> Optional[str]:
        a = self.agent_step.action
        return None if a is None else a.action_type


class FinalScreen(RunModel):
    package: Optional[str] = None
    foreground: Optional[str] = None


class Trajectory(RunModel):
    """``RUN_DIR/episodes/<id>/trajectory.json`` (``EpisodeResult.to_json_dict()`` plus the run's keys)."""

    goal: Optional[str] = None
    trajectory: Annotated[list[TrajectoryStep], _none_as(list)] = Field(default_factory=list)
    events: Annotated[list[EventRecord], _none_as(list)] = Field(default_factory=list)
    guard: Optional[GuardReportView] = None
    final_screen: Optional[FinalScreen] = None
    reset_events: AnyList = Field(default_factory=list)


# -- plain dicts in, typed records out ----------------------------------------------------------

EpisodeLike = Union[EpisodeRecord, Mapping[str, Any]]
TrajectoryLike = Union[Trajectory, Mapping[str, Any]]
EventLike = Union[EventRecord, Mapping[str, Any]]


def as_episode(rec: EpisodeLike, where: str = "record") -> EpisodeRecord:
    return rec if isinstance(rec, EpisodeRecord) else EpisodeRecord.parse(rec, where)


def as_episodes(records: Iterable[EpisodeLike]) -> list[EpisodeRecord]:
    return [as_episode(r, f"record {i}") for i, r in enumerate(records)]


def as_trajectory(traj: Optional[TrajectoryLike], where: str = "trajectory") -> Optional[Trajectory]:
    if traj is None or isinstance(traj, Trajectory):
        return traj
    return Trajectory.parse(traj, where)


def as_event(event: EventLike) -> EventRecord:
    return event if isinstance(event, EventRecord) else EventRecord.parse(event, "event")


__all__ = [
    "SCHEMA_VERSION", "RecordError", "RunModel", "describe",
    "EpisodeRecord", "GuardSummary",
    "Trajectory", "TrajectoryStep", "StepObservation", "AgentStepView", "ActionView", "StepTruth",
    "EventRecord", "GuardEvent", "GuardReportView", "GuardSession", "GuardUsage", "FinalScreen",
    "EpisodeLike", "TrajectoryLike", "EventLike", "as_episode", "as_episodes", "as_trajectory", "as_event",
]
