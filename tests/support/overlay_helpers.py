"""Shared helpers for the overlay-engine tests (tests/test_perturb_overlay_*.py)."""

from __future__ import annotations

import hashlib
from typing import Any, Optional

import perturb
from benchmark import SimDevice, make_task
from benchmark.agents.reference import ReferenceAgent
from benchmark.plan import find as find_target
from perturb import PerturbedDevice
from ttir.core.types import Action, AgentStep, Observation, UIElement

TRANSITIONS = (
    "popup_permission", "popup_security", "bottom_sheet_consent", "interstitial_ad", "ad_trial_offer",
    "rate_dialog", "notification_message", "notification_delivery", "update_app_sheet", "update_system",
    "whats_new_dialog", "first_run_gate",  # beyond the paper
)
SCREEN_STATES = ("execution_delay_loading", "execution_delay_frozen", "partial_loading_skeleton", "app_hang_restart_required",
                 "system_ui_not_responding")
ALL = TRANSITIONS + SCREEN_STATES

MAX_LOADING_WAITS = 4  # an app's own progress bar must not stall the agent forever

# labels a careful user taps to make an interruption go away without engaging with it
DISMISS_LABELS = {
    "cancel", "not now", "no thanks", "no, thanks", "don't allow", "don’t allow", "deny", "later", "close", "close ad",
    "reject all", "do not consent", "don't share", "not really", "remind me later", "maybe later",
    "mark as read", "decline", "continue with ads", "close app", "skip", "skip for now", "use without an account",
}


def make_env(name: str, task: str = "ContactsAddContact", seed: int = 0, **overrides: Any) -> tuple[PerturbedDevice, Observation]:
    env = PerturbedDevice(SimDevice(), [perturb.make(name, **overrides)], seed=seed)
    obs = env.reset(make_task(task))
    return env, obs


def act(env: PerturbedDevice, action_type: str, **kw: Any) -> Observation:
    env.execute(Action(action_type=action_type, **kw))  # type: ignore[arg-type]
    return env.observe()


def find(obs: Observation, label: str, *, topmost: bool = True) -> Optional[UIElement]:
    hits = [e for e in obs.elements if label in (e.text, e.content_desc) and e.area > 0]
    if not hits:
        return None
    return hits[-1] if topmost else hits[0]


def tap(env: PerturbedDevice, label: str) -> Observation:
    obs = env.observe()
    el = find(obs, label)
    assert el is not None, f"{label!r} is not on screen: {[e.label for e in obs.elements if e.label]}"
    return act(env, "click", x=el.center[0], y=el.center[1])


def raw(env: PerturbedDevice) -> Observation:
    return env.inner.observe()


def events(env: PerturbedDevice, name: Optional[str] = None) -> list[str]:
    return [e["event"] for e in env.event_log() if name is None or e["event"] == name]


def last(env: PerturbedDevice, event: str) -> dict[str, Any]:
    hits = [e for e in env.event_log() if e["event"] == event]
    assert hits, f"no {event!r} event in {events(env)}"
    return hits[-1]


def img_hash(obs: Observation) -> str:
    return hashlib.sha256(obs.screenshot.tobytes()).hexdigest()


def foreign(obs: Observation, base: Observation) -> list[UIElement]:
    """Elements of ``obs`` that the device itself did not report."""
    seen = {(e.package, e.resource_id, e.class_name, e.text, e.content_desc, e.bounds) for e in base.elements}
    return [e for e in obs.elements if (e.package, e.resource_id, e.class_name, e.text, e.content_desc, e.bounds) not in seen]


def differs_in(a: Observation, b: Observation, box: tuple[int, int, int, int]) -> bool:
    return a.screenshot.crop(box).tobytes() != b.screenshot.crop(box).tobytes()


def open_contacts(env: PerturbedDevice) -> Observation:
    return act(env, "open_app", app_name="Contacts")


def advance_to(env: PerturbedDevice, step: int) -> Observation:
    while env.ctx.step < step:
        act(env, "wait")
    return env.observe()


class DismissFirstAgent:
    """The reference solution, but first it closes any interruption the way a careful
    user would: a dismiss-role button (unless the plan's next target sits in the same
    dialog — then the dialog is the task's own), swiping a heads-up notification away,
    waiting while the app shows a progress indicator instead of the target; after
    closing a hung app it starts the plan again."""

    def __init__(self, task: Any):
        self.task = task
        self.ref = ReferenceAgent(task.reference_solution())
        self.reset(task.goal)

    def reset(self, goal: str) -> None:
        self.ref.reset(goal)
        self.waits = 0
        self.acted_on: Optional[Observation] = None  # the screen the last plan action was taken on

    @staticmethod
    def _dialog_of(obs: Observation, i: int) -> set[int]:
        """Ancestors of element ``i`` below its window root."""
        out: set[int] = set()
        p = obs.elements[i].parent
        while p is not None and obs.elements[p].parent is not None:
            out.add(p)
            p = obs.elements[p].parent
        return out

    def step(self, obs: Observation) -> AgentStep:
        current = self.ref.current()
        target = find_target(obs, current.target) if current is not None and current.target is not None else None
        # where the rest of the plan will tap: a dialog holding one of those is the task's own
        planned: list[int] = []
        for st in self.ref.plan[self.ref.i:]:
            hit = find_target(obs, st.target) if st.target is not None else None
            if hit is not None:
                planned.extend(i for i, e in enumerate(obs.elements) if e is hit)
        for i in range(len(obs.elements) - 1, -1, -1):
            e = obs.elements[i]
            if not (e.clickable and e.label.strip().lower() in DISMISS_LABELS):
                continue
            mine = self._dialog_of(obs, i)
            if any(mine & (self._dialog_of(obs, j) | {j}) for j in planned):
                break  # the plan's own dialog (e.g. a delete confirmation)
            if e.label.strip().lower() == "close app":
                self.ref.reset(self.task.goal)  # the app restarts from scratch
            return AgentStep(action=Action(action_type="click", x=e.center[0], y=e.center[1]), summary="dismiss")
        w, h = obs.screen_size
        for e in obs.elements:
            if e.resource_id.endswith(":id/expandableNotificationRow") and e.parent is not None \
                    and obs.elements[e.parent].parent is None:
                y = e.center[1]
                return AgentStep(action=Action(action_type="swipe", x=e.center[0], y=y, x2=min(w - 1, e.center[0] + w // 2), y2=y),
                                 summary="swipe the notification away")
        loading = any(e.class_name in ("android.widget.ProgressBar", "com.facebook.shimmer.ShimmerFrameLayout")
                      for e in obs.elements if e.package == obs.package)
        # a screen that did not react to the last action may be frozen: give it a moment
        unchanged = self.acted_on is not None and obs.xml == self.acted_on.xml \
            and obs.screenshot.tobytes() == self.acted_on.screenshot.tobytes()
        if (unchanged or (loading and current is not None and target is None)) and self.waits < MAX_LOADING_WAITS:
            self.waits += 1
            return AgentStep(action=Action(action_type="wait", seconds=1.0), summary="wait for loading")
        self.waits = 0
        step = self.ref.step(obs)
        self.acted_on = obs if step.action.action_type not in ("wait", "status") else None
        return step
