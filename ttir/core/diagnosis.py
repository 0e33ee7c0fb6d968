"""The diagnoser half of the check contract: the context a diagnoser reads, the finding
it returns, and the tier logic (rules / vlm / cascade / off). It lives in the core so that
the four diagnosers (``diagnosers/``), a user's own check and the guard all build on it
from below; ``import ttir`` exposes it (``ttir.Finding``, ``ttir.Diagnoser`` …).

Honesty: a diagnoser sees only what a deployment sees — the goal, the current
observation and the history of (observation, step) records. It never imports
``benchmark`` or ``perturb``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Literal, Optional, Protocol, TypeVar, get_args, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ttir.core.config import DiagnoserName, Tier
from ttir.core.lexicon import ControlRole
from ttir.core.types import Action, AgentStep, Observation, ScreenSource, StepRecord



# what a finding may answer: true/false (stuck loop, interference), yes/no (the last action's
# effect was seen), on_track/off_track (task alignment), uncertain (any; the cascade asks the
# model), off (a diagnoser switched off). User checks answer in the same words.
Verdict = Literal["true", "false", "yes", "no", "uncertain", "on_track", "off_track", "off"]

# what the interference diagnoser located (``InterferenceDetails.kind``): system dialogs known by their
# package or ids; system surfaces; an app's own pop-ups (a dialog inside its window, a window over it, a
# page that takes the screen over, a page of an interruption's own flow); a spinner, a dimmed backdrop
# seen in pixels alone, nothing readable. diagnosers/data/system.yaml names kinds from this list only.
InterferenceKind = Literal[
    "permission", "anr", "crash", "dev_error", "system_dialog", "app_update", "system_update",
    "lock_screen", "shade", "heads_up", "systemui",
    "dialog", "window", "takeover", "flow",
    "loading", "scrim", "unknown",
]
INTERFERENCE_KINDS: tuple[InterferenceKind, ...] = get_args(InterferenceKind)
# how the dismiss recovery should leave it: tap a dismiss control, press Back, swipe a banner away,
# wait for a spinner, or report it (a lock screen, a required update, a licence gate: the user's call)
DismissHint = Literal["button", "back", "swipe_up", "wait", "report"]
DISMISS_HINTS: tuple[DismissHint, ...] = get_args(DismissHint)


class FindingDetails(BaseModel):
    """A finding's ``details`` read as attributes: what a diagnoser tells the recoveries beyond
    its verdict. Keys a type does not name are kept (``model_extra``): the reports and the
    tuning tools read the diagnosers' evidence too."""

    model_config = ConfigDict(extra="allow")


class OverlayButton(BaseModel):
    """A control of the overlay the interference diagnoser located, with the role it read."""

    model_config = ConfigDict(extra="allow")

    label: str = ""
    role: ControlRole = "neutral"
    bounds: tuple[int, int, int, int]
    center: tuple[int, int]
    resource_id: str = ""
    index: Optional[int] = None  # its node in the observation's elements (None: a model's finding)
    forward: bool = False  # a gate's way on (Continue, Get started)
    next_page: bool = False  # a carousel's Next: its next page is still the interruption
    skip: bool = False
    dismiss_p: Optional[float] = None  # the control model's probability that it closes the overlay
    learned: bool = False  # its role is the control model's, not the vocabulary's


class InterferenceDetails(FindingDetails):
    """What the interference diagnoser located (``kind`` None: the model saw interference where
    the rules locate no overlay)."""

    kind: Optional[InterferenceKind] = None
    package: str = ""
    bounds: Optional[tuple[int, int, int, int]] = None
    title: str = ""
    texts: list[str] = Field(default_factory=list)
    buttons: list[OverlayButton] = Field(default_factory=list)
    scrim: bool = False
    dismiss_hint: Optional[DismissHint] = None
    asks_input: bool = False  # a page that asks for a code or a form: the user's own answer
    element_index: Optional[int] = None
    rules_verdict: Optional[Verdict] = None  # what the rules alone said where the screen model decided (else None)


class StepDetails(FindingDetails):
    """What a diagnoser of the agent's own steps (stuck loop, action effect) read of the last one."""

    intended_targets: list[str] = Field(default_factory=list)  # the words of the control the agent meant


