"""``ttir.guard(agent)``: Test-Time Introspective Recovery around any agent.

ASGI-style middleware: the guarded agent has the same interface as the agent it
wraps. Before each step it asks four diagnosers about the current screen and the
history; on a problem it runs a bounded recovery session, then hands control back.
Anything that goes wrong inside the guard is logged and recorded, and the wrapped
agent's own step is used instead (fail open); when the model fails, or rests after
failing on several steps in a row, the rules tier decides. The wrapped agent's own
exceptions are its own: they propagate unchanged and are not guard failures.
"""

from __future__ import annotations

import hashlib
import inspect
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Optional, Sequence

from loguru import logger

from ttir.model.breaker import ModelBreaker
from ttir.guarded.checks import Check, configured_checks, default_checks, mode_of
from ttir.core.config import ConfigLike, TTIRConfig, as_config
from ttir.core.errors import ConfigError, GuardUsageError, ObservationTypeError, unknown_name
from ttir.model.deadline import model_deadline, paused_deadline
from ttir.guarded.report import GUARD_EVENT_NAMES, GuardEventName, GuardReport, SessionRecord, StepUsage
from ttir.core.diagnosis import Cost, DiagnosisContext, Finding, SupportsDiagnose
from ttir.core.recovery import Recovery, RecoveryContext
from ttir.core.types import Action, AgentStep, Observation, StepRecord, as_agent, as_step, is_async_agent
from ttir.core.validation import short_repr
from ttir.model.client import VLMClient, run_sync

HISTORY_LIMIT = 64


@dataclass
class _Session:
    record: SessionRecord
    check: Check
    finding: Finding
    taken: list[AgentStep] = field(default_factory=list)
    signature: str = ""

    @property
    def recovery(self) -> Recovery:
        return self.check.recovery


class Handled(NamedTuple):
    """How a check's last session ended: the no-ping-pong and cooldown rules read it."""

    closed_at: int  # the guard step it closed at
    signature: str  # the screen it closed on (screen_signature)
    outcome: str  # a SessionOutcome, or "unavailable": the recovery had nothing to try


def screen_signature(obs: Observation) -> str:
    """A cheap identity of what is on screen (package + node texts/ids/bounds)."""
    h = hashlib.blake2b(digest_size=12)
    h.update((obs.package or "").encode())
    for e in obs.elements:
        h.update(f"{e.class_name}|{e.resource_id}|{e.text}|{e.content_desc}|{tuple(e.bounds)}|{e.checked}".encode())
    return h.hexdigest()


def _rules(d: SupportsDiagnose, ctx: DiagnosisContext) -> Finding:
    """The free tier of diagnoser ``d`` (one without ``rules`` is a rule itself)."""
    rules = getattr(d, "rules", None)
    return _as_finding(d, rules(ctx) if callable(rules) else d.diagnose(ctx))


def _as_finding(d: SupportsDiagnose, f: Any) -> Finding:
    """``f`` when it is a :class:`Finding`; else a TypeError naming the diagnoser (a user's check
    that returned None or a dict sat every step out, and nothing said so)."""
    if not isinstance(f, Finding):
        raise TypeError(f"diagnoser {getattr(d, 'name', type(d).__name__)!r} returned {short_repr(f)} "
                        f"({type(f).__name__}); expected a ttir.Finding, e.g. Finding(diagnoser=self.name, "
                        "problem=False, verdict='false')")
    return f


def _checked_vlm(vlm: Any) -> Optional[VLMClient]:
    """``vlm`` when it is a model client (anything with ``ask``, as :class:`VLMClient`), else TypeError:
    a URL or a model name given here would otherwise fail every model call, which the guard fails
    open on, so the mistake would pass as "the rules decided"."""
    if vlm is None or callable(getattr(vlm, "ask", None)):
        return vlm
    raise TypeError(f"vlm={short_repr(vlm)} ({type(vlm).__name__}) is not a model client: expected a "
                    "ttir.model.client.VLMClient, e.g. VLMClient(base_url='http://127.0.0.1:8000/v1', model='…'), "
                    "or None (an endpoint can also be named in the config's vlm.base_url or $TTIR_VLM_BASE_URL)")


