"""The guard between an agent's ``input`` command and the device.

- :class:`Phone` — what the guard needs of the device: a screen (a UI dump) and a way to
  perform its own recovery actions;
- :class:`ProxyIntervention` — one time the guard did something about an agent's command,
  a JSON line;
- :class:`ProxyGuard` — :meth:`ProxyGuard.before_input` runs the guard (``ttir.guard``
  around a stand-in for the agent whose step is the command) on the current screen, performs
  the recovery steps it chooses, and says whether the command goes through.

The rule for the agent's command, once the guard has done what it chose:

- *forwarded* (no intervention): the guard let it through at once;
- *delayed*: recovery actions went to the device first (an interruption dismissed, the
  task's context restored), then the command went through;
- *held_back*: an interruption the guard could not clear is still on screen and the
  command's point lands on it (a tap, a press, a swipe's start): it would act on the
  interruption, not on the app. The agent gets an error instead. Once per screen and
  command: the same command sent again on the same screen goes through (the agent insists);
- *replaced*: the agent's last command had no effect, a stuck-loop or action-effect
  recovery took another route for it (its actions replace the command), and the command
  repeats it: it is not sent.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Literal, Optional, Protocol, get_args

from loguru import logger
from pydantic import BaseModel, Field

from ttir.core.config import ConfigLike, as_config
from ttir.core.types import Action, AgentStep, Observation
from ttir.core.validation import short_repr
from ttir.guarded.middleware import GuardedAgent, guard, screen_signature
from ttir.guarded.proxy.commands import input_actions
from ttir.guarded.proxy.screens import ScreenCache

CommandFate = Literal["forwarded", "delayed", "held_back", "replaced"]  # what became of an agent's input command
COMMAND_FATES: tuple[str, ...] = get_args(CommandFate)
ScreenSource = Literal["agent", "dump"]  # where the screen the guard first looked at came from
EPISODE_STEPS = 1000  # the guard's record is started afresh after this many steps (bounded memory)
MAX_COMMAND_CHARS = 500  # of the agent's command, in an intervention


class Phone(Protocol):
    """The device as the proxy's guard uses it."""

    def observe(self) -> Observation:
        """The current screen (a UI dump)."""

    def perform(self, action: Action, obs: Observation) -> None:
        """Perform a recovery action decided on ``obs`` (raises when it cannot)."""


class ProxyIntervention(BaseModel):
    """What the guard saw and did about one agent command (a JSON line of ``--log``)."""

    at_s: float  # seconds since the proxy started
    command: str  # the agent's command, as it asked for it (cut at MAX_COMMAND_CHARS)
    fate: CommandFate
    screen: ScreenSource
    saw: list[dict[str, Any]] = Field(default_factory=list)  # the findings that opened sessions
    did: list[dict[str, Any]] = Field(default_factory=list)  # the recovery actions performed, in order
    sessions: list[dict[str, Any]] = Field(default_factory=list)  # how each session ended
    reason: str = ""  # held back / replaced: why
    error: str = ""  # a recovery action the device refused


class _Command:
    """The agent as the guard sees it: its step is the command it sent."""

    name = "adb-agent"

    def __init__(self) -> None:
        self.pending: Optional[AgentStep] = None

    def reset(self, goal: str) -> None:
        self.pending = None

    def step(self, obs: Observation) -> AgentStep:
        assert self.pending is not None
        return self.pending


def _point(action: Action) -> Optional[tuple[int, int]]:
    if action.x is not None and action.y is not None:
        return action.x, action.y
    return None


def _inside(point: tuple[int, int], bounds: Any) -> bool:
    x1, y1, x2, y2 = bounds
    return x1 <= point[0] <= x2 and y1 <= point[1] <= y2


