"""What every AnTrap trap shares: firing once at an eligible step of its intervention
point, the ``trap_fired`` event, and small helpers (home-screen test, settling).

A trap's timing (profile default, AnTrap's trigger policy): per-step probability
0.16, only in the first 80 % of the step budget, at most once per episode. The
draw is made only at steps where the trap can have an effect (a grounding error
needs a touch action, a context disruption an app on screen), so that every
firing is a real trap event and is evaluated at most once per step.
"""

from __future__ import annotations

import time
from typing import Any, Callable, ClassVar, Optional

from perturb.base import Perturbation, StarLayer
from perturb.device import PerturbationContext
from perturb.traps.lexicon import launcher_packages
from ttir.core.types import Action, Observation, UIElement


class Trap(Perturbation):
    """Base class of the ten AnTrap trap operators."""

    layer: ClassVar[Optional[StarLayer]] = None

    def key(self, what: str) -> str:
        """A per-episode ``ctx.state`` key private to this trap."""
        return f"{self.name}:{what}"

    def try_fire(self, ctx: PerturbationContext, obs: Optional[Observation] = None,
                 eligible: Callable[[], bool] | bool = True) -> bool:
        """Evaluate the timing at this step (at most once per step, and only when the
        trap could still fire and is ``eligible`` here)."""
        limit = self.timing.max_triggers
        if limit is not None and self.fired >= limit:
            return False
        checked = self.key("checked_step")
        if ctx.state.get(checked) == ctx.step:
            return False
        if not (eligible() if callable(eligible) else eligible):
            return False
        ctx.state[checked] = ctx.step
        return self.should_fire(ctx, obs)

    def emit_fired(self, ctx: PerturbationContext, **details: Any) -> None:
        ctx.emit(self.name, "trap_fired", layer=self.layer, **details)

    def emit_once(self, ctx: PerturbationContext, event: str, **details: Any) -> None:
        """Emit ``event`` at most once per step (a transform may run twice in a step
        when the screen is invalidated between two observations)."""
        k = self.key(f"emitted:{event}")
        if ctx.state.get(k) == ctx.step:
            return
        ctx.state[k] = ctx.step
        ctx.emit(self.name, event, **details)

    def settle(self, device: Any) -> None:
        """Give a real device time to redraw after an injected key event (the
        simulator redraws synchronously)."""
        seconds = self.persistence.settle_time_s
        if seconds and not hasattr(device, "clock"):
            time.sleep(seconds)


def on_home_screen(obs: Observation) -> bool:
    """True on the launcher (or recents, which the launcher draws)."""
    return (obs.package or "") in launcher_packages()


def shown(ctx: PerturbationContext) -> Observation:
    """The observation the agent decided on (the live screen if none was shown yet)."""
    return ctx.shown if ctx.shown is not None else ctx.observe_raw()


def action_point(action: Action, obs: Observation) -> Optional[tuple[int, int]]:
    """The screen point an action targets on ``obs`` (None when it has no target or
    its index is out of range)."""
    try:
        return action.point(obs.elements)
    except IndexError:
        return None


def describe_element(e: Optional[UIElement], label: str = "") -> Optional[dict[str, Any]]:
    """The identifying fields of an element, for the event log."""
    if e is None:
        return None
    out: dict[str, Any] = {"text": e.text, "content_desc": e.content_desc, "resource_id": e.resource_id,
                           "class_name": e.class_name, "bounds": list(e.bounds)}
    if label and label != (e.text or e.content_desc):
        out["label"] = label
    return out