def _checked_checks(checks: Any) -> Optional[list[Check]]:
    """``checks`` as a list of :class:`Check`, else TypeError naming the first thing that is not one."""
    if checks is None:
        return None
    if isinstance(checks, (str, bytes, Check, Mapping)) or not isinstance(checks, Sequence):
        raise TypeError(f"checks={short_repr(checks)} ({type(checks).__name__}): expected a list of ttir.Check "
                        "in priority order, e.g. checks=[*ttir.default_checks(), my_check]; to switch a diagnoser "
                        "off, set its mode to 'off' in the config")
    for i, c in enumerate(checks):
        if not isinstance(c, Check):
            raise TypeError(f"checks[{i}]={short_repr(c)} ({type(c).__name__}): expected a ttir.Check, e.g. "
                            "ttir.Check(diagnoser, recovery); ttir.default_checks() gives the four of the paper")
    return list(checks)


class _Core:
    """The guard's logic, shared by the sync and async agents. Model calls are the
    only awaits; in the sync path they complete without suspending."""

    def __init__(self, inner: Any, config: TTIRConfig, vlm: Optional[VLMClient], is_async: bool,
                 checks: Optional[list[Check]] = None):
        self.inner = inner
        self.config = config
        self.is_async = is_async
        self.vlm = vlm = _checked_vlm(vlm)
        checks = _checked_checks(checks)
        self.judge = None
        self.recovery_model = None
        if vlm is not None:
            from diagnosers.vlm_judge import RecoveryModel, VLMJudge

            self.judge = VLMJudge(vlm, config)
            self.recovery_model = RecoveryModel(vlm, config)
        if checks is None:
            checks = default_checks(config, judge=self.judge, recovery_client=self.recovery_model, model=vlm is not None)
        # the list's order is the priority: the first check whose problem may open a session wins
        self.checks: list[Check] = [c.attach(judge=self.judge, recovery_client=self.recovery_model)
                                    for c in [*checks, *configured_checks(config)]]
        names = [c.name for c in self.checks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"checks: names must be unique (sessions and reports are kept by name); "
                              f"{', '.join(dupes)} appear more than once: {names}")
        # across steps and episodes: a dead endpoint stays dead when the goal changes
        self.breaker = ModelBreaker(config.vlm.breaker_failures, config.vlm.breaker_rest_steps)
        self.model_ok = vlm is not None
        self.busy = threading.Lock()
        self.reset("")

    def check(self, name: str) -> Check:
        """The check called ``name`` (tests and users swap a check's parts through it)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise unknown_name("check", name, [c.name for c in self.checks])

    # -- episode state ----------------------------------------------------------------
    def reset(self, goal: str) -> None:
        self.goal = goal
        self.history: list[StepRecord] = []
        self.last: Optional[tuple[Observation, AgentStep, str]] = None
        self.session: Optional[_Session] = None
        self.handled: dict[str, Handled] = {}  # check name -> how its last session ended
        self.report = GuardReport(goal=goal)
        self.t = 0
        self.new_events: list[dict[str, Any]] = []
        self.all_events: list[dict[str, Any]] = []
        self.usage: Optional[StepUsage] = None
        self.inner_step: Optional[AgentStep] = None
        self._told: set[str] = set()  # checks whose "nothing to try" was logged this episode
        self._warned: set[str] = set()  # kinds of the guard's own faults logged at WARNING this episode

    def event(self, kind: GuardEventName, **data: Any) -> None:
        if kind not in GUARD_EVENT_NAMES:  # our own bug: a name no reader knows would be counted nowhere
            raise ValueError(f"guard event {kind!r} is not declared in ttir/guarded/report.py (GuardEventName)")
        if "event" in data:  # our own bug too: the name would be overwritten
            raise ValueError(f"guard event {kind!r}: 'event' is the event's name, not one of its details")
        e = {"step": self.t, "event": kind, **data}
        self.new_events.append(e)
        self.all_events.append(e)

    # -- one step ---------------------------------------------------------------------
    async def step(self, obs: Observation) -> AgentStep:
        self.inner_step = None
        self._inner_ms = 0.0
        self._agent_error: Optional[BaseException] = None
        self._ctx: Optional[DiagnosisContext] = None
        self.usage = StepUsage(step=self.t)
        uses_model = self.vlm is not None and self.config.enabled
        self.model_ok = uses_model and self.breaker.begin_step()
        t0 = time.perf_counter()
        try:
            with model_deadline(self.config.vlm.step_deadline_s if self.model_ok else None,
                                reasks=self.config.vlm.reasks_per_step):
                if not self.config.enabled:
                    out, source = await self.call_inner(obs), "agent"
                else:
                    out, source = await self.decide(obs)
        except Exception as exc:  # noqa: BLE001 - fail open: the wrapped agent's own step
            if exc is self._agent_error:
                raise  # the agent's own bug: unchanged, called once, not a guard failure
            kind = type(exc).__name__
            if kind not in self._warned:  # once per kind and episode: a fault on every step is one message
                self._warned.add(kind)
                logger.opt(exception=exc).warning("ttir guard failed at step {} ({}); using the agent's own step "
                                                  "(further {} faults this episode: DEBUG; all in report.errors)",
                                                  self.t, kind, kind)
            else:
                logger.debug("ttir guard failed at step {}: {}: {}", self.t, kind, exc)
            self.report.errors.append({"step": self.t, "error": f"{type(exc).__name__}: {exc}",
                                       "traceback": traceback.format_exc(limit=6)})
            self.event("guard_error", error=f"{type(exc).__name__}: {exc}")
            self.session = None
            if self.judge is not None and self._ctx is not None:
                self._account(self.judge.charge_failure(self._ctx))
            out = self.inner_step if self.inner_step is not None else await self.call_inner(obs)
            source = "agent"
        if self.model_ok and self.breaker.end_step(self.usage.model_calls, self.usage.model_errors):
            self.event("model_resting", steps=self.breaker.rest_steps, failed_steps=self.breaker.failures)
        self.last = (obs, out.bounded(), source)  # the history's copy: a runaway reply costs no check its length
        self.usage.source = source  # type: ignore[assignment]
        self.usage.guard_ms = (time.perf_counter() - t0) * 1000 - self._inner_ms
        self.report.usage.append(self.usage)
        self.report.steps += 1
        self.t += 1
        return out

    _inner_ms = 0.0

    async def call_inner(self, obs: Observation) -> AgentStep:
        t0 = time.perf_counter()
        try:
            with paused_deadline():  # the agent's time, and its own model calls, are not the guard's
                result = self.inner.step(obs)
                if inspect.isawaitable(result):  # an async agent (four forms, adapted at the door by as_agent)
                    result = await result
            step = as_step(result)
        except Exception as exc:
            self._agent_error = exc  # step() lets it through as it is
            raise
        self._inner_ms = (time.perf_counter() - t0) * 1000
        self.inner_step = step
        return step

    async def decide(self, obs: Observation) -> tuple[AgentStep, str]:
        self._inner_ms = 0.0
        if self.last is not None:
            o, s, src = self.last
            self.history.append(StepRecord(observation=o, step=s, source=src))  # type: ignore[arg-type]
            del self.history[:-HISTORY_LIMIT]
        ctx = self._ctx = DiagnosisContext(goal=self.goal, observation=obs, history=list(self.history))
        sig = screen_signature(obs)

        # 1. an open recovery session: is its target condition met?
        if self.session is not None:
            step = await self.continue_session(ctx, sig)
            if step is not None:
                return step, "recovery"

        # 2. diagnose: every check that looks at screens, in priority order
        findings = []
        for check in self.checks:
            if check.screens:
                f = await self.diagnose(check, ctx)
                if f is not None:
                    findings.append((check, f))
        # 3. on a problem, open a session for the highest-priority finding
        for check, f in findings:
            if f.problem and self.may_open(check.name, sig):
                step = await self.open_session(check, f, ctx, sig)
                if step is not None:
                    return step, "recovery"
        # 4. the wrapped agent acts; the checks that review its step (a completion claim, say) see it first
        step = await self.call_inner(obs)
        for check in self.checks:
            if check.reviews_step(step):
                blocked = await self.review(check, ctx, step, sig)
                if blocked is not None:
                    return blocked, "recovery"
        return step, "agent"

    # -- diagnosis ----------------------------------------------------------------------
    async def diagnose(self, check: Check, ctx: DiagnosisContext) -> Optional[Finding]:
        d = check.diagnoser
        if not check.enabled:
            return None
        try:
            f = await self.finding(d, ctx)
        except Exception as exc:  # noqa: BLE001 - neither tier could answer: this diagnoser sits the step out
            error = f"{type(exc).__name__}: {exc}"
            if not any(e.get("step") == self.t and e.get("diagnoser") == check.name and e.get("error") == error
                       for e in self.report.errors[-3:]):  # its rules failed as its first try did: once is enough
                self.report.errors.append({"step": self.t, "diagnoser": check.name, "error": error})
                self.event("diagnoser_error", diagnoser=check.name, error=error)
                if f"{check.name}:{type(exc).__name__}" not in self._warned:
                    self._warned.add(f"{check.name}:{type(exc).__name__}")
                    logger.warning("ttir guard: check {} could not decide at step {} ({}); it sits the step out "
                                   "(further ones this episode: report.errors only)", check.name, self.t, error[:200])
            return None
        record = {"step": self.t, **f.to_dict(), "diagnoser": check.name}
        self.report.findings.append(record)
        self.event("finding", **{k: record[k] for k in ("diagnoser", "problem", "verdict", "tier", "confidence", "evidence")})
        if f.uncertain and f.tier == "rules":
            # the rule tier never acts on an uncertain verdict; the cascade would have asked the model here
            logger.debug("ttir step {}: {} uncertain, no model asked ({}); not acting", self.t, check.name,
                        "; ".join(f.evidence)[:200])
        return f

    async def finding(self, d: SupportsDiagnose, ctx: DiagnosisContext) -> Finding:
        """``d``'s finding on ``ctx``, its cost accounted. When the model tier rests or its call
        fails, the rules tier decides (a failure is recorded and billed); raises only when the
        rules fail too."""
        if self.vlm is not None and not self.model_ok and mode_of(d) in ("vlm", "cascade"):
            f = _rules(d, ctx)
            f.evidence.append("model tier resting after failing on consecutive steps; the rules decided")
        else:
            try:
                if self.is_async and self.judge is not None and self._needs_model(d, ctx):
                    # the step's call (and the judge's once-per-endpoint probe) off the event loop:
                    # diagnose() below takes the call and its cost from ctx.cache
                    self._account(await self.judge.aprepare(ctx))
                f = _as_finding(d, d.diagnose(ctx))
            except Exception as exc:  # noqa: BLE001 - one failing diagnoser (or model) must not stop the others
                name = getattr(d, "name", type(d).__name__)
                self.report.errors.append({"step": self.t, "diagnoser": name, "error": f"{type(exc).__name__}: {exc}"})
                self.event("diagnoser_error", diagnoser=name, error=f"{type(exc).__name__}: {exc}")
                if f"{name}:{type(exc).__name__}" not in self._warned:  # once per kind and episode
                    self._warned.add(f"{name}:{type(exc).__name__}")
                    logger.warning("ttir guard: diagnoser {} failed at step {} ({}: {}); its rules decide "
                                   "(further ones this episode: report.errors only)", name, self.t,
                                   type(exc).__name__, str(exc)[:200])
                if self.judge is not None:
                    self._account(self.judge.charge_failure(ctx))
                f = _rules(d, ctx)  # fall back to the free tier
                f.evidence.append(f"model unavailable: {type(exc).__name__}")
        self._account(f.cost)
        return f

    def _needs_model(self, d: SupportsDiagnose, ctx: DiagnosisContext) -> bool:
        mode = mode_of(d)
        if mode == "vlm":
            return True
        if mode != "cascade":
            return False
        if self.judge.scheduled(ctx):
            return True
        return _rules(d, ctx).uncertain

    def _account(self, cost: Optional[Cost]) -> None:
        if cost is None or self.usage is None:
            return
        self.usage.model_calls += cost.model_calls
        self.usage.model_errors += cost.failed_calls
        self.usage.model_requests += cost.requests
        self.usage.prompt_tokens += cost.prompt_tokens
        self.usage.completion_tokens += cost.completion_tokens
        self.usage.model_latency_s += cost.latency_s

    # -- sessions ---------------------------------------------------------------------------
    def may_open(self, name: str, sig: str) -> bool:
        rc = self.config.recovery
        if len(self.report.sessions) >= rc.max_sessions:
            return False
        last = self.handled.get(name)
        if last is not None:
            closed_at, handled_sig, outcome = last
            if handled_sig == sig and outcome != "resolved":
                return False  # no ping-pong: what failed on this screen is not tried again on it
            if self.t - closed_at < rc.cooldown and (outcome != "resolved" or handled_sig == sig):
                return False  # let the agent act before trying again
        return True

    async def open_session(self, check: Check, finding: Finding, ctx: DiagnosisContext, sig: str) -> Optional[AgentStep]:
        recovery = check.recovery
        trigger = {k: v for k, v in finding.to_dict().items() if k != "details"}
        trigger["diagnoser"] = check.name
        rec = SessionRecord(id=len(self.report.sessions) + 1, diagnoser=check.name, recovery=recovery.name,
                            opened_at=self.t, trigger=trigger)
        session = _Session(rec, check, finding, signature=sig)
        step = await self.next_recovery(session, ctx)
        if step is None:
            self.handled[check.name] = Handled(self.t, sig, "unavailable")  # nothing to try: not again on this screen
            self.event("recovery_unavailable", diagnoser=check.name, recovery=recovery.name)
            self.report.unavailable.append({"step": self.t, "diagnoser": check.name, "recovery": recovery.name,
                                            "verdict": finding.verdict, "evidence": list(finding.evidence)[:5]})
            if check.name not in self._told:
                self._told.add(check.name)
                logger.info("ttir guard: {} found a problem at step {} ({}) and its recovery {} had nothing to try; "
                            "the agent's own step goes on (report.unavailable)", check.name, self.t,
                            "; ".join(finding.evidence[:2])[:200], recovery.name)
            self.notify(check, recovery.name, "unavailable", [])
            return None
        self.report.sessions.append(rec)
        self.session = session
        self.event("session_opened", session=rec.id, diagnoser=check.name, recovery=recovery.name,
                   verdict=finding.verdict, evidence=finding.evidence)
        return self.take(session, step)

    async def continue_session(self, ctx: DiagnosisContext, sig: str) -> Optional[AgentStep]:
        s = self.session
        assert s is not None
        if await self.target_met(s, ctx):
            self.close(s, "resolved", sig)
            return None
        if len(s.taken) >= self.config.recovery.budget:
            self.close(s, "budget_spent", sig)
            return None
        step = await self.next_recovery(s, ctx)
        if step is None:
            self.close(s, "exhausted", sig)
            return None
        return self.take(s, step)

    async def target_met(self, s: _Session, ctx: DiagnosisContext) -> bool:
        check = getattr(s.recovery, "target_met", None)
        if callable(check):
            verdict = check(ctx, s.finding)
            if verdict is not None:
                return bool(verdict)
        f = await self.finding(s.check.target_diagnoser(), ctx)
        return bool(s.check.resolved(f))

    async def next_recovery(self, s: _Session, ctx: DiagnosisContext) -> Optional[AgentStep]:
        rctx = RecoveryContext(goal=self.goal, observation=ctx.observation, history=ctx.history, finding=s.finding,
                               taken=list(s.taken), budget=self.config.recovery.budget)
        before = s.recovery.cost
        if self.vlm is not None and not self.model_ok:
            step = s.recovery.rules(rctx)  # the model tier rests
        elif self.is_async:
            step = await s.recovery.anext_step(rctx)
        else:
            step = s.recovery.next_step(rctx)
        if s.recovery.cost is not before:
            self._account(s.recovery.cost - before)
        for err in rctx.cache.get("errors", []):
            self.report.errors.append({"step": self.t, "recovery": s.recovery.name, "error": err})
        if step is None or isinstance(step, AgentStep):
            return step
        expected = "expected an AgentStep, an Action or an action dict, or None when nothing is left to try"
        if not isinstance(step, (Action, dict)):  # a user's recovery: named, not an AttributeError deep in take()
            raise TypeError(f"recovery {s.recovery.name!r} returned {short_repr(step)} ({type(step).__name__}); "
                            f"{expected}")
        try:  # an Action or an action dict, as an agent may return
            return as_step(step)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"recovery {s.recovery.name!r} returned an action that is not one: {exc}; "
                            f"{expected}") from None

    def take(self, s: _Session, step: AgentStep) -> AgentStep:
        s.taken.append(step)
        s.record.actions.append(step.action.to_dict())
        self.event("recovery_step", session=s.record.id, recovery=s.recovery.name, action=step.action.to_dict(),
                   summary=step.summary)
        return step

    def close(self, s: _Session, outcome: str, sig: str) -> None:
        s.record.outcome = outcome  # type: ignore[assignment]
        s.record.closed_at = self.t
        self.handled[s.check.name] = Handled(self.t, sig, outcome)
        self.session = None
        self.event("session_closed", session=s.record.id, outcome=outcome, steps=len(s.taken))
        self.notify(s.check, s.recovery.name, outcome, list(s.record.actions))

    def notify(self, check: Check, recovery: str, outcome: str, actions: list[dict[str, Any]]) -> None:
        """Tell the agent's ``on_recovery`` hook how a recovery ended (``unavailable``: it had nothing to try).

        The hook is the agent's code: what it raises propagates unchanged, as from ``step`` (it was
        recorded in ``report.errors`` alone, so a bug in it went unseen). The guard's state is
        complete before the hook is called, so the next step goes on from it.
        """
        hook = getattr(self.inner, "on_recovery", None)
        if not callable(hook):
            return
        message = check.message(outcome, self.goal)
        try:
            hook({"diagnoser": check.name, "recovery": recovery, "outcome": outcome, "actions": actions,
                  "message": message})
        except Exception as exc:
            self._agent_error = exc  # step() lets it through as it is, as an exception of the agent's step
            raise

    async def review(self, check: Check, ctx: DiagnosisContext, step: AgentStep, sig: str) -> Optional[AgentStep]:
        """``check`` sees the agent's proposed ``step`` (``ctx.pending``) before it is let through;
        on a problem, its recovery's step replaces it."""
        ctx.pending = step.bounded()
        try:
            f = await self.finding(check.diagnoser, ctx)
        finally:
            ctx.pending = None
        self.report.findings.append({"step": self.t, "claim": True, **f.to_dict(), "diagnoser": check.name})
        self.event("finding", diagnoser=check.name, problem=f.problem, verdict=f.verdict, tier=f.tier,
                   confidence=f.confidence, evidence=f.evidence, claim=True)
        if not f.problem or not self.may_open(check.name, sig):
            return None
        out = await self.open_session(check, f, ctx, sig)
        if out is not None:
            self.report.blocked_claims += 1
            self.event("claim_blocked", evidence=f.evidence)
        return out

    def pop_events(self) -> list[dict[str, Any]]:
        out, self.new_events = self.new_events, []
        return out

    started = False  # reset(goal) was called: a step before it has no goal to check against

    def check_call(self, obs: Any) -> None:
        """The caller's mistakes, raised before the guard does anything: they are bugs to fix,
        not faults to fail open on (a wrong integration must not look like a working guard)."""
        if not isinstance(obs, Observation):
            raise ObservationTypeError(
                f"step(obs={type(obs).__name__}): expected a ttir.Observation, got {type(obs).__name__} "
                f"({str(obs)[:60]!r}); build one with Observation.from_xml(xml, screenshot=image) or "
                "Observation.from_screenshot(image)")
        if not self.started:
            raise GuardUsageError("step() before reset(goal): the guard checks every step against the task's goal; "
                                  "call agent.reset(goal) at the start of each episode")

    def finish(self) -> None:
        if self.session is not None:
            self.session.record.outcome = "episode_end"
            self.session.record.closed_at = self.t
            self.session = None