class IntendedField(BaseModel):
    """The text field a typing step meant, as the action-effect diagnoser resolved it."""

    model_config = ConfigDict(extra="allow")

    index: Optional[int] = None
    names: list[str] = Field(default_factory=list)
    text: str = ""
    resource_id: str = ""


class ActionEffectDetails(StepDetails):
    """What the action-effect diagnoser saw of the last action."""

    no_change: bool = False  # the screen did not change at all: a dropped tap, or one still on its way
    intended_field: Optional[IntendedField] = None


class TaskAlignmentDetails(FindingDetails):
    """What the task-alignment diagnoser knows of the task's app."""

    on_task_package: Optional[str] = None


class StuckLoopDetails(StepDetails):
    """What the stuck-loop diagnoser saw repeated (its other evidence is kept as extra keys)."""


DetailsT = TypeVar("DetailsT", bound=FindingDetails)

# the details each built-in diagnoser writes; a user's own check reads its own as FindingDetails
DETAILS_TYPES: dict[DiagnoserName, type[FindingDetails]] = {
    "interference": InterferenceDetails, "action_effect": ActionEffectDetails,
    "task_alignment": TaskAlignmentDetails, "stuck_loop": StuckLoopDetails,
}


def _plain_screen_source(obs: Observation) -> Optional[str]:
    """What a screen offers, read plainly: a tree of elements, a screenshot, or nothing."""
    if obs.elements:
        return "tree"
    return "pixels" if obs.screenshot is not None else None


# what the rules can read of a screen (``Finding.source``): the diagnosers package installs its own
# reader (it knows a tree that is only a WebView shell, and text read from pixels) when it loads
_SCREEN_SOURCE_READER: Callable[[Observation], Optional[str]] = _plain_screen_source


def set_screen_source_reader(reader: Optional[Callable[[Observation], Optional[str]]]) -> None:
    """Install the function that says what the rules read of a screen (None: the plain reading).

    Args:
        reader: ``obs -> "tree" | "ocr" | "pixels" | None``.
    """
    global _SCREEN_SOURCE_READER
    _SCREEN_SOURCE_READER = reader or _plain_screen_source


class Cost(BaseModel):
    """What producing a finding (or a recovery step) cost in model use; zero for the rules tier.

    Costs add and subtract field by field (``a + b``, ``a - b``).
    """

    model_config = ConfigDict(extra="forbid")

    model_calls: int = Field(0, description="Model calls made, failed ones included (they are billed too).")
    failed_calls: int = Field(0, description="Of those, the calls that raised (billed all the same: tokens, latency).")
    requests: int = Field(0, description="HTTP requests the calls took (retries, a re-ask, refused probes included).")
    prompt_tokens: int = Field(0, description="Prompt tokens, as the endpoint reported them.")
    completion_tokens: int = Field(0, description="Completion tokens, as the endpoint reported them.")
    latency_s: float = Field(0.0, description="Seconds spent waiting for the model.")

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(**{k: getattr(self, k) + getattr(other, k) for k in Cost.model_fields})

    def __sub__(self, other: "Cost") -> "Cost":
        return Cost(**{k: getattr(self, k) - getattr(other, k) for k in Cost.model_fields})


