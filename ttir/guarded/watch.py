"""Keep a phone clear of interruptions while anything else drives it (an agent, a test suite,
a person): look, wait for the screen to settle, detect, dismiss, log.

- :class:`Intervention` — one thing the watcher did (or declined to do), a JSON line;
- :class:`Watcher` — one look at a time (:meth:`Watcher.look`): your rules first
  (``watch.rules`` of the config), then the guard's interference check and its dismiss
  recovery, never while the screen is changing, never more than ``recovery.budget``
  actions on one interruption;
- :func:`watching` — a :class:`Watcher` on a thread of its own for a ``with`` block;
- :func:`watch_for` — the loop of ``ttir watch``;
- :class:`CallbackError` — the caller's ``on_intervention`` raised (not a look that failed).

The watcher sees screens only: it does not know what the agent meant, so the interference
check runs without a history (its goal-aware vetoes use ``goal`` when one is given).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Literal, Optional, Protocol

from loguru import logger
from pydantic import BaseModel, Field

from ttir.core.config import ConfigLike, WatchRule, as_config
from ttir.core.diagnosis import DiagnosisContext, Finding, InterferenceDetails
from ttir.core.errors import TTIRError
from ttir.core.lexicon import norm
from ttir.core.recovery import RecoveryContext
from ttir.core.types import Action, AgentStep, Observation, UIElement
from ttir.core.validation import short_repr
from ttir.guarded.middleware import screen_signature

InterventionKind = Literal["rule", "dismissed", "gave_up", "nothing_to_try", "failed"]


class Device(Protocol):
    """What the watcher needs of a phone (an ``AdbDevice``, a ``SimDevice`` …)."""

    def observe(self) -> Observation: ...

    def execute(self, action: Action) -> Any: ...


class CallbackError(TTIRError):
    """The caller's ``on_intervention`` callback raised; its exception is the ``__cause__``. The
    intervention it was told of was made and recorded before it."""


class Intervention(BaseModel):
    """One thing the watcher did, or declined to do, on one screen.

    ``kind``: ``rule`` (one of your rules tapped), ``dismissed`` (the interference check found
    an interruption and its recovery acted), ``gave_up`` (the recovery budget on this
    interruption is spent), ``nothing_to_try`` (found, but no action would clear it: a lock
    screen, a required update), ``failed`` (the action could not be performed)."""

    at_s: float  # seconds since the watcher started
    kind: InterventionKind
    package: Optional[str] = None  # the foreground package
    title: str = ""  # what the interruption said (its title), or the rule's text
    evidence: list[str] = Field(default_factory=list)
    action: Optional[dict[str, Any]] = None  # what the watcher did (None: nothing)
    error: str = ""


def _label(e: UIElement) -> str:
    return norm(e.text or e.content_desc or "")


def rule_target(rule: WatchRule, obs: Observation) -> Optional[UIElement]:
    """The control ``rule`` taps on ``obs``, or None when the rule does not apply.

    Args:
        rule: a ``watch.rules`` entry.
        obs: the screen.

    Returns:
        The element labelled ``rule.tap`` (an exact label first, else one that contains it;
        a clickable one first), when the screen shows ``rule.when.text`` (and its package, if given).
    """
    if rule.when.package and rule.when.package not in {e.package for e in obs.elements} | {obs.package}:
        return None
    wanted = norm(rule.when.text)
    if not any(wanted in norm(e.text or "") or wanted in norm(e.content_desc or "") for e in obs.elements):
        return None
    tap = norm(rule.tap)
    labelled = [e for e in obs.elements if e.enabled and e.width > 0 and e.height > 0 and _label(e)]
    for match in (lambda e: _label(e) == tap, lambda e: tap in _label(e)):
        found = [e for e in labelled if match(e)]
        if found:  # a clickable one first; a button's label is often a text inside the clickable node
            return next((e for e in found if e.clickable), found[0])
    return None


class Watcher:
    """Looks at a phone and clears what interrupts it (see the module docstring).

    Args:
        device: the phone (``observe()`` and ``execute(action)``); give the watcher a device
            object of its own (``AdbDevice(serial)``), not the one an agent is driving.
        config: the guard's config: ``watch`` (interval, settling, your rules), ``interference``
            and ``recovery`` (its ``budget`` bounds the actions on one interruption); a TTIRConfig,
            a YAML path or a mapping, as :func:`ttir.guard` takes.
        goal: the task, when one is known (the interference check leaves alone a dialog the
            goal needs, such as a permission the task asks for).
        on_intervention: called with each :class:`Intervention` (``ttir watch`` writes JSON lines).
        clock: the time source (tests pass their own).
    """

    def __init__(self, device: Device, config: ConfigLike = None, *, goal: str = "",
                 on_intervention: Optional[Callable[[Intervention], None]] = None,
                 clock: Callable[[], float] = time.monotonic):
        from diagnosers import InterferenceDiagnoser
        from recoveries import DismissInterference

        if not callable(getattr(device, "observe", None)) or not callable(getattr(device, "execute", None)):
            raise TypeError(f"Watcher(device={type(device).__name__}): expected a phone with observe() and "
                            "execute(action), e.g. benchmark.devices.AdbDevice(serial)")
        if not isinstance(goal, str):
            raise TypeError(f"Watcher(goal={goal!r}): expected text (or '' when no task is known)")
        if on_intervention is not None and not callable(on_intervention):  # a list for its .append, say
            raise TypeError(f"Watcher(on_intervention={short_repr(on_intervention)}): expected a function called with "
                            "each intervention, e.g. on_intervention=seen.append")
        self.device = device
        self.config = as_config(config)
        self.goal = goal
        self.on_intervention = on_intervention
        self.clock = clock
        self.diagnoser = InterferenceDiagnoser(self.config.interference)
        self.recovery = DismissInterference(settings=self.config.recovery)
        self.interventions: list[Intervention] = []
        self.looks = 0
        self.looks_failed = 0  # looks that raised (the phone away, a dump that cannot be read)
        self.last_error = ""
        self._t0 = clock()
        self._last_signature: Optional[str] = None
        self._stable = 0
        self._taken: dict[str, list[AgentStep]] = {}  # interruption -> the actions taken on it
        self._reported: set[str] = set()  # interruptions already logged as gave_up / nothing_to_try

    def look(self) -> Optional[Intervention]:
        """One look at the screen; at most one action.

        Returns:
            What the watcher did (also in :attr:`interventions`), or None: the screen is
            changing, nothing interrupts it, or this was already reported.

        Raises:
            CallbackError: ``on_intervention`` raised (the intervention was made and recorded).
        """
        self.looks += 1
        obs = self.device.observe()
        signature = screen_signature(obs)
        self._stable = self._stable + 1 if signature == self._last_signature else 1
        self._last_signature = signature
        if self._stable < self.config.watch.stable_screens:
            return None  # the screen is changing: an action now could land on what comes next
        for rule in self.config.watch.rules:
            target = rule_target(rule, obs)
            if target is not None:
                action = Action(action_type="click", x=target.center[0], y=target.center[1])
                return self._act("rule", obs, action, title=rule.when.text, evidence=[f"rule: tap {rule.tap!r}"])
        finding = self.diagnoser.diagnose(DiagnosisContext(goal=self.goal, observation=obs, history=[]))
        if not finding.problem:
            return None
        return self._dismiss(obs, finding)

    def _dismiss(self, obs: Observation, finding: Finding) -> Optional[Intervention]:
        details = finding.details_as(InterferenceDetails)
        title = details.title
        key = f"{obs.package}|{details.kind}|{title}"
        taken = self._taken.setdefault(key, [])
        budget = self.config.recovery.budget
        if len(taken) >= budget:
            return self._report_once("gave_up", key, obs, title, finding)
        step = self.recovery.next_step(RecoveryContext(goal=self.goal, observation=obs, history=[], finding=finding,
                                                       taken=list(taken), budget=budget))
        if step is None:
            return self._report_once("nothing_to_try", key, obs, title, finding)
        taken.append(step)
        return self._act("dismissed", obs, step.action, title=title, evidence=list(finding.evidence)[:5])

    def _act(self, kind: InterventionKind, obs: Observation, action: Action, *, title: str,
             evidence: list[str]) -> Intervention:
        error = ""
        try:
            self.device.execute(action)
        except Exception as exc:  # noqa: BLE001 - a phone that refuses one action is logged, the watch goes on
            kind, error = "failed", f"{type(exc).__name__}: {exc}"[:300]
        self._stable = 0  # the screen is expected to change: look twice again before the next action
        return self._record(Intervention(at_s=round(self.clock() - self._t0, 3), kind=kind, package=obs.package,
                                         title=title[:200], evidence=evidence, action=action.to_dict(), error=error))

    def _report_once(self, kind: InterventionKind, key: str, obs: Observation, title: str,
                     finding: Finding) -> Optional[Intervention]:
        if key in self._reported:
            return None
        self._reported.add(key)
        return self._record(Intervention(at_s=round(self.clock() - self._t0, 3), kind=kind, package=obs.package,
                                         title=title[:200], evidence=list(finding.evidence)[:5]))

    def _record(self, item: Intervention) -> Intervention:
        self.interventions.append(item)
        logger.info("ttir watch: {} on {} ({}){}", item.kind, item.package, item.title[:80] or "-",
                    f": {item.action}" if item.action else "")
        if self.on_intervention is not None:
            try:
                self.on_intervention(item)
            except Exception as exc:  # the caller's bug, told apart from a look at the phone that failed
                raise CallbackError(f"the on_intervention callback raised {type(exc).__name__}: {exc}"[:300]) from exc
        return item

    def look_failed(self, exc: BaseException) -> None:
        """Count a look that raised (:func:`watch_for` calls it), so that :meth:`summary` says how many
        of the looks saw nothing: a watch of a phone it cannot read is not a quiet watch.

        Args:
            exc: what the look raised.
        """
        self.looks_failed += 1
        self.last_error = f"{type(exc).__name__}: {exc}"[:300]

    def summary(self) -> dict[str, int]:
        """How many looks (and how many of them failed), and how many interventions of each kind.

        Returns:
            ``{"looks": n, "looks_failed": n, "rule": n, "dismissed": n, "gave_up": n, "nothing_to_try": n,
            "failed": n}`` (``failed``: interventions whose action the phone refused).
        """
        out = {"looks": self.looks, "looks_failed": self.looks_failed, "rule": 0, "dismissed": 0, "gave_up": 0,
               "nothing_to_try": 0, "failed": 0}
        for item in self.interventions:
            out[item.kind] += 1
        return out


def watch_for(watcher: Watcher, duration_s: Optional[float] = None, stop: Optional[threading.Event] = None) -> None:
    """Look every ``watch.interval_s`` until ``duration_s`` has passed (None: for ever) or ``stop``
    is set. A look that fails (the phone away for a moment, a dump that cannot be read) is logged
    at WARNING once per kind of error and the watch goes on.

    Args:
        watcher: the watcher.
        duration_s: how long to watch, in seconds (None: until ``stop``).
        stop: set it to end the watch.
    """
    stop = stop or threading.Event()
    end = None if duration_s is None else time.monotonic() + duration_s
    warned: set[str] = set()
    while not stop.is_set() and (end is None or time.monotonic() < end):
        try:
            watcher.look()
        except CallbackError as exc:  # the look worked; the caller's callback did not
            if "callback" not in warned:
                warned.add("callback")
                logger.warning("ttir watch: {} (the intervention was made and recorded); watching on "
                               "(further ones: DEBUG)", exc)
            else:
                logger.debug("ttir watch: {}", exc)
        except Exception as exc:  # noqa: BLE001 - the watch must outlive one bad look
            watcher.look_failed(exc)
            if type(exc).__name__ not in warned:
                warned.add(type(exc).__name__)
                logger.warning("ttir watch: a look failed ({}: {}); watching on (further ones: DEBUG)",
                               type(exc).__name__, str(exc)[:200])
            else:
                logger.debug("ttir watch: a look failed: {}", exc)
        wait = watcher.config.watch.interval_s
        if end is not None:
            wait = max(0.0, min(wait, end - time.monotonic()))
        stop.wait(wait)


@contextmanager
def watching(device: Any, config: ConfigLike = None, *, goal: str = "",
             on_intervention: Optional[Callable[[Intervention], None]] = None) -> Iterator[Watcher]:
    """Watch ``device`` on a thread of its own for the ``with`` block::

        with ttir.watching("emulator-5554") as watcher:
            run_my_test_suite()
        print(watcher.summary())

    Args:
        device: a serial (an ``AdbDevice`` is opened for it) or a phone object with
            ``observe()`` and ``execute(action)`` that nothing else uses meanwhile.
        config: the guard's config (``watch``, ``interference``, ``recovery``): a TTIRConfig, a YAML
            path or a mapping, as :func:`ttir.guard` takes.
        goal: the task, when one is known.
        on_intervention: called with each :class:`Intervention`, on the watcher's thread.

    Returns:
        A context manager that yields the :class:`Watcher` (its ``interventions`` and ``summary()``,
        which counts the looks that failed while the block ran).

    Raises:
        ConnectionError: the phone's screen cannot be read before the block starts (a wrong serial,
            a phone not authorised).
    """
    if isinstance(device, str):
        from benchmark.devices import AdbDevice

        device = AdbDevice(device, settle_seconds=0, action_settle_seconds=0)
    watcher = Watcher(device, config, goal=goal, on_intervention=on_intervention)
    try:  # one look before the block: a phone that cannot be read (a wrong serial) is the caller's to know
        device.observe()
    except Exception as exc:
        raise ConnectionError(f"ttir.watching: cannot read the phone's screen ({type(exc).__name__}: {exc}); "
                              "check the serial with `adb devices` and the phone with `ttir doctor`") from exc
    stop = threading.Event()
    thread = threading.Thread(target=watch_for, args=(watcher, None, stop), name="ttir-watch", daemon=True)
    thread.start()
    try:
        yield watcher
    finally:
        stop.set()
        thread.join(timeout=60)