_CONCURRENT = ("one guard stepped from two threads (or tasks) at once: its history and step numbers would mix; "
               "give each episode its own guard, e.g. ttir.guard(make_agent()) per thread")


def _check_goal(goal: Any, method: str, config: TTIRConfig) -> None:
    """A goal the checks can compare screens against: text, and not empty while task alignment is on
    (it compares every screen with the goal: an empty one left it nothing to read, without a word).
    With task alignment off, no goal is a choice (the guard of ``ttir proxy`` with no ``--goal``)."""
    if not isinstance(goal, str):
        raise ConfigError(f"{method}(goal={goal!r:.80}): expected the task's goal as a str, got "
                          f"{type(goal).__name__}; e.g. agent.reset(\"Turn on Wi-Fi\")")
    if not goal.strip() and config.enabled and config.task_alignment.mode != "off":
        raise ConfigError(f"{method}(goal={goal!r}): the goal is empty, and task alignment compares every screen "
                          "with it: pass the task's instruction, e.g. agent.reset(\"Turn on Wi-Fi\"), or, with no "
                          "task, switch task alignment off (task_alignment: {mode: off}, as ttir proxy does)")


def _check_not_guarded(agent: Any) -> None:
    """Refuse a guard around a guard: every check would run twice a step (every model call paid
    twice) and two recovery sessions would act on the same problem.

    Raises:
        ConfigError: ``agent`` is a :class:`GuardedAgent` (or the async one).
    """
    if isinstance(agent, GuardedAgent):
        raise ConfigError(f"agent={agent.name} is guarded already: a guard around it would run every check twice "
                          "a step and open two recovery sessions on one problem; guard the agent once, e.g. "
                          "ttir.guard(guarded.inner, config=..., checks=[...])")