class DiagnosisContext(BaseModel):
    """The inputs of one diagnosis: the goal, the current observation and the history.

    ``history[-1]`` (when present) is the step that led to ``observation``: its
    ``observation`` is the screen the step was decided on.
    ``cache`` lets the four diagnosers share one model call per step.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    goal: str = Field(description="The task in natural language, as given to ``reset(goal)``.")
    observation: Observation = Field(description="The current screen.")
    history: list[StepRecord] = Field(
        default_factory=list, description="The past steps, oldest first (bounded); ``history[-1]`` led to ``observation``.")
    pending: Optional[AgentStep] = Field(
        None, description="The agent's proposed step when a check reviews it before it is let through (a "
                          "``status: complete`` claim, say); None while diagnosing a screen.")
    cache: dict[str, Any] = Field(
        default_factory=dict, exclude=True,
        description="Scratch space for one step: the diagnosers share one model call through it. Not serialised.")

    @property
    def previous(self) -> Optional[StepRecord]:
        """The step that led to the current screen (``history[-1]``), or None on the first step."""
        return self.history[-1] if self.history else None

    @property
    def last_action(self) -> Optional[Action]:
        """The action of the step that led to the current screen, or None on the first step."""
        return self.history[-1].step.action if self.history else None

    @property
    def previous_observation(self) -> Optional[Observation]:
        """The screen the last step was decided on, or None on the first step."""
        return self.history[-1].observation if self.history else None

    def observations(self) -> list[Observation]:
        """Every observation in order, ending with the current one."""
        return [r.observation for r in self.history] + [self.observation]


class Finding(BaseModel):
    """One diagnoser's answer for one step: is there a problem, in which words, how sure, and why.

    ``problem`` is what the guard acts on (it opens a recovery session); ``verdict`` is the
    diagnoser's answer in its own words (:data:`Verdict`), ``uncertain`` when the rules cannot
    tell (the cascade then asks the model; the rules tier never acts on it).
    """

    model_config = ConfigDict(extra="forbid")

    diagnoser: str = Field(description="The name of the diagnoser (or check) that answered.")
    problem: bool = Field(description="Whether there is a problem to recover from; True opens a recovery session.")
    verdict: Verdict = Field(
        description="The answer in the diagnoser's words: true / false (stuck loop, interference), yes / no (the "
                    "last action's effect was seen), on_track / off_track (task alignment), uncertain, off.")
    confidence: float = Field(1.0, ge=0.0, le=1.0, description="How sure the diagnoser is, 0 to 1.")
    evidence: list[str] = Field(default_factory=list,
                                description="Why, in short sentences a person can check (they go into the report).")
    tier: Tier = Field("rules", description="Which tier decided: rules, vlm, cascade or off.")
    cost: Cost = Field(default_factory=Cost, description="The model use the finding cost (zero for the rules).")
    details: dict[str, Any] = Field(
        default_factory=dict, description="What the diagnoser tells the recovery beyond its verdict (the overlay "
                                          "it located, the target the step meant …); typed by :attr:`typed_details`.")
    source: Optional[ScreenSource] = Field(
        None, description="What of the screen a rule read: the UI tree, text read from the screenshot (ocr) or its "
                          "pixels; None for a model's judgment, or nothing to read.")

    @property
    def uncertain(self) -> bool:
        """Whether the verdict is ``uncertain`` (the rules cannot tell; the cascade asks the model)."""
        return self.verdict == "uncertain"

    @property
    def typed_details(self) -> FindingDetails:
        """``details`` as the typed record of this finding's diagnoser (:data:`DETAILS_TYPES`).

        Returns:
            An :class:`InterferenceDetails`, :class:`ActionEffectDetails` … (a plain
            :class:`FindingDetails` for a check of another name).

        Raises:
            pydantic.ValidationError: the details do not have the shape their diagnoser's type
            declares (an interference kind outside :data:`INTERFERENCE_KINDS`, say).
        """
        return DETAILS_TYPES.get(self.diagnoser, FindingDetails).model_validate(self.details)

    def details_as(self, details_type: type[DetailsT]) -> DetailsT:
        """``details`` read as ``details_type``, whichever check wrote them (a recovery reads a
        user's own check that names an overlay in the interference diagnoser's keys the same way).

        Args:
            details_type: a :class:`FindingDetails` subclass.

        Returns:
            The details as that type (keys it does not name are kept as extras).
        """
        return details_type.model_validate(self.details)

    def to_dict(self) -> dict[str, Any]:
        """The finding as a JSON-serialisable dict (what reports and event logs store)."""
        return self.model_dump(mode="json")


@runtime_checkable
class SupportsDiagnose(Protocol):
    """What a check's trigger must offer at least: ``diagnose(ctx) -> Finding``. A
    :class:`Diagnoser` offers it with tiers (``rules``, ``mode``), a name and a judge."""

    def diagnose(self, ctx: DiagnosisContext) -> Finding: ...


class Diagnoser(ABC):
    """Base class of a check's trigger. Subclasses set ``name`` and implement :meth:`rules`
    (deterministic, free) and, for a model tier, :meth:`from_judgment` (read the shared VLM
    judgment); the tier is chosen by ``mode``. ``rules`` may return verdict ``uncertain``;
    the cascade then asks the model.

    Args:
        config: the diagnoser's settings (its section of :class:`ttir.TTIRConfig` for the
            built-in four); None: :meth:`default_config`.
        mode: ``rules`` / ``vlm`` / ``cascade`` / ``off``; None: ``config.mode``, else ``rules``.
        judge: the shared VLM judge (:class:`diagnosers.vlm_judge.VLMJudge`); the guard gives it
            to a diagnoser built without one.
    """

    name: ClassVar[str] = ""

    def __init__(self, config: Any = None, *, mode: Optional[Tier] = None, judge: Any = None):
        self.config = config if config is not None else self.default_config()
        self.mode: Tier = mode or getattr(self.config, "mode", "rules")
        self.judge = judge  # diagnosers.vlm_judge.VLMJudge, shared by the four diagnosers

    @classmethod
    def default_config(cls) -> Any:
        """The config a diagnoser built without one uses (a user's rule may need none)."""
        return None

    @abstractmethod
    def rules(self, ctx: DiagnosisContext) -> Finding:
        """The deterministic tier."""

    def from_judgment(self, judgment: Any, cost: Cost) -> Finding:
        """Turn the shared VLM judgment into this diagnoser's finding (a rule-only diagnoser has none)."""
        raise NotImplementedError(f"{self.name or type(self).__name__} has no model tier; use mode 'rules'")

    def ask_model(self, ctx: DiagnosisContext) -> Finding:
        """The model tier's finding: the shared judgment of this step, read by :meth:`from_judgment`.

        Raises:
            RuntimeError: no judge is configured.
            Exception: the judge's call failed (the guard then lets the rules decide).
        """
        if self.judge is None:
            raise RuntimeError(f"{self.name}: mode needs a model but no VLM judge is configured "
                               "(pass vlm= to ttir.guard or set TTIR_VLM_BASE_URL)")
        judgment, cost = self.judge.judge(ctx)
        return self.from_judgment(judgment, cost)

    def diagnose(self, ctx: DiagnosisContext) -> Finding:
        """This diagnoser's finding on ``ctx``, from the tier ``mode`` names.

        ``off``: no problem (verdict ``off``); ``rules`` (or ``cascade`` without a judge): the
        rules; ``vlm``: the model; ``cascade``: the rules, and the model when they are uncertain
        (or the judge's schedule asks), combined by :meth:`merge`. A screen with nothing to read
        is never sent to the model.

        Args:
            ctx: the goal, the current screen and the history.

        Returns:
            The finding, with ``tier`` set to the tier that decided.

        Raises:
            Exception: the model tier failed; the guard records it and asks :meth:`rules`.
        """
        mode = self.mode
        if mode == "off":
            return Finding(diagnoser=self.name, problem=False, verdict="off", tier="off")
        if mode == "rules" or (mode == "cascade" and self.judge is None):
            return self._sourced(self.rules(ctx), ctx)
        if mode == "vlm":
            f = self.ask_model(ctx)
            f.tier = "vlm"
            return self.locate(ctx, f)
        f = self._sourced(self.rules(ctx), ctx)
        if f.source is None:
            # neither a usable UI tree nor a screenshot: the model would judge a blank screen
            # (a real model calls it interference, and the guard then presses Back)
            f.tier = "cascade"
            f.evidence = f.evidence + ["the model was not asked: nothing on this screen it could read"]
            return f
        if f.uncertain or (self.judge is not None and self.judge.scheduled(ctx)):
            m = self.ask_model(ctx)
            m.tier = "cascade"
            m.evidence = f.evidence + m.evidence
            return self.merge(f, m)
        f.tier = "cascade"
        return f

    def merge(self, rule: Finding, model: Finding) -> Finding:
        """How a rule finding and a model finding combine; default: the model decides."""
        return model

    def locate(self, ctx: DiagnosisContext, model: Finding) -> Finding:
        """In the model-only tier: what the free rules can add to the model's verdict
        without changing it (where on screen the problem is, for the recovery); default:
        nothing."""
        return model

    @staticmethod
    def _sourced(f: Finding, ctx: DiagnosisContext) -> Finding:
        """A rule finding says what it read of the screen (unless the rule said it itself)."""
        if f.source is None:
            f.source = _SCREEN_SOURCE_READER(ctx.observation)  # type: ignore[assignment]
        return f
