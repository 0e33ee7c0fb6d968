"""Action perturbations that need no overlay: random drops, realistic delays, and a
reset to the home screen. (Loading / frozen / app-hang screens are overlays: see
perturb/overlay.)"""

from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from ttir.core.types import Action

# actions a flaky input pipeline can lose; `wait`, `status` and `answer` never touch the device
DEVICE_ACTIONS = {
    "click", "long_press", "double_tap", "input_text", "scroll", "swipe", "navigate_back",
    "navigate_home", "keyboard_enter", "app_switch", "open_app",
}


class DropMagnitude(Magnitude):
    probability: float = Field(0.08, ge=0.0, le=1.0, description="ACTION_DROP_PROBABILITY: chance an issued action is lost.")


class ActionDrop(Perturbation):
    """φA: the action is silently dropped (the device never receives it)."""

    component = "action"
    magnitude_model = DropMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        if action.action_type not in DEVICE_ACTIONS:
            return action
        if self.rng.random() < self.magnitude.probability or self.overdue(ctx):
            self.fired += 1
            ctx.emit(self.name, "dropped", action=action.to_dict())
            return None
        return action


class DelayMagnitude(Magnitude):
    probability: float = Field(0.15, ge=0.0, le=1.0, description="ACTION_DELAY_PROBABILITY.")
    seconds: float = Field(1.5, ge=0.0, le=60.0, description="ACTION_DELAY_SECONDS: how late the effect arrives.")


class ActionDelay(Perturbation):
    """φA: the action takes effect late — after the next observation was taken. It
    lands just before the agent's next action (or during a wait), so an agent that
    retries blindly applies it twice."""

    component = "action"
    magnitude_model = DelayMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        pending: Optional[Action] = ctx.state.pop(f"{self.name}:pending", None)
        if pending is not None:
            try:
                ctx.execute_raw(pending)
                ctx.emit(self.name, "delayed_applied", action=pending.to_dict())
            except Exception as exc:  # noqa: BLE001 - the screen moved on; the late action misses
                ctx.emit(self.name, "delayed_lost", action=pending.to_dict(), reason=str(exc))
        if action.action_type not in DEVICE_ACTIONS:
            return action
        if self.rng.random() < self.magnitude.probability or self.overdue(ctx):
            self.fired += 1
            ctx.state[f"{self.name}:pending"] = action
            ctx.emit(self.name, "delayed", action=action.to_dict(), seconds=self.magnitude.seconds)
            return None
        return action


class ResetMagnitude(Magnitude):
    return_home: bool = Field(True, description="Press HOME (the app stays in recents) rather than only leaving the screen.")


class StateResetHome(Perturbation):
    """After the trigger step's action, the phone is sent to the home screen: the agent
    loses its place and must re-open the app."""

    component = "action"
    magnitude_model = ResetMagnitude

    def after_execute(self, ctx: PerturbationContext) -> None:
        if ctx.step == 0:
            return
        if self.should_fire(ctx, None):
            ctx.device.execute(Action(action_type="navigate_home" if self.magnitude.return_home else "navigate_back"))
            ctx.emit(self.name, "reset_home")