class GuardedAgent:
    """A guarded agent: same ``reset(goal)`` / ``step(obs)`` interface as the one it wraps.

    Build one with :func:`ttir.guard` (which picks :class:`AsyncGuardedAgent` for an async
    agent). Attributes the guard does not define are the wrapped agent's (``guarded.foo`` is
    ``agent.foo``), so code that reads the agent's own state keeps working.

    One guard serves one episode at a time: stepping it from two threads (or tasks) at once
    raises :class:`~ttir.core.errors.GuardUsageError`; give each concurrent episode its own guard.

    Args:
        agent: an object with ``step(obs)`` (and ``reset(goal)``), or a callable ``fn(obs)``.
        config: the guard's settings; None for the defaults.
        vlm: the model client of the model tier; None: the rules decide.
        checks: the checks, in priority order; None: :func:`ttir.default_checks` of ``config``.

    Raises:
        TypeError: ``agent`` has no ``step`` and is not callable, or is a class; ``config``,
            ``vlm`` or ``checks`` is of the wrong kind (:func:`guard` lists the kinds).
        ttir.core.errors.ConfigError: two checks share a name, or a check of ``config.checks``
            cannot be built.
    """

    def __init__(self, agent: Any, config: ConfigLike = None, vlm: Optional[VLMClient] = None,
                 checks: Optional[list[Check]] = None):
        _check_not_guarded(agent)
        self.inner = as_agent(agent)
        self.config = as_config(config)
        self._core = _Core(self.inner, self.config, vlm, is_async=False, checks=checks)

    @property
    def name(self) -> str:
        """``guard(<the agent's name>)``: the agent's ``name`` attribute, else its class name."""
        return f"guard({getattr(self.inner, 'name', type(self.inner).__name__)})"

    def reset(self, goal: str) -> None:
        """Start an episode: reset the wrapped agent, then the guard's history and report.

        A recovery session still open from the previous episode is closed (outcome
        ``episode_end``); the report of the previous episode is replaced by a new one, so
        read ``report`` before calling this. The model tier's rest after repeated failures
        (the breaker) carries over: a dead endpoint stays dead when the goal changes.

        Args:
            goal: the task in natural language; every check compares the screens against it.

        Raises:
            ttir.core.errors.ConfigError: ``goal`` is not a str, or is empty while task alignment is
                on (a ``ValueError``).
            Exception: whatever the wrapped agent's ``reset`` raises, unchanged.
        """
        _check_goal(goal, "reset", self.config)
        self._core.finish()
        self.inner.reset(goal)
        self._core.reset(goal)
        self._core.started = True

    def start_with_history(self, goal: str, history: list[StepRecord]) -> None:
        """Start an episode part-way: the guard's history begins with ``history`` (its checks see
        the past steps) and the wrapped agent is left as it is (prime it first, e.g. with
        :func:`ttir.guarded.resume.resume_agent`).

        Args:
            goal: the task in natural language.
            history: the steps already taken, oldest first; the last one is the step whose
                effect the next observation shows.

        Raises:
            ttir.core.errors.ConfigError: ``goal`` is not a str, or is empty while task alignment is on.
        """
        _check_goal(goal, "start_with_history", self.config)
        self._core.finish()
        self._core.reset(goal)
        self._core.started = True
        if history:
            self._core.history = list(history[:-1])[-HISTORY_LIMIT:]
            last = history[-1]
            self._core.last = (last.observation, last.step, last.source)

    def step(self, obs: Observation) -> AgentStep:
        """The next step for the screen ``obs``: the wrapped agent's, or a recovery's.

        In order: an open recovery session continues until its target is met or its budget is
        spent; otherwise every check diagnoses the screen and the history, and a problem opens
        a session whose first step is returned; otherwise the wrapped agent's ``step(obs)`` is
        returned, after the checks that review proposed steps (a ``status: complete`` claim)
        have let it through. ``report`` and ``events`` record what happened.

        The guard fails open: an exception inside the guard (a check, a recovery, the model
        client) is logged, recorded in ``report.errors`` and as a ``guard_error`` event, and
        the wrapped agent's own step is returned. A failing model call, or a model tier resting
        after failing on several steps in a row, leaves the step to the rules tier.

        Args:
            obs: the current screen, e.g. ``Observation.from_xml(dump, screenshot=image)``.

        Returns:
            The step to execute, as an :class:`~ttir.core.types.AgentStep` (what the agent
            returned, normalised, when the guard let it through).

        Raises:
            ttir.core.errors.ObservationTypeError: ``obs`` is not an :class:`~ttir.core.types.Observation`
                (also a ``TypeError``).
            ttir.core.errors.GuardUsageError: ``step`` before ``reset(goal)``, or the guard is
                already inside a step (two threads or tasks stepping one guard). These are the
                caller's bugs: raised before the guard does anything, never failed open.
            RuntimeError: a component tried to suspend on this sync path (an async component:
                guard an async agent instead, which gets an :class:`AsyncGuardedAgent`).
            Exception: whatever the wrapped agent's ``step`` raises propagates unchanged (the
                guard does not call it a second time).
        """
        self._core.check_call(obs)
        if not self._core.busy.acquire(blocking=False):
            raise GuardUsageError(_CONCURRENT)
        try:
            return run_sync(self._core.step(obs), "the guard's sync path (use an async agent for async components)")
        finally:
            self._core.busy.release()

    @property
    def report(self) -> GuardReport:
        """What the guard did this episode (since the last ``reset``).

        Returns:
            A :class:`~ttir.guarded.report.GuardReport`: the goal, the steps, every finding,
            the recovery sessions (trigger, actions, outcome), the recoveries that had nothing
            to try, model usage per step (calls, tokens, latency, guard time), the guard's own
            errors and the completion claims it blocked. ``report.summary()`` condenses it;
            ``report.to_dict()`` serialises it.
        """
        return self._core.report

    @property
    def checks(self) -> list[Check]:
        """The checks this guard runs, in priority order."""
        return self._core.checks

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every finding / session event so far this episode."""
        return list(self._core.all_events)

    def pop_events(self) -> list[dict[str, Any]]:
        """The events since the last call (the episode loop stores them per step)."""
        return self._core.pop_events()

    def __getattr__(self, name: str) -> Any:
        # ASGI-style transparency: anything else is the wrapped agent's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.inner, name)


class AsyncGuardedAgent(GuardedAgent):
    """The guard around an agent whose ``step`` is ``async def``; model calls use the async client.

    :func:`ttir.guard` returns one for an async agent. ``reset``, ``report``, ``events`` and the
    rest are :class:`GuardedAgent`'s; ``step`` is a coroutine: ``step = await guarded.step(obs)``.
    """

    def __init__(self, agent: Any, config: ConfigLike = None, vlm: Optional[VLMClient] = None,
                 checks: Optional[list[Check]] = None):
        _check_not_guarded(agent)
        self.inner = as_agent(agent)  # the same door as the sync guard: an async step passes its awaitable through
        self.config = as_config(config)
        self._core = _Core(self.inner, self.config, vlm, is_async=True, checks=checks)

    async def step(self, obs: Observation) -> AgentStep:  # type: ignore[override]
        """The next step for the screen ``obs`` (awaited): what :meth:`GuardedAgent.step` does, with
        the wrapped agent's ``step`` awaited and the model's calls made by the async client.

        Args:
            obs: the current screen.

        Returns:
            The step to execute: the wrapped agent's, or a recovery's.

        Raises:
            ttir.core.errors.ObservationTypeError: ``obs`` is not an :class:`~ttir.core.types.Observation`.
            ttir.core.errors.GuardUsageError: ``step`` before ``reset(goal)``, or two tasks (or
                threads) stepping this guard at once.
            Exception: whatever the wrapped agent's ``step`` raises propagates unchanged; the
                guard's own faults fail open (the agent's step is used, the fault recorded in
                ``report.errors``).
        """
        self._core.check_call(obs)
        if not self._core.busy.acquire(blocking=False):  # two tasks (or threads) stepping one guard at once
            raise GuardUsageError(_CONCURRENT)
        try:
            return await self._core.step(obs)
        finally:
            self._core.busy.release()


def guard(agent: Any, config: ConfigLike = None, vlm: Optional[VLMClient] = None,
          checks: Optional[list[Check]] = None) -> GuardedAgent:
    """Wrap ``agent`` with Test-Time Introspective Recovery (the implementation of :func:`ttir.guard`,
    whose docstring tells what the guard does and has an example).

    Args:
        agent: an object with ``step(obs)`` (and ``reset(goal)``) or a callable ``fn(obs)``.
        config: a :class:`TTIRConfig`, a path to a YAML file, a mapping of its settings, or None
            (defaults).
        vlm: a :class:`ttir.model.client.VLMClient`, or None: rules only, unless the config's
            endpoint or ``TTIR_VLM_BASE_URL`` is set and a diagnoser's mode asks for the model.
        checks: the :class:`ttir.Check` list to run, in priority order (None: the paper's four,
            :func:`ttir.default_checks`); the config's ``checks`` (factories by import path)
            run after them.

    Returns:
        A :class:`GuardedAgent`; an :class:`AsyncGuardedAgent` when ``agent``'s ``step`` is
        ``async def``.

    Raises:
        TypeError: ``agent`` is not an agent (a class: pass an instance), or ``config``, ``vlm`` or
            ``checks`` is not of a kind listed above.
        FileNotFoundError: ``config`` names a missing file.
        ValueError: the config is invalid (a :class:`~ttir.core.errors.ConfigError` for checks).
    """
    cfg = as_config(config)
    if vlm is None and any(m in ("vlm", "cascade") for m in cfg.modes().values()):
        vlm = _client_from_config(cfg, is_async_agent(agent))
    if is_async_agent(agent):
        return AsyncGuardedAgent(agent, cfg, vlm, checks)
    return GuardedAgent(agent, cfg, vlm, checks)


def _client_from_config(cfg: TTIRConfig, is_async: bool) -> Optional[VLMClient]:
    from ttir.core.config import env_vlm_settings

    if not env_vlm_settings(cfg.vlm)["base_url"]:
        return None  # no endpoint: cascade diagnosers fall back to their rules
    return VLMClient(cfg.vlm)
