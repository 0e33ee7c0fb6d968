"""Checks: what the guard runs, one (diagnoser, recovery) pair each.

A :class:`Check` owns everything about one kind of trouble — how it is noticed (its
diagnoser, the *trigger*), what is done about it (its recovery strategy), when it is
over (its *target*: the finding that says the problem is gone) and what the agent is
told afterwards (``on_recovery``). The guard's core runs the list and arbitrates
between checks (one recovery session at a time, budgets, cooldowns, no ping-pong) and
accounts for them; it knows no check by name. The paper's four are
:func:`default_checks`; a user's own check is one more entry in the list::

    ttir.guard(agent, checks=[*ttir.default_checks(config), Check(NoPayment(), Decline(), on_recovery="…")])

or, from a YAML config or an experiment spec, a factory by import path
(``checks: [{factory: "my_checks:make_check", params: {...}}]``) called as
``make_check(config, **params) -> Check``; see ``examples/own_check/``.

A diagnoser is anything with ``name`` and ``diagnose(ctx) -> Finding`` (subclass
``diagnosers.Diagnoser`` and write ``rules``); a recovery is anything with ``name`` and
``next_step(ctx) -> AgentStep | None`` (subclass ``recoveries.Recovery`` and write ``rules``).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Optional

from ttir.core.errors import ConfigError
from ttir.core.config import CheckRef
from ttir.core.imports import import_callable
from ttir.core.types import AgentStep
from ttir.core.validation import short_repr

from ttir.core.diagnosis import Finding, SupportsDiagnose
from ttir.core.recovery import Recovery, SupportsNextStep, as_recovery

if TYPE_CHECKING:  # pragma: no cover
    from ttir.core.config import ConfigLike, TTIRConfig

EXPECTED = "def make_check(config: TTIRConfig, **params) -> ttir.Check"


def problem_gone(finding: Finding) -> bool:
    """The default target: the trigger no longer reports a problem."""
    return not finding.problem


def effect_seen(finding: Finding) -> bool:
    """The target of the action checks: the last action's effect is no longer missing."""
    return finding.verdict != "no"


def claims_completion(step: AgentStep) -> bool:
    """Steps the task-alignment check reviews before they are let through: ``status: complete``."""
    return step.action.action_type == "status" and step.action.goal_status == "complete"


