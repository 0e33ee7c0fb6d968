"""PerturbedDevice: the Device protocol around ANY device, running the hooks of its
perturbations and writing the perturbation event log.

The event log (``events``; ``pop_events()`` drains the new ones) is the ground truth
for diagnoser precision and error attribution. Every setting a perturbation changed
is restored on ``close()``, on ``reset()`` of the next episode, when used as a context
manager and an exception escapes, and at interpreter exit.
"""

from __future__ import annotations

import atexit
import random
import weakref
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Union

from loguru import logger

from benchmark.device import ActionError, DeviceSettings, missing_episode_methods
from perturb.base import Perturbation
from perturb.events import PerturbationEvent, check_event
from perturb.registry import make
from perturb.overlay.manager import OverlayManager
from ttir.core.types import ENDING_TYPES, Action, Observation
from ttir.core.validation import short_repr

RAW_HISTORY = 12  # raw frames kept for stale-frame perturbations


@dataclass
class Event:
    """One thing a perturbation did, for the episode's log (``applied``, ``dropped``, ``overlay_shown`` …;
    the names are declared once in :mod:`perturb.events`)."""

    step: int
    perturbation: str
    event: PerturbationEvent
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_event(self.event)  # a name no metric knows would be counted nowhere

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON-serialisable dict."""
        return {"step": self.step, "perturbation": self.perturbation, "event": self.event, "details": self.details}


class PerturbationContext:
    """What hooks see: the step counter, the inner device, overlays, history, the log."""

    def __init__(self, env: "PerturbedDevice", task: Any, budget: Optional[int], seed: int):
        self.env = env
        self.device = env.inner
        self.task = task
        self.budget = budget
        self.seed = seed
        self.step = 0  # actions issued so far this episode (dropped ones included)
        self.action: Optional[Action] = None  # the action of the current step, as finally executed
        self.issued: Optional[Action] = None  # the action the agent issued this step
        self.raw_history: list[Observation] = []
        self.shown: Optional[Observation] = None  # the last observation given to the agent
        self.state: dict[str, Any] = {}  # per-episode scratch space for hooks
        self._reference_length: Optional[int] = None

    @property
    def reference_length(self) -> Optional[int]:
        """Actions in the task's reference solution (at most its reference_steps), None without a task."""
        if self._reference_length is None and self.task is not None:
            steps = getattr(self.task, "reference_steps", None)
            try:
                plan = len(self.task.reference_solution())
            except Exception:  # noqa: BLE001 - a task without a plan: its declared length
                plan = steps
            lengths = [n for n in (steps, plan) if n]
            self._reference_length = min(lengths) if lengths else None
        return self._reference_length

    @property
    def overlays(self) -> OverlayManager:
        """The overlays drawn over the device's screen (pop-ups, banners) and routing taps to them."""
        return self.env.overlays

    def emit(self, perturbation: str, event: str, **details: Any) -> None:
        """Log an event of ``perturbation`` at the current step.

        Args:
            perturbation: the perturbation's name.
            event: a declared event name (``perturb.events``); an unknown one raises ``ValueError``.
            **details: what to record with it.
        """
        self.env._log(Event(self.step, perturbation, event, details))

    def observe_raw(self) -> Observation:
        """The unperturbed current screen of the inner device."""
        return self.device.observe()

    def execute_raw(self, action: Action) -> None:
        """Execute on the inner device (through the overlays), bypassing action perturbations."""
        if not self.env.overlays.route(action, self):
            self.device.execute(action)

    @property
    def foreground(self) -> Optional[str]:
        """The package in front on the unperturbed screen."""
        return self.observe_raw().package