class ProxyGuard:
    """Runs the guard before each agent ``input`` command (see the module docstring).

    Args:
        phone: the device (:class:`Phone`).
        config: the guard's config (checks, recovery budget, interference …): a TTIRConfig, a
            YAML path or a mapping, as :func:`ttir.guard` takes.
        goal: the task, when known: task alignment runs only with a goal.
        cache: the screens the agent pulled (a fresh one spares a dump).
        on_intervention: called with each :class:`ProxyIntervention`.
        settle_s: seconds waited after each recovery action before looking again.
        clock: the time source.

    Raises:
        TypeError: ``phone`` has no ``observe()`` (a serial, a class), ``goal`` is not text,
            ``on_intervention`` cannot be called, ``cache`` is no ScreenCache, or ``settle_s`` is not
            seconds from 0 to 600.
    """

    def __init__(self, phone: Phone, config: ConfigLike = None, *, goal: str = "",
                 cache: Optional[ScreenCache] = None,
                 on_intervention: Optional[Callable[[ProxyIntervention], None]] = None, settle_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic):
        if isinstance(phone, type) or not callable(getattr(phone, "observe", None)):
            # a serial or a device class failed at the first look, and every command then went through unguarded
            raise TypeError(f"ProxyGuard(phone={str(phone)[:80]!r} ({type(phone).__name__})): expected a phone "
                            "with observe() and perform(action, obs), e.g. "
                            "ttir.guarded.proxy.server.AdbPhone(AdbDevice(serial))")
        if not isinstance(goal, str):
            raise TypeError(f"ProxyGuard(goal={goal!r}): expected text (or '' when no task is known)")
        if on_intervention is not None and not callable(on_intervention):  # a list for its .append, say
            raise TypeError(f"ProxyGuard(on_intervention={short_repr(on_intervention)}): expected a function "
                            "called with each intervention, e.g. on_intervention=seen.append")
        if cache is not None and not isinstance(cache, ScreenCache):
            raise TypeError(f"ProxyGuard(cache={short_repr(cache)}): expected a ScreenCache (or None for a new one)")
        if isinstance(settle_s, bool) or not isinstance(settle_s, (int, float)) or not 0 <= settle_s <= 600:
            # slept after each recovery action: a bad value failed there, at the first pop-up
            raise TypeError(f"ProxyGuard(settle_s={short_repr(settle_s)}): expected seconds from 0 to 600")
        config = as_config(config).model_copy(deep=True)
        if not goal:
            config.task_alignment.mode = "off"  # no goal to align with
        self.phone, self.config, self.goal = phone, config, goal
        self.cache = cache or ScreenCache()
        self.on_intervention = on_intervention
        self.settle_s = settle_s
        self.clock = clock
        self._t0 = clock()
        self._agent = _Command()
        self._lock = threading.Lock()
        self.interventions: list[ProxyIntervention] = []
        self.counts = {"inputs": 0, **{fate: 0 for fate in COMMAND_FATES}, "screens_from_agent": 0, "dumps": 0,
                       "unguarded": 0}
        self._past: list[dict[str, Any]] = []  # summaries of earlier guard records (EPISODE_STEPS, max_sessions)
        self._last_agent: Optional[Action] = None
        self._held: set[tuple[str, str]] = set()  # (screen, command) held back once already
        self.guarded: GuardedAgent = self._new_guard()

    def _new_guard(self) -> GuardedAgent:
        g = guard(self._agent, config=self.config)
        g.reset(self.goal)
        return g

    # -- one agent command ------------------------------------------------------------------
    def before_input(self, command: str) -> Optional[str]:
        """Run the guard before ``command`` reaches the device.

        Args:
            command: the agent's shell command line (it runs ``input``).

        Returns:
            None: forward the command; else the message the agent gets instead (held back, replaced).
        """
        actions = input_actions(command) or []
        with self._lock:
            self.counts["inputs"] += 1
            try:
                if not actions:  # an `input` the guard cannot read as an action: it goes through unguarded
                    self.counts["unguarded"] += 1
                    self.counts["forwarded"] += 1
                    return None
                return self._guard(command, actions[0])
            except Exception as exc:  # noqa: BLE001 - fail open: the guard's fault never stops the agent's command
                logger.opt(exception=exc).warning("ttir proxy: the guard failed on {!r}; forwarding it unguarded",
                                                  command[:80])
                self.counts["unguarded"] += 1
                self.counts["forwarded"] += 1
                return None
            finally:
                self.cache.changed()

    def _screen(self) -> tuple[Observation, ScreenSource]:
        obs = self.cache.fresh()
        if obs is not None:
            self.counts["screens_from_agent"] += 1
            return obs, "agent"
        self.counts["dumps"] += 1
        return self.phone.observe(), "dump"

    def _guard(self, command: str, action: Action) -> Optional[str]:
        if (self.guarded.report.steps >= EPISODE_STEPS
                or len(self.guarded.report.sessions) >= self.config.recovery.max_sessions):
            self._past.append(self.guarded.report.summary())
            self.guarded = self._new_guard()
        self._agent.pending = AgentStep(action=action, summary=command[:MAX_COMMAND_CHARS])
        try:
            obs, source = self._screen()
        except Exception as exc:  # noqa: BLE001 - fail open: no screen, no guard; the agent's command goes on
            logger.warning("ttir proxy: no screen to check ({}: {}); forwarding {!r} unguarded",
                           type(exc).__name__, str(exc)[:200], command[:80])
            self.counts["unguarded"] += 1
            self.counts["forwarded"] += 1
            return None
        item = ProxyIntervention(at_s=0.0, command=command[:MAX_COMMAND_CHARS], fate="forwarded", screen=source)
        rounds = 2 * self.config.recovery.budget + 2  # two sessions, each at its budget, and a look after each
        for _ in range(rounds):
            step = self.guarded.step(obs)
            self._read_events(item, obs)
            if self.guarded.report.usage[-1].source == "agent":
                break
            error = self._perform(step.action, obs)
            item.did.append(step.action.to_dict())
            if error:
                item.error = error
                break
            self.cache.changed()
            if self.settle_s:
                time.sleep(self.settle_s)
            try:
                obs = self.phone.observe()
                self.counts["dumps"] += 1
            except Exception as exc:  # noqa: BLE001
                item.error = f"no screen after the recovery action: {type(exc).__name__}: {exc}"[:300]
                break
        item.fate, item.reason = self._fate(command, action, obs, item)
        self.counts[item.fate] += 1
        if item.fate in ("forwarded", "delayed"):
            self._last_agent = action
        if item.fate != "forwarded" or item.saw:
            item.at_s = round(self.clock() - self._t0, 3)
            self.interventions.append(item)
            logger.info("ttir proxy: {} {!r} ({} recovery actions){}", item.fate, item.command[:80], len(item.did),
                        f": {item.reason}" if item.reason else "")
            if self.on_intervention is not None:
                self.on_intervention(item)
        return None if item.fate in ("forwarded", "delayed") else f"ttir proxy: {item.fate}: {item.reason}"

    def _read_events(self, item: ProxyIntervention, obs: Observation) -> None:
        for e in self.guarded.pop_events():
            if e["event"] == "session_opened":
                details = self._details(e["diagnoser"], e["step"])
                item.saw.append({"diagnoser": e["diagnoser"], "verdict": e.get("verdict"),
                                 "package": details.get("package") or obs.package, "title": details.get("title", ""),
                                 "kind": details.get("kind"), "evidence": list(e.get("evidence") or [])[:5]})
            elif e["event"] == "recovery_unavailable":
                item.saw.append({"diagnoser": e["diagnoser"], "package": obs.package, "nothing_to_try": True})
            elif e["event"] == "session_closed":
                item.sessions.append({"session": e["session"], "outcome": e["outcome"], "steps": e["steps"]})

    def _details(self, diagnoser: str, step: int) -> dict[str, Any]:
        """The details of ``diagnoser``'s finding at guard step ``step`` (the latest one recorded)."""
        for record in reversed(self.guarded.report.findings[-16:]):
            if record.get("diagnoser") == diagnoser and record.get("step") == step:
                return dict(record.get("details") or {})
        return {}

    def _perform(self, action: Action, obs: Observation) -> str:
        try:
            self.phone.perform(action, obs)
            return ""
        except Exception as exc:  # noqa: BLE001 - the device refused the guard's action: logged, the agent goes on
            return f"{type(exc).__name__}: {exc}"[:300]

    def _fate(self, command: str, action: Action, obs: Observation, item: ProxyIntervention) -> tuple[CommandFate, str]:
        repeated = self._last_agent is not None and action == self._last_agent
        redone = bool(item.did) and any(s.get("diagnoser") in ("stuck_loop", "action_effect") for s in item.saw)
        if redone and repeated:
            return "replaced", ("a stuck-loop / action-effect recovery took another route for the agent's last command, "
                                "which had no effect; this repeat of it is not sent")
        point = _point(action)
        blocking = self._interruption(obs) if point is not None else None
        if blocking is not None and (blocking == () or _inside(point, blocking)):  # type: ignore[arg-type]
            key = (screen_signature(obs), command)
            if key not in self._held:
                self._held.add(key)
                return "held_back", "an interruption the guard could not clear is on screen where the command would land"
        return ("delayed" if item.did else "forwarded"), ""

    def _interruption(self, obs: Observation) -> Optional[tuple[int, ...]]:
        """The bounds of an interruption the interference check found on ``obs`` at the guard's
        last step (``()``: found, bounds unknown); None when it found none."""
        last = self.guarded.report.steps - 1
        for record in reversed(self.guarded.report.findings):
            if record.get("step") != last:
                if record.get("step", -1) < last:
                    break
                continue
            if record.get("diagnoser") == "interference" and record.get("problem"):
                bounds = (record.get("details") or {}).get("bounds")
                return tuple(bounds) if bounds else ()
        return None

    # -- figures --------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """The proxy's counts and the guard report's summary figures (over the whole run).

        Returns:
            ``inputs``, one count per command fate, ``screens_from_agent``, ``dumps``, ``unguarded``,
            and ``guard``: ``steps``, ``sessions``, ``resolved``, ``recovery_steps``, ``errors``,
            ``triggers`` (summed over the guard's records) and ``guard_ms_median`` (of the last).
        """
        parts = [*self._past, self.guarded.report.summary()]
        total: dict[str, Any] = {k: sum(p.get(k, 0) for p in parts)
                                 for k in ("steps", "sessions", "resolved", "recovery_steps", "errors", "model_calls")}
        triggers: dict[str, int] = {}
        for p in parts:
            for name, n in (p.get("triggers") or {}).items():
                triggers[name] = triggers.get(name, 0) + int(n)
        total["triggers"] = triggers
        total["guard_ms_median"] = round(parts[-1].get("guard_ms_median", 0.0), 2)
        return {**self.counts, "interventions": len(self.interventions), "guard": total}


__all__ = ["COMMAND_FATES", "CommandFate", "Phone", "ProxyGuard", "ProxyIntervention"]
