"""Round-layer traps (R): the execution flow is hijacked over several steps.

- ``trap_state_deadlock`` — for k steps, k uniform in [1, ⌊T/4⌋] (T: the step
  budget), every device action is dropped and the screen served stays identical.
- ``trap_context_disruption`` — HOME or APP_SWITCH is injected before the agent's
  step (the app keeps its state; re-opening it resumes where it was).
- ``trap_loop`` — BACK is injected before the agent's step every N = 2 steps until
  the trap's budget of BACK presses is spent.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field

from benchmark.device import ActionError
from perturb.action import DEVICE_ACTIONS
from perturb.base import Magnitude
from perturb.device import PerturbationContext
from perturb.traps.base import Trap, on_home_screen
from ttir.core.types import Action, Observation

KEYEVENTS = {"home": ("navigate_home", "KEYCODE_HOME"), "app_switch": ("app_switch", "KEYCODE_APP_SWITCH"),
             "back": ("navigate_back", "KEYCODE_BACK")}


class DeadlockMagnitude(Magnitude):
    k: Optional[int] = Field(None, ge=1, description="Deadlock length in steps; None: uniform in [1, ⌊T × k_budget_fraction⌋].")
    k_budget_fraction: float = Field(0.25, gt=0.0, le=1.0, description="Longest deadlock as a share of the step budget T (AnTrap: 1/4).")
    budget_if_unknown: int = Field(20, ge=1, description="T to use when the episode has no step budget.")


class StateDeadlock(Trap):
    """R: an unresponsive phone — actions are swallowed and the screen is frozen."""

    layer = "R"
    component = "action"
    magnitude_model = DeadlockMagnitude

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        window: Optional[dict[str, Any]] = ctx.state.get(self.key("window"))
        if window is None:
            if not self.try_fire(ctx):
                return action
            m = self.magnitude
            budget = ctx.budget or m.budget_if_unknown
            k_max = max(1, int(budget * m.k_budget_fraction))
            k = m.k if m.k is not None else self.rng.randint(1, k_max)
            frozen = ctx.shown if ctx.shown is not None else ctx.env.observe()
            window = {"start": ctx.step, "k": k, "frozen": frozen}
            ctx.state[self.key("window")] = window
            self.emit_fired(ctx, k=k, k_max=k_max, budget=budget)
        i = ctx.step - window["start"]
        if not 0 <= i < window["k"]:
            return action
        dropped = action.action_type in DEVICE_ACTIONS
        ctx.emit(self.name, "deadlock_step", index=i + 1, k=window["k"], action=action.to_dict(), dropped=dropped)
        if dropped:
            ctx.emit(self.name, "dropped", action=action.to_dict(), deadlock_step=i + 1)
            return None
        return action  # wait / answer never reach the device; the step still counts

    def after_execute(self, ctx: PerturbationContext) -> None:
        window = ctx.state.get(self.key("window"))
        if window is not None and ctx.step == window["start"] + window["k"]:
            ctx.emit(self.name, "deadlock_released", k=window["k"])

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        window = ctx.state.get(self.key("window"))
        if window is None or not window["start"] < ctx.step <= window["start"] + window["k"]:
            return obs
        # the screen the agent saw when the phone froze, delivered now
        return window["frozen"].replace(step=obs.step, time=obs.time)


class DisruptionMagnitude(Magnitude):
    keyevents: list[Literal["home", "app_switch"]] = Field(
        default_factory=lambda: ["home", "app_switch"], min_length=1,
        description="Key events to inject (seeded choice): home → the launcher, app_switch → recent apps.")


class _KeyInjector(Trap):
    """Injects a system key event before the agent's next observation."""

    def press(self, ctx: PerturbationContext, kind: str) -> dict[str, Any]:
        action_type, keycode = KEYEVENTS[kind]
        before = ctx.observe_raw().foreground
        error = None
        try:
            ctx.execute_raw(Action(action_type=action_type))  # type: ignore[arg-type]
        except ActionError as exc:  # the key had nothing to act on
            error = str(exc)
        self.settle(ctx.device)
        out: dict[str, Any] = {"keyevent": keycode, "foreground_before": before, "foreground_after": ctx.observe_raw().foreground}
        if error:
            out["error"] = error
        return out


class ContextDisruption(_KeyInjector):
    """R: a sudden jump to the home screen or the recent-apps view."""

    layer = "R"
    component = "transition"
    magnitude_model = DisruptionMagnitude

    def after_execute(self, ctx: PerturbationContext) -> None:
        if not self.try_fire(ctx, eligible=lambda: not on_home_screen(ctx.observe_raw())):
            return
        kind = self.rng.choice(self.magnitude.keyevents)
        self.emit_fired(ctx, keyevent=KEYEVENTS[kind][1])
        ctx.emit(self.name, "context_disrupted", **self.press(ctx, kind))


class LoopMagnitude(Magnitude):
    every_steps: int = Field(2, ge=1, description="N: BACK is injected every N steps.")
    backs: int = Field(3, ge=1, description="The trap's budget: how many BACK presses it injects in all.")


class Loop(_KeyInjector):
    """R: BACK, again and again — the agent is pulled round a cycle of states."""

    layer = "R"
    component = "transition"
    magnitude_model = LoopMagnitude

    def after_execute(self, ctx: PerturbationContext) -> None:
        loop: Optional[dict[str, Any]] = ctx.state.get(self.key("loop"))
        if loop is None:
            if not self.try_fire(ctx, eligible=lambda: not on_home_screen(ctx.observe_raw())):
                return
            loop = {"start": ctx.step, "done": 0}
            ctx.state[self.key("loop")] = loop
            self.emit_fired(ctx, every_steps=self.magnitude.every_steps, backs=self.magnitude.backs)
        m = self.magnitude
        if loop["done"] >= m.backs or (ctx.step - loop["start"]) % m.every_steps != 0:
            return
        loop["done"] += 1
        ctx.emit(self.name, "loop_back", index=loop["done"], of=m.backs, **self.press(ctx, "back"))
        if loop["done"] == m.backs:
            ctx.emit(self.name, "loop_ended", backs=m.backs)