class Check:
    """One (diagnoser, recovery) pair and what goes with it.

    - ``diagnoser`` — the trigger: ``diagnose(ctx) -> Finding``; ``problem`` opens a session.
    - ``recovery`` — the strategy: ``next_step(ctx)`` each step of the session (None: nothing left).
    - ``on_recovery`` — what was done, in words, for the agent's ``on_recovery`` hook:
      ``"<on_recovery>; continue: <goal>"`` when the session resolved the problem.
    - ``target`` — the diagnoser whose finding says the problem is gone (default: the
      trigger; when ``target`` is switched off, the trigger again) and ``resolved(finding)``,
      the test on that finding (default: :func:`problem_gone`). A recovery with
      ``target_met(ctx, finding) -> bool | None`` answers first.
    - ``screens`` — run the trigger on every screen before the agent acts (default True).
    - ``reviews(step) -> bool`` — which of the agent's proposed steps the trigger sees
      before they are let through (``ctx.pending`` is the step); a problem there replaces
      the step with the recovery's. Default: none.
    - ``name`` — how sessions, findings and reports call it (default: the diagnoser's name).

    Raises:
        ttir.core.errors.ConfigError: ``diagnoser`` (or ``target``) has no ``diagnose``,
            ``recovery`` has no ``next_step``, or ``screens=False`` without ``reviews`` (a
            check that would never run).

    Examples:
        A domain rule as one more check (``examples/own_check/no_payment.py``)::

            check = ttir.Check(PaymentRule(), BackOut(), screens=False,
                               reviews=lambda step: step.action.is_touch,
                               on_recovery="a tap on a payment control was blocked")
            agent = ttir.guard(my_agent, checks=[*ttir.default_checks(), check])
    """

    def __init__(self, diagnoser: SupportsDiagnose, recovery: SupportsNextStep, *, on_recovery: str = "the guard stepped in",
                 target: Optional[SupportsDiagnose] = None, resolved: Callable[[Finding], bool] = problem_gone,
                 screens: bool = True, reviews: Optional[Callable[[AgentStep], bool]] = None,
                 name: Optional[str] = None):
        for role, given in (("diagnoser", diagnoser), ("recovery", recovery), ("target", target)):
            if isinstance(given, type):  # its methods would be called unbound, at every step, and fail open
                raise ConfigError(f"Check({role}={given.__name__}) is a class; pass an instance, "
                                  f"e.g. Check({role}={given.__name__}())")
        if not callable(getattr(diagnoser, "diagnose", None)):
            raise ConfigError(f"Check(diagnoser={short_repr(diagnoser)}): expected an object with "
                              "diagnose(ctx) -> Finding (a diagnosers.Diagnoser)")
        if not callable(getattr(recovery, "next_step", None)):
            raise ConfigError(f"Check(recovery={short_repr(recovery)}): expected an object with "
                              "next_step(ctx) -> AgentStep | None (a recoveries.Recovery)")
        if target is not None and not callable(getattr(target, "diagnose", None)):
            raise ConfigError(f"Check(target={short_repr(target)}): expected a diagnoser (diagnose(ctx) -> Finding)")
        if not screens and reviews is None:
            raise ConfigError("Check(screens=False, reviews=None) would never run: give it screens=True or reviews=")
        self.diagnoser = diagnoser
        self.recovery = recovery  # type: ignore[assignment]  # a plain object is wrapped (the setter)
        self.on_recovery = str(on_recovery)
        self.target = target
        self.resolved = resolved
        self.screens = bool(screens)
        self.reviews = reviews
        self.name = str(name or getattr(diagnoser, "name", "") or type(diagnoser).__name__)

    def __repr__(self) -> str:
        return (f"Check({self.name!r}: {type(self.diagnoser).__name__} -> "
                f"{getattr(self.recovery, 'name', type(self.recovery).__name__)})")

    @property
    def recovery(self) -> Recovery:
        """The strategy, as a :class:`~ttir.core.recovery.Recovery` (an object that only has
        ``next_step`` is wrapped in :class:`~ttir.core.recovery.PlainRecovery` when set)."""
        return self._recovery

    @recovery.setter
    def recovery(self, value: SupportsNextStep) -> None:
        if isinstance(value, type) or not callable(getattr(value, "next_step", None)):
            raise ConfigError(f"Check.recovery = {short_repr(value)}: expected an object with "
                              "next_step(ctx) -> AgentStep | None (a recoveries.Recovery)")
        self._recovery = as_recovery(value)

    @property
    def enabled(self) -> bool:
        """Whether the trigger runs at all (its diagnoser's ``mode`` is not ``off``)."""
        return mode_of(self.diagnoser) != "off"

    def target_diagnoser(self) -> SupportsDiagnose:
        """The diagnoser asked whether the session's problem is gone."""
        if self.target is not None and mode_of(self.target) != "off":
            return self.target
        return self.diagnoser

    def reviews_step(self, step: AgentStep) -> bool:
        """Whether this check sees the agent's proposed ``step`` before it is let through.

        Args:
            step: the wrapped agent's step.

        Returns:
            True when the check is enabled and its ``reviews`` predicate accepts the step.
        """
        return self.reviews is not None and self.enabled and bool(self.reviews(step))

    def message(self, outcome: str, goal: str) -> str:
        """What the agent is told when a session of this check closes."""
        if outcome == "resolved":
            return f"{self.on_recovery}; continue: {goal}"
        if outcome == "unavailable":
            return f"{self.name} found a problem and its recovery had nothing to try; continue: {goal}"
        return f"recovery stopped ({outcome}); continue: {goal}"

    def attach(self, *, judge: Any = None, recovery_client: Any = None) -> "Check":
        """Give the guard's model to a diagnoser / recovery built without one (the defaults get it built in)."""
        for d in (self.diagnoser, self.target):
            if d is not None and judge is not None and getattr(d, "judge", judge) is None:
                d.judge = judge
        if recovery_client is not None and getattr(self.recovery, "client", recovery_client) is None:
            self.recovery.client = recovery_client
        return self


def mode_of(diagnoser: Any) -> str:
    """A diagnoser's tier (rules / vlm / cascade / off); one without ``mode`` is a rule."""
    return getattr(diagnoser, "mode", "rules")


# ---------------------------------------------------------------- the paper's four


