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
from typing import Any, Callable, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from ttir.core.config import Tier
from ttir.core.types import Action, AgentStep, Observation, ScreenSource, StepRecord



# what a finding may answer: true/false (stuck loop, interference), yes/no (the last action's
# effect was seen), on_track/off_track (task alignment), uncertain (any; the cascade asks the
# model), off (a diagnoser switched off). User checks answer in the same words.
Verdict = Literal["true", "false", "yes", "no", "uncertain", "on_track", "off_track", "off"]


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
    """What producing a finding cost."""

    model_config = ConfigDict(extra="forbid")

    model_calls: int = 0
    failed_calls: int = 0  # calls that raised (billed all the same: tokens, latency)
    requests: int = 0  # HTTP requests they took (retries, a re-ask, refused probes included)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

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

    goal: str
    observation: Observation
    history: list[StepRecord] = Field(default_factory=list)
    pending: Optional[AgentStep] = None  # the step about to be taken (a `status: complete` claim, say)
    cache: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @property
    def previous(self) -> Optional[StepRecord]:
        return self.history[-1] if self.history else None

    @property
    def last_action(self) -> Optional[Action]:
        return self.history[-1].step.action if self.history else None

    @property
    def previous_observation(self) -> Optional[Observation]:
        return self.history[-1].observation if self.history else None

    def observations(self) -> list[Observation]:
        """Every observation in order, ending with the current one."""
        return [r.observation for r in self.history] + [self.observation]


class Finding(BaseModel):
    """One diagnoser's answer for one step."""

    model_config = ConfigDict(extra="forbid")

    diagnoser: str
    problem: bool
    verdict: Verdict
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    evidence: list[str] = Field(default_factory=list)
    tier: Tier = "rules"
    cost: Cost = Field(default_factory=Cost)
    details: dict[str, Any] = Field(default_factory=dict)
    # what of the screen a rule read: the UI tree, text read from the screenshot (OCR), or
    # its pixels alone (None: a model's judgment, or nothing to read)
    source: Optional[ScreenSource] = None

    @property
    def uncertain(self) -> bool:
        return self.verdict == "uncertain"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Diagnoser(ABC):
    """Base class. Subclasses implement :meth:`rules` (deterministic, free) and
    :meth:`from_judgment` (read the shared VLM judgment); the tier is chosen by
    ``mode``. ``rules`` may return verdict ``uncertain``; the cascade then asks the model.
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
        if self.judge is None:
            raise RuntimeError(f"{self.name}: mode needs a model but no VLM judge is configured "
                               "(pass vlm= to ttir.guard or set TTIR_VLM_BASE_URL)")
        judgment, cost = self.judge.judge(ctx)
        return self.from_judgment(judgment, cost)

    def diagnose(self, ctx: DiagnosisContext) -> Finding:
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
