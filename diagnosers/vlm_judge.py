"""The model tier: the paper's diagnoser call and the recovery agent's call.

:class:`VLMJudge` renders ``prompts/diagnose.md`` for a :class:`DiagnosisContext`
(goal, the previous and current screenshots — or the UI tree as text when there
is no screenshot — and the last ``cascade.history`` steps) and makes ONE call
per step: the ``(Judgment, Cost)`` is cached in ``ctx.cache`` so the four
diagnosers share it, and the call's cost is charged to the first of them only.

:class:`RecoveryModel` renders a recovery prompt (alternative_action,
dismiss_interference, re_orientation) and parses one validated :class:`Action`
(with thought and summary) back; anything else is a :class:`VLMBadReply`.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from loguru import logger
from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

import prompts
from ttir.core.diagnosis import Cost, DiagnosisContext, Finding
from diagnosers.judgment import Judgment
from ttir.core.config import RECOVERIES, CascadeConfig, PromptsConfig, TTIRConfig, VLMConfig
from ttir.core.types import ENDING_TYPES, Action, AgentStep, Observation, StepRecord
from ttir.model.client import VLMClient

CACHE_KEY = "vlm_judgment"
_TASK_KEY = "vlm_judgment_task"
_LOCK_KEY = "vlm_judgment_lock"
RECOVERY_STRATEGIES = RECOVERIES  # the recoveries that have a prompt: every built-in one


# text helpers live in ttir.core.describe (the VLM agent uses them too)
from ttir.core.describe import (  # noqa: E402
    PREVIOUS_TREE_LINES,
    THOUGHT_CHARS,
    TREE_LINES,
    compact_tree,
    describe_action,
    describe_history,
    describe_screens,
)
from ttir.core.prompt_data import fence, quote  # noqa: E402

EVIDENCE_CHARS = 200


def _describe_pending(pending: Optional[AgentStep]) -> str:
    if pending is None:
        return "(not chosen yet)"
    lines = [describe_action(pending.action)]
    if pending.summary:
        lines.append(f"summary: {quote(pending.summary, THOUGHT_CHARS)}")
    if pending.thought:
        lines.append(f"thought: {quote(pending.thought, THOUGHT_CHARS)}")
    text = fence("the agent's proposed step", "\n".join(lines))
    if pending.action.action_type == "status" and pending.action.goal_status == "complete":
        text += "\nThe agent claims the task is complete; check that the screen confirms it."
    return text


def _sections(config: Any, **given: Any) -> dict[str, Any]:
    """Pick the sections out of a TTIRConfig, or a single section, plus explicit ones."""
    found: dict[str, Any] = {"cascade": None, "prompts": None, "vlm": None}
    if isinstance(config, TTIRConfig):
        found.update(cascade=config.cascade, prompts=config.prompts, vlm=config.vlm)
    elif isinstance(config, CascadeConfig):
        found["cascade"] = config
    elif isinstance(config, PromptsConfig):
        found["prompts"] = config
    elif isinstance(config, VLMConfig):
        found["vlm"] = config
    elif config is not None:
        raise TypeError(f"config={type(config).__name__} must be a TTIRConfig or one of its sections "
                        "(CascadeConfig, PromptsConfig, VLMConfig)")
    for key, value in given.items():
        if value is not None:
            found[key] = value
    return {
        "cascade": found["cascade"] or CascadeConfig(),
        "prompts": found["prompts"] or PromptsConfig(),
        "vlm": found["vlm"] or VLMConfig(),
    }


# --------------------------------------------------------------------- the judge


def _failure_cost(exc: BaseException) -> Cost:
    usage = getattr(exc, "usage", None)
    return Cost(**usage.as_cost()) if usage is not None else Cost()


@dataclass
class _Outcome:
    judgment: Optional[Judgment]
    cost: Cost
    error: Optional[BaseException] = None
    charged: bool = False


class VLMJudge:
    """The paper's diagnoser: one model call per step, shared by the four diagnosers.

    ``client`` is a :class:`~ttir.model.client.VLMClient` (built from the config's
    ``vlm`` section when omitted); ``config`` a :class:`TTIRConfig` or any of
    its sections (``cascade``, ``prompts``, ``vlm`` keywords override).
    """

    def __init__(self, client: Optional[VLMClient] = None, config: Any = None, *,
                 cascade: Optional[CascadeConfig] = None, prompts_config: Optional[PromptsConfig] = None,
                 vlm: Optional[VLMConfig] = None, include_tree: bool = False):
        sections = _sections(config, cascade=cascade, prompts=prompts_config, vlm=vlm)
        self.cascade: CascadeConfig = sections["cascade"]
        self.prompts: PromptsConfig = sections["prompts"]
        self.client = client if client is not None else VLMClient(sections["vlm"])
        self.template = prompts.load(self.prompts.diagnose)
        self._data_notice = prompts.load("data_notice").render().strip()
        self.include_tree = include_tree
        self._lock = threading.Lock()

    # -- schedule --------------------------------------------------------------------
    def scheduled(self, ctx: DiagnosisContext) -> bool:
        """True when ``cascade.every_n_steps`` asks for a model call at this step
        regardless of the rules: after every N-th step of the episode (N = 0: never)."""
        n = self.cascade.every_n_steps
        steps = len(ctx.history)
        return n > 0 and steps > 0 and steps % n == 0

    # -- prompt ----------------------------------------------------------------------
    def build_prompt(self, ctx: DiagnosisContext, vision: Optional[bool] = None) -> tuple[str, list[Any]]:
        """The rendered diagnose prompt and the images to send with it (none, and the
        accessibility trees as text, for a text-only endpoint: ``vision=False``)."""
        vision = self.client.sends_images if vision is None else vision
        screen, images = describe_screens(ctx.observation, ctx.previous_observation, include_tree=self.include_tree,
                                          vision=vision)
        text = self.template.render(
            data_notice=self._data_notice,
            goal=ctx.goal,
            step=len(ctx.history) + 1,
            history=describe_history(ctx.history, self.cascade.history),
            pending=_describe_pending(ctx.pending),
            screen=screen,
        )
        return text, images

    # -- calls -----------------------------------------------------------------------
    def judge(self, ctx: DiagnosisContext) -> tuple[Judgment, Cost]:
        """The step's judgment: one model call per context, then served from ``ctx.cache``.

        The call's cost goes to the first caller; later callers get a zero Cost,
        so summing the four findings counts the call once. A failed call is
        cached too (and re-raised to every caller) so it is not retried four times.
        """
        with self._lock:  # one lock per context: other contexts (threads) are not held up
            step_lock = ctx.cache.setdefault(_LOCK_KEY, threading.Lock())
        with step_lock:
            if CACHE_KEY not in ctx.cache:
                try:
                    result = self.client.ask(lambda vision: self.build_prompt(ctx, vision), Judgment)
                    ctx.cache[CACHE_KEY] = _Outcome(result.value, Cost(**result.usage.as_cost()))
                except Exception as exc:  # noqa: BLE001 - cached: one failure per step, not one call per diagnoser
                    ctx.cache[CACHE_KEY] = _Outcome(None, _failure_cost(exc), exc)
            return self._take(ctx)

    async def ajudge(self, ctx: DiagnosisContext) -> tuple[Judgment, Cost]:
        """The async :meth:`judge`; concurrent callers on one context share one call."""
        await self.prefetch(ctx)
        return self._take(ctx)

    async def prefetch(self, ctx: DiagnosisContext) -> None:
        """Make this context's call without blocking the event loop, and take nothing: the
        diagnosers' :meth:`judge` then serves it from ``ctx.cache``, and its cost goes to
        the first of them (or, when it failed, to :meth:`charge_failure`)."""
        if CACHE_KEY not in ctx.cache:
            task = ctx.cache.get(_TASK_KEY)
            if task is None:
                task = asyncio.ensure_future(self._afetch(ctx))
                ctx.cache[_TASK_KEY] = task
            await task

    async def _afetch(self, ctx: DiagnosisContext) -> None:
        try:
            result = await self.client.aask(lambda vision: self.build_prompt(ctx, vision), Judgment)
            ctx.cache[CACHE_KEY] = _Outcome(result.value, Cost(**result.usage.as_cost()))
        except Exception as exc:  # noqa: BLE001
            ctx.cache[CACHE_KEY] = _Outcome(None, _failure_cost(exc), exc)

    @staticmethod
    def _take(ctx: DiagnosisContext) -> tuple[Judgment, Cost]:
        outcome: _Outcome = ctx.cache[CACHE_KEY]
        if outcome.error is not None:
            raise outcome.error  # its cost is collected once, by charge_failure
        cost = Cost() if outcome.charged else outcome.cost
        outcome.charged = True
        assert outcome.judgment is not None
        return outcome.judgment, cost

    # -- sanity probe ----------------------------------------------------------------
    def interference_trusted(self) -> tuple[Optional[bool], Cost]:
        """Does this endpoint's model tell a plain home screen from an interruption?
        Asked once per endpoint and model in a process (``cascade.probe``); returns
        (True / False, or None when the probe call failed, and what the call cost: a zero
        Cost when the answer was known already)."""
        answered = self._probe_answered()
        if answered is not None:
            return answered
        ctx = _probe_context()
        try:
            result = self.client.ask(lambda vision: self.build_prompt(ctx, vision), Judgment)
        except Exception as exc:  # noqa: BLE001 - a failed probe leaves the model's say as configured
            return self._probe_failed(exc)
        return self._probe_answer(result)

    async def aprepare(self, ctx: DiagnosisContext) -> Cost:
        """For an async guard, before the diagnosers run: make this step's call (see
        :meth:`prefetch`) and, when its judgment says interference, the sanity probe, both
        off the event loop. Returns what the probe cost (the call's cost is taken later)."""
        await self.prefetch(ctx)
        outcome: Optional[_Outcome] = ctx.cache.get(CACHE_KEY)
        if outcome is None or outcome.judgment is None or not outcome.judgment.interference_present:
            return Cost()
        return (await self.ainterference_trusted())[1]

    async def ainterference_trusted(self) -> tuple[Optional[bool], Cost]:
        """:meth:`interference_trusted` for an async guard (the call does not block the loop)."""
        answered = self._probe_answered()
        if answered is not None:
            return answered
        ctx = _probe_context()
        try:
            result = await self.client.aask(lambda vision: self.build_prompt(ctx, vision), Judgment)
        except Exception as exc:  # noqa: BLE001
            return self._probe_failed(exc)
        return self._probe_answer(result)

    def _probe_answered(self) -> Optional[tuple[Optional[bool], Cost]]:
        """The probe's answer when no call is needed (probe off, or asked already), else None."""
        if not self.cascade.probe:
            return True, Cost()
        with _PROBE_LOCK:
            key = _probe_key(self.client)
            return (_PROBED[key], Cost()) if key in _PROBED else None

    def _probe_answer(self, result: Any) -> tuple[Optional[bool], Cost]:
        return _probe_store(self.client, not result.value.interference_present), Cost(**result.usage.as_cost())

    def _probe_failed(self, exc: BaseException) -> tuple[Optional[bool], Cost]:
        return _probe_store(self.client, None), _failure_cost(exc)

    @staticmethod
    def charge_failure(ctx: DiagnosisContext) -> Cost:
        """What this context's failed call cost (tokens billed, latency, the failed call), once;
        a zero Cost when the call succeeded, was not made or was charged already."""
        outcome: Optional[_Outcome] = ctx.cache.get(CACHE_KEY)
        if outcome is None or outcome.error is None or outcome.charged:
            return Cost()
        outcome.charged = True
        return outcome.cost


_PROBED: dict[tuple[str, str], Optional[bool]] = {}  # (base_url, model) -> trusted (None: the probe failed)
_PROBE_LOCK = threading.Lock()


def _probe_key(client: VLMClient) -> tuple[str, str]:
    return str(client.base_url), str(client.model)


def _probe_store(client: VLMClient, trusted: Optional[bool]) -> Optional[bool]:
    with _PROBE_LOCK:
        _PROBED[_probe_key(client)] = trusted
    if trusted is False:
        logger.warning("vlm: {} ({}) called a plain home screen interference when probed: its interference "
                       "verdicts are logged, not acted on (cascade.probe)", client.model, client.base_url)
    return trusted


def _probe_context() -> DiagnosisContext:
    """The probe's screen and goal (diagnosers/data/probes): nothing on it interferes."""
    from diagnosers.signals.data import DATA_DIR, builtin

    spec = builtin("probes/probes")["interference_free"]
    xml = (DATA_DIR / "probes" / spec["screen"]).read_text(encoding="utf-8")
    return DiagnosisContext(goal=spec["goal"], observation=Observation.from_xml(xml), history=[])


# ------------------------------------------------------------- recovery proposals


_ACTION_FIELDS = set(Action.model_fields)


class RecoveryReply(BaseModel):
    """What a recovery prompt asks for: one action with its thought and summary.

    A flat reply (``{"action_type": …, "thought": …}``) is accepted too; keys
    that are not Action fields are dropped before the action is validated.
    """

    model_config = ConfigDict(extra="ignore")

    thought: str = ""
    summary: str = ""
    action: Action

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "action" not in data and "action_type" in data:
            data["action"] = {k: v for k, v in data.items() if k in _ACTION_FIELDS}
        action = data.get("action")
        if isinstance(action, dict):
            dropped = sorted(set(action) - _ACTION_FIELDS)
            if dropped:
                logger.debug("recovery reply: ignoring unknown action field(s) {}", dropped)
            data["action"] = {k: v for k, v in action.items() if k in _ACTION_FIELDS and v is not None}
        for key in ("thought", "summary"):
            if data.get(key) is None:
                data.pop(key, None)
            elif not isinstance(data[key], str):
                data[key] = str(data[key])
        return data

    @model_validator(mode="after")
    def _fits_screen(self, info: ValidationInfo) -> "RecoveryReply":
        obs = (info.context or {}).get("observation")
        if obs is not None:
            check_action(self.action, obs)
        return self


def check_action(action: Action, obs: Observation, *, slack_px: int = 8) -> None:
    """Raise ``ValueError`` when ``action`` cannot be a recovery step on ``obs``:
    it ends the task, points at an element that does not exist, or off the screen."""
    if action.action_type in ENDING_TYPES:
        raise ValueError(f"action_type={action.action_type!r}: a recovery step may not end or answer the task")
    if action.index is not None and obs.elements and action.index >= len(obs.elements):
        raise ValueError(f"index={action.index} is out of range: the screen has {len(obs.elements)} elements")
    if action.index is not None and not obs.elements:
        raise ValueError(f"index={action.index}: the screen has no accessibility tree; use x and y")
    w, h = obs.screen_size
    for name_x, name_y in (("x", "y"), ("x2", "y2")):
        x, y = getattr(action, name_x), getattr(action, name_y)
        if x is not None and y is not None and (x > w + slack_px or y > h + slack_px):
            raise ValueError(f"{name_x}={x}, {name_y}={y} is off the {w}x{h} screen")


class RecoveryModel:
    """The VLM tier of the recoveries: render a recovery prompt, get one validated action.

    ``propose(strategy, ctx)`` takes a ``ttir.core.recovery.RecoveryContext`` (any
    object with ``goal``, ``observation``, ``history``, ``finding``, ``taken``
    and ``budget``) and returns ``(AgentStep, Cost)``. The prompt is the one
    ``PromptsConfig`` names for the strategy, unless ``prompt=`` (a name or a path) is given.
    """

    def __init__(self, client: Optional[VLMClient] = None, config: Any = None, *,
                 prompts_config: Optional[PromptsConfig] = None, history: Optional[int] = None,
                 include_tree: bool = True):
        sections = _sections(config, prompts=prompts_config)
        self.prompts: PromptsConfig = sections["prompts"]
        self.history = sections["cascade"].history if history is None else history
        self.client = client if client is not None else VLMClient(sections["vlm"])
        self.include_tree = include_tree
        self._action_space = prompts.load("action_space").render()
        self._data_notice = prompts.load("data_notice").render().strip()

    def template(self, strategy: str, prompt: Optional[str] = None) -> prompts.PromptTemplate:
        if strategy not in RECOVERY_STRATEGIES:
            raise ValueError(f"strategy={strategy!r} is not a recovery strategy; expected one of "
                             f"{', '.join(RECOVERY_STRATEGIES)}")
        return prompts.load(prompt or getattr(self.prompts, strategy))

    def build_prompt(self, strategy: str, ctx: Any, *, prompt: Optional[str] = None,
                     vision: Optional[bool] = None) -> tuple[str, list[Any]]:
        """The rendered recovery prompt and the images to send with it (text only: ``vision=False``)."""
        vision = self.client.sends_images if vision is None else vision
        template = self.template(strategy, prompt)
        obs: Observation = ctx.observation
        history: list[StepRecord] = list(ctx.history)
        finding: Finding = ctx.finding
        agent_steps = [r.step for r in history if r.source == "agent"]
        failed = agent_steps[-1] if agent_steps else None
        subgoal = next((s.summary for s in reversed(agent_steps) if s.summary), "")
        screen, images = describe_screens(obs, None, include_tree=self.include_tree, vision=vision)
        taken = list(getattr(ctx, "taken", []) or [])
        budget = getattr(ctx, "budget", len(taken) + 1)
        reason = str(finding.details.get("reason") or "") or f"{finding.diagnoser} answered {finding.verdict!r}"
        evidence = [f"- {quote(e, EVIDENCE_CHARS)}" for e in finding.evidence[:6]]
        text = template.render(
            data_notice=self._data_notice,
            goal=ctx.goal,
            diagnoser=finding.diagnoser,
            verdict=finding.verdict,
            reason=quote(reason, THOUGHT_CHARS),
            evidence=fence("the diagnosis' evidence", "\n".join(evidence)) if evidence else "",
            failed_action=describe_action(failed.action) if failed else "(none recorded)",
            intended_effect=(quote(failed.summary, THOUGHT_CHARS) if failed and failed.summary
                             else "(not stated; infer it from the history)"),
            recent_subgoal=quote(subgoal, THOUGHT_CHARS) if subgoal else "(not stated; infer it from the goal and the history)",
            history=describe_history(history, self.history),
            taken=fence("recovery steps taken", "\n".join(
                f"- {describe_action(s.action)}" + (f" — {quote(s.summary, THOUGHT_CHARS)}" if s.summary else "")
                for s in taken)) if taken else "(none yet)",
            remaining=max(0, budget - len(taken)),
            screen=screen,
            screen_size=f"{obs.screen_size[0]}x{obs.screen_size[1]}",
            action_space=self._action_space,
        )
        return text, images

    def _step(self, result: Any) -> tuple[AgentStep, Cost]:
        reply: RecoveryReply = result.value
        step = AgentStep(action=reply.action, thought=reply.thought, summary=reply.summary, raw=result.raw)
        return step, Cost(**result.usage.as_cost())

    def propose(self, strategy: str, ctx: Any, *, prompt: Optional[str] = None) -> tuple[AgentStep, Cost]:
        """One corrective step for ``ctx``; a reply that is not a valid action on
        the current screen raises :class:`VLMBadReply`."""
        result = self.client.ask(lambda vision: self.build_prompt(strategy, ctx, prompt=prompt, vision=vision),
                                 RecoveryReply, validation_context={"observation": ctx.observation})
        return self._step(result)

    async def apropose(self, strategy: str, ctx: Any, *, prompt: Optional[str] = None) -> tuple[AgentStep, Cost]:
        result = await self.client.aask(lambda vision: self.build_prompt(strategy, ctx, prompt=prompt, vision=vision),
                                        RecoveryReply, validation_context={"observation": ctx.observation})
        return self._step(result)


__all__ = [
    "CACHE_KEY",
    "RECOVERY_STRATEGIES",
    "RecoveryModel",
    "RecoveryReply",
    "VLMJudge",
    "check_action",
    "compact_tree",
    "describe_history",
    "describe_screens",
]