def default_checks(config: "ConfigLike" = None, *, judge: Any = None, recovery_client: Any = None,
                   model: bool = False) -> list[Check]:
    """The paper's four checks, configured by ``config``, in ``config.recovery.priority`` order.

    Interference -> dismiss it; stuck loop -> an alternative action (done when the action
    effect is seen); action effect -> an alternative action; task alignment -> re-orientation
    (it also reviews ``status: complete`` claims when ``task_alignment.check_completion_claims``).

    Args:
        config: the guard's config (a ``TTIRConfig``, a YAML file's path or a mapping in its shape,
            as :func:`ttir.guard` takes); None: the defaults.
        judge: the guard's shared VLM judge for the diagnosers (None: the guard attaches its own,
            or the rules decide).
        recovery_client: the recovery model for the recoveries (None: the same).
        model: whether the recoveries may use the model (their tier is then ``recovery.mode``).

    Returns:
        Four :class:`Check` objects, the first the one whose problem wins.

    Examples:
        Add your own after them (the list's order is the priority)::

            agent = ttir.guard(my_agent, checks=[*ttir.default_checks(config), my_check])
    """
    from diagnosers import ActionEffectDiagnoser, InterferenceDiagnoser, StuckLoopDiagnoser, TaskAlignmentDiagnoser
    from recoveries import AlternativeAction, DismissInterference, ReOrientation
    from ttir.core.config import as_config

    cfg = as_config(config)  # a path or a mapping too, as ttir.guard takes them
    rc = cfg.recovery

    def recovery(cls: Any) -> Any:
        return cls(mode=rc.mode if model else "rules", client=recovery_client,
                   prompt=getattr(cfg.prompts, cls.name), settings=rc)

    effect = ActionEffectDiagnoser(cfg.action_effect, judge=judge)  # one instance: a trigger and a target
    checks = {
        "interference": Check(InterferenceDiagnoser(cfg.interference, judge=judge), recovery(DismissInterference),
                              on_recovery="an interruption was dismissed"),
        "stuck_loop": Check(StuckLoopDiagnoser(cfg.stuck_loop, judge=judge), recovery(AlternativeAction),
                            on_recovery="a repeated action that had no effect was replaced by another route",
                            target=effect, resolved=effect_seen),
        "action_effect": Check(effect, recovery(AlternativeAction),
                               on_recovery="an action that had no visible effect was redone another way",
                               resolved=effect_seen),
        "task_alignment": Check(TaskAlignmentDiagnoser(cfg.task_alignment, judge=judge), recovery(ReOrientation),
                                on_recovery="the task's context was restored",
                                reviews=claims_completion if cfg.task_alignment.check_completion_claims else None),
    }
    return [checks[name] for name in rc.priority] + [c for n, c in checks.items() if n not in rc.priority]


# ---------------------------------------------------------------- checks by import path


class CheckError(ConfigError):
    """A check factory named in a config cannot be imported, called, or made no Check."""


def build_check(ref: CheckRef, config: "TTIRConfig") -> Check:
    """Import ``ref.factory``, call it with the config and ``ref.params``; the Check it made."""
    fn = import_callable(ref.factory, ref.path, what="check factory", expected=EXPECTED, error=CheckError)
    try:
        inspect.signature(fn).bind(config, **ref.params)
    except TypeError as exc:
        raise CheckError(f"check factory {ref.factory!r} cannot be called as {getattr(fn, '__name__', 'factory')}"
                         f"(config, **params) with params {short_repr(ref.params)}: {exc}; expected {EXPECTED}") from None
    except ValueError:  # no signature to check (a builtin): the call says
        pass
    try:
        made = fn(config, **ref.params)
    except Exception as exc:  # noqa: BLE001 - the user's factory may raise anything
        raise CheckError(f"check factory {ref.factory!r} raised {type(exc).__name__}: {exc} "
                         f"(params {short_repr(ref.params)})") from exc
    if not isinstance(made, Check):
        raise CheckError(f"check factory {ref.factory!r} returned {short_repr(made)} ({type(made).__name__}), "
                         f"not a ttir.Check; expected {EXPECTED}")
    return made


def configured_checks(config: "TTIRConfig") -> list[Check]:
    """The checks ``config.checks`` names, built."""
    return [build_check(ref, config) for ref in config.checks]


__all__ = ["Check", "CheckError", "CheckRef", "build_check", "claims_completion", "configured_checks",
           "default_checks", "effect_seen", "mode_of", "problem_gone"]