class PerturbedDevice:
    """``PerturbedDevice(device, perturbations, seed=…)`` — the perturbed MDP.

    Args:
        device: the phone underneath (a :class:`benchmark.SimDevice`, an ``AdbDevice``).
        perturbations: the perturbations, each once: built ones (``perturb.make("popup_security",
            …)``) or names, built with their defaults.
        seed: the episode's seed; every random choice of the perturbations comes from it.
        budget: the episode's step budget (timings relative to it), None: the task's.

    Raises:
        TypeError: ``device`` is no device, or ``perturbations`` is not a list of perturbations or names.
        ttir.core.errors.UnknownNameError: a name is no perturbation (the closest one suggested).
        ValueError: a perturbation appears twice.
    """

    def __init__(self, device: Any, perturbations: Iterable[Union[Perturbation, str]] = (), *, seed: int = 0,
                 budget: Optional[int] = None):
        missing = missing_episode_methods(device)
        if missing:
            raise TypeError(f"PerturbedDevice(device={type(device).__name__!r}): not a device, it has no "
                            f"{', '.join(missing)}(); expected a benchmark.SimDevice or an AdbDevice")
        if isinstance(perturbations, (str, Perturbation)):
            raise TypeError(f"PerturbedDevice(perturbations={short_repr(perturbations)}): expected a list, "
                            f"e.g. [{short_repr(perturbations)}]")
        self.inner = device
        # a name is built with its defaults (perturb.make), as a spec's perturbations are
        self.perturbations: list[Perturbation] = [make(p) if isinstance(p, str) else p for p in perturbations]
        wrong = next((p for p in self.perturbations if not isinstance(p, Perturbation)), None)
        if wrong is not None:
            raise TypeError(f"PerturbedDevice(perturbations=[… {short_repr(wrong)} …]): {type(wrong).__name__} is no "
                            "perturbation; expected perturb.make('popup_security') or a name (see `ttir perturbations`)")
        names = [p.name for p in self.perturbations]
        if len(set(names)) != len(names):
            raise ValueError(f"perturbations={names}: each perturbation may appear once")
        self.seed = seed
        self.budget = budget
        self.overlays = OverlayManager()
        self.events: list[Event] = []
        self._new: list[Event] = []
        self._snapshot: Optional[DeviceSettings] = None
        self._obs: Optional[Observation] = None
        self.ctx = PerturbationContext(self, None, budget, seed)
        self.closed = False
        _live.add(self)

    # -- Device protocol ----------------------------------------------------------------
    @property
    def settings(self) -> DeviceSettings:
        """The inner device's settings."""
        return self.inner.settings

    @property
    def unwrapped(self) -> Any:
        """The innermost device, without any perturbation layer (what ``task.verify`` reads)."""
        return getattr(self.inner, "unwrapped", self.inner)

    def configure(self, **settings: Any) -> None:
        """Change the inner device's settings (see :meth:`benchmark.Device.configure`)."""
        self.inner.configure(**settings)
        self._obs = None

    def launch(self, app: str) -> None:
        """Bring ``app`` to the front on the inner device."""
        self.inner.launch(app)
        self._obs = None

    def reset(self, task: Any = None, *, budget: Optional[int] = None) -> Observation:
        """Start an episode: restore settings, reset the inner device (and ``task.setup``), seed
        and reset every perturbation, and let step-0 triggers fire.

        Args:
            task: the task to set up; None: a clean home screen.
            budget: the step budget (for ``window_fraction`` timings); None: ``task.budget``.

        Returns:
            The first (perturbed) observation.
        """
        self._restore_settings()
        for p in self.perturbations:
            self._safe_close(p)
        self.inner.reset(task)
        self._snapshot = self.inner.settings
        if budget is None:
            budget = self.budget if self.budget is not None else getattr(task, "budget", None)
        self.ctx = PerturbationContext(self, task, budget, self.seed)
        self.overlays.clear()
        self.events, self._new, self._obs = [], [], None
        for i, p in enumerate(self.perturbations):
            p.fired = 0
            stream = p.timing.seed if p.timing.seed is not None else ""
            p.rng = random.Random(f"{p.name}:{stream}:{self.seed}:{i}")
            p.on_reset(self.inner, p.rng, self.ctx)
        # step-0 triggers (a pop-up that greets the agent before its first action)
        for p in self.perturbations:
            p.after_execute(self.ctx)
        self.closed = False
        return self.observe()

    def observe(self) -> Observation:
        """The screen as the agent sees it: the device's, with overlays composited and every ``transform`` applied."""
        if self._obs is not None:
            return self._obs
        raw = self.inner.observe()
        hist = self.ctx.raw_history
        if not hist or hist[-1] is not raw:
            hist.append(raw)
            del hist[:-RAW_HISTORY]
        obs = self.overlays.composite(raw, self.ctx)
        for p in self.perturbations:
            obs = p.transform(obs, self.ctx)
        obs = obs.replace(step=self.ctx.step) if obs.step != self.ctx.step else obs
        self._obs = obs
        self.ctx.shown = obs
        return obs

    def execute(self, action: Action) -> None:
        """Execute ``action`` through the perturbations: each ``before_execute`` may alter or drop
        it, overlays take the taps that land on them, then every ``after_execute`` runs.

        Raises:
            ActionError: the inner device could not execute it (raised after the step is counted
                and the perturbations have run).
        """
        ctx = self.ctx
        ctx.issued = action
        current: Optional[Action] = action
        for p in self.perturbations:
            if current is None:
                break
            current = p.before_execute(current, ctx)
        ctx.action = current
        error: Optional[ActionError] = None
        executed = getattr(self.inner, "actions", None)  # a simulated device counts what reached it
        try:
            if current is not None and current.action_type not in ENDING_TYPES:
                ctx.execute_raw(current)
            elif current is not None:
                self.inner.execute(current)
        except ActionError as exc:
            error = exc
        if executed is not None and getattr(self.inner, "actions", None) == executed:
            self._let_time_pass(action)
        ctx.step += 1
        self._obs = None
        for p in self.perturbations:
            p.after_execute(ctx)
        self.overlays.tick(ctx)
        if error is not None:
            raise error

    def _let_time_pass(self, action: Action) -> None:
        """An action the perturbations swallowed (dropped, or tapped onto an overlay) still
        took the user's time: on a simulated phone, whose clock only moves when it acts,
        move it as if the action had reached it (a real phone's clock runs by itself)."""
        idle = getattr(self.inner, "idle", None)
        if callable(idle):
            idle(action)

    def close(self) -> None:
        """Undo the perturbations, restore the settings, and close the inner device (idempotent)."""
        if self.closed:
            return
        for p in self.perturbations:
            self._safe_close(p)
        self._restore_settings()
        self.overlays.clear()
        self.closed = True
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> "PerturbedDevice":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- event log --------------------------------------------------------------------------
    def _log(self, event: Event) -> None:
        self.events.append(event)
        self._new.append(event)
        logger.debug("perturbation {} at step {}: {} {}", event.perturbation, event.step, event.event, event.details)

    def pop_events(self) -> list[dict[str, Any]]:
        """The perturbation events since the last call (the episode loop stores them per step)."""
        out = [e.to_dict() for e in self._new]
        self._new = []
        return out

    def event_log(self) -> list[dict[str, Any]]:
        """Every perturbation event of this episode."""
        return [e.to_dict() for e in self.events]

    # -- restoring ----------------------------------------------------------------------------
    def _safe_close(self, p: Perturbation) -> None:
        try:
            p.on_close(self.inner, self.ctx)
        except Exception as exc:  # noqa: BLE001 - restoring must go on for the others
            logger.error("perturbation {} failed to close: {}", p.name, exc)

    def _restore_settings(self) -> None:
        snap = self._snapshot
        if snap is None:
            return
        try:
            current = self.inner.settings
        except Exception as exc:  # noqa: BLE001
            logger.error("cannot read device settings to restore them: {}", exc)
            return
        changed = {k: v for k, v in snap.model_dump().items() if getattr(current, k) != v}
        if changed:
            try:
                self.inner.configure(**changed)
                self._log(Event(self.ctx.step, "device", "restored", changed))
            except Exception as exc:  # noqa: BLE001
                logger.error("failed to restore device settings {}: {}", changed, exc)
        self._snapshot = None


_live: "weakref.WeakSet[PerturbedDevice]" = weakref.WeakSet()


@atexit.register
def _restore_all() -> None:  # pragma: no cover - exercised by a subprocess test
    for env in list(_live):
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass
