"""PlannerAgent: follows a task's semantic plan, grounding each step in the current UI,
with seeded propensities drawn from AndroidReality's error analysis (§4.3):

- ``engage_probability`` — on an unknown pop-up, tap its primary (engage) button and
  keep treating the detour as part of the task (off-task engagement, error ③);
- ``move_on_probability`` — after an action with no visible effect, carry on as if it
  had worked (silent action failure, error ②);
- ``drift_probability`` — after an interruption was handled, lose the goal: declare
  the task done (``drift_mode="terminate"``) or start over (``"restart"``) (error ④).

With all three at 0 it is the robust :class:`~benchmark.agents.oracle.OracleAgent`:
it declines pop-ups, waits out loading, closes hung apps and re-opens them, retries
actions that had no effect (after a wait, so a late action is not applied twice) and
returns to its app when the context is lost.
"""

from __future__ import annotations

import random
from typing import Literal, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field

from benchmark.agents import screen
from benchmark.plan import PlanStep, act_on, ground
from ttir.core.lexicon import label
from ttir.core.types import INERT_TYPES, Action, AgentStep, Observation

ENTRY_KINDS = ("open_app", "open_shade")
SYSTEM_PACKAGES = ("com.android.permissioncontroller", "com.android.systemui", "android", "com.android.vending",
                   "com.google.android.gms")
NO_EFFECT_EXPECTED = (*INERT_TYPES, "scroll", "keyboard_enter")


class PlannerParams(BaseModel):
    """Behaviour knobs (defaults are the documented PlannerAgent; the oracle zeroes them)."""

    model_config = ConfigDict(extra="forbid")

    engage_probability: float = Field(0.5, ge=0, le=1, description="Chance to engage with an unknown pop-up's primary button.")
    move_on_probability: float = Field(0.5, ge=0, le=1, description="Chance to move on after an action that had no visible effect.")
    drift_probability: float = Field(0.3, ge=0, le=1, description="Chance to lose the goal after an interruption was handled.")
    drift_mode: Literal["terminate", "restart"] = Field("terminate", description="How the goal is lost: claim done, or start over.")
    max_rewinds: int = Field(3, ge=0, description="How often the agent may go back to the last app-opening step when lost.")
    react_to_popups: bool = Field(True, description="Handle a pop-up that just appeared before going on with the plan.")
    reveal_scrolls: int = Field(5, ge=0, description="Scrolls (down, then up) spent looking for a missing target.")
    repeat_silent_steps: bool = Field(False, description="Do a silent plan step (no visible effect, harmless to repeat, "
                                                         "e.g. Save) a second time, in case the first was lost.")
    seed: int = Field(0, description="Seed of the propensity draws (combined with the goal).")


class PlannerAgent:
    name = "planner"

    def __init__(self, plan: Sequence[PlanStep], params: Optional[PlannerParams] = None, **overrides: object):
        self.plan = list(plan)
        self.params = (params or PlannerParams()).model_copy(update=overrides) if overrides else (params or PlannerParams())
        PlannerParams.model_validate(self.params.model_dump())
        self.reset("")

    # -- episode state ---------------------------------------------------------------------
    def reset(self, goal: str) -> None:
        self.goal = goal
        self.rng = random.Random(f"{type(self).__name__}:{self.params.seed}:{goal}")
        self.i = 0
        self.last_index: Optional[int] = None
        self.retry_stage = 0
        self.check: Optional[tuple[str, int]] = None
        self.scrolls = 0
        self.scroll_dir = "down"
        self.rewinds = 0
        self.engaged = False
        self.handled_interruption = False
        self.expected_pkg: Optional[str] = None
        self.hid_keyboard = False
        self.drifted_from: Optional[int] = None
        self.seen_labels: Optional[set[str]] = None
        self.seen_texts: set[str] = set()
        self.failed_retries: dict[int, int] = {}
        self.check_selected = False
        self.toggle: Optional[tuple[str, bool]] = None
        self.just_rewound = False
        self._rewound_to = -1
        self.typed: Optional[tuple[str, str]] = None
        self.repeat_pending: Optional[int] = None  # a silent step to do once more (repeat_silent_steps)
        self.events: list[str] = []

    def on_recovery(self, event: dict) -> None:
        """Told by a guard what it did (its message restates the goal): the planner
        re-grounds its current step, and an agent that had drifted resumes its plan."""
        self.check, self.retry_stage = None, 0
        if self.drifted_from is not None:
            self.i, self.drifted_from = self.drifted_from, None

    # -- acting ------------------------------------------------------------------------------
    def _emit(self, action: Action, thought: str, summary: str, plan_index: Optional[int] = None) -> AgentStep:
        self.last_index = plan_index
        return AgentStep(action=action, thought=thought, summary=summary)

    def step(self, obs: Observation) -> AgentStep:
        sig = screen.signature(obs)
        step = self._decide(obs)
        a = step.action
        if (self.last_index is not None and a.action_type not in NO_EFFECT_EXPECTED and self.check is None
                and not self.plan[self.last_index].silent):  # a silent step's effect cannot be seen: nothing to check
            self.check = (sig, self.last_index)
            hit = obs.element_at(*a.point(obs.elements), clickable_only=True) if a.is_touch else None
            self.check_selected = bool(hit is not None and (hit.selected or (hit.checkable and hit.checked)))
        return step

    def _decide(self, obs: Observation) -> AgentStep:
        p = self.params
        sig = screen.signature(obs)
        entry = self._current_entry()
        if entry is not None and entry[1] == self.i - 1 and self.expected_pkg is None:
            if obs.package not in SYSTEM_PACKAGES:
                self.expected_pkg = obs.package  # where the last entry step took us (not a dialog over it)

        # A. did the last plan action do anything? (a late action may still land: wait once first)
        if self.check is not None:
            before, index = self.check
            if self.toggle is not None and sig != before and screen.toggle_unchanged(obs, self.toggle):
                sig = before  # the screen changed, but the switch we meant to flip did not: treat as no effect
            if self.typed is not None and sig != before and screen.text_missing(obs, *self.typed):
                sig = before  # something was typed, but not our text into our field: type it again
            if sig != before or self.check_selected:
                self.check, self.retry_stage = None, 0  # changed, or the tab / option was already selected
                if obs.package and obs.package not in SYSTEM_PACKAGES and "launcher" not in obs.package:
                    self.expected_pkg = obs.package  # the plan's own step brought us here (e.g. Files -> Chrome)
            elif self.retry_stage == 0 and self.rng.random() < p.move_on_probability:
                self.check = None
                self.events.append("moved_on")  # carries on as if it worked
            elif self.retry_stage == 0:
                self.retry_stage = 1
                return self._emit(Action(action_type="wait", seconds=1.0), "Nothing changed yet; give it a moment.",
                                  "Wait for the screen to update")
            else:
                self.check, self.retry_stage = None, 0
                self.i = index  # try that step again
                self.failed_retries[index] = self.failed_retries.get(index, 0) + 1
                if self.failed_retries[index] >= 2:
                    # the same step keeps having no effect: something modal may swallow taps; back out of it
                    self.failed_retries[index] = 0
                    self.handled_interruption = True
                    return self._emit(Action(action_type="navigate_back"),
                                      "My taps keep having no effect; something may be in the way. Go back.", "Go back")

        # an interruption was just handled: does the agent still remember its goal?
        if self.handled_interruption and not self.engaged:
            self.handled_interruption = False
            if self.rng.random() < p.drift_probability:
                return self._drift()

        # B. a hung app (System UI: wait for it), a loading screen
        wait = screen.system_not_responding(obs)
        if wait is not None:
            self.handled_interruption = True
            return self._tap(wait, "The phone itself is not responding; give it time.", 'Tap "Wait"')
        close = screen.not_responding(obs)
        if close is not None:
            self.handled_interruption = True
            return self._tap(close, "The app is not responding; close it (it will be re-opened).", 'Tap "Close app"')
        if self.repeat_pending is not None:
            k, self.repeat_pending = self.repeat_pending, None
            again, target = self._ground(self.plan[k], obs)
            if again is not None and not (target is not None and screen.covered(obs, target)):
                return self._emit(again, "Its effect does not show; do it once more to be sure.",
                                  self.plan[k].describe(), plan_index=k)
        if self.i >= len(self.plan):
            return self._emit(Action(action_type="status", goal_status="complete"), "Every step of the plan is done.",
                              "Declare the task complete")
        step = self.plan[self.i]
        if (step.target is None and step.kind in ("back", "enter") and entry is not None and self.expected_pkg
                and obs.package != self.expected_pkg and obs.package not in SYSTEM_PACKAGES):
            return self._rewind(entry[1], "The task's app is no longer in front.", obs)
        action, target = self._ground(step, obs)
        while action is None and step.optional and self.i + 1 < len(self.plan):
            self.i += 1  # an optional step whose target is absent: skip it
            step = self.plan[self.i]
            action, target = self._ground(step, obs)
        fresh = self._fresh_popup(obs, target)
        if action is not None and not (target is not None and screen.covered(obs, target)) and not fresh:
            self.toggle = screen.toggle_state(obs, target) if step.kind == "tap" and target is not None else None
            self.typed = (target.resource_id, step.text or "") if step.kind == "type" and target is not None and target.resource_id else None
            return self._advance(step, action)
        if screen.loading(obs) and not screen.buttons(obs):
            return self._emit(Action(action_type="wait", seconds=2.0), "The screen is still loading.", "Wait for loading")

        # C. something is in the way (or just popped up): an interruption?
        dismiss = [e for e in screen.dismiss_buttons(obs) if screen.popup_button(obs, e)]
        engage = [e for e in screen.engage_buttons(obs) if screen.popup_button(obs, e)]
        if fresh or dismiss or engage or (target is not None and screen.covered(obs, target)):
            if self.engaged or (engage and self.rng.random() < p.engage_probability):
                self.engaged = True  # treats the pop-up as part of the workflow
                step_in = self._engaged_step(obs)
                if step_in is not None:
                    return step_in
            if dismiss:
                self.handled_interruption = True
                return self._tap(dismiss[0], "An interruption is in the way; decline it.", f'Tap "{label(dismiss[0])}"')
            if fresh or self.engaged:
                self.handled_interruption = True
                return self._emit(Action(action_type="navigate_back"), "Leave this screen.", "Go back")
        if self.engaged:
            step_in = self._engaged_step(obs)  # deep in a detour: keep following it like a workflow
            if step_in is not None:
                return step_in

        # D. after re-opening the app: already further along? (the app kept its place) — only
        # navigation taps may be skipped, never typing or settings
        for k in range(self.i + 1, min(len(self.plan), self.i + 4)) if self.just_rewound and step.kind == "tap" else ():
            ahead = self.plan[k]
            if ahead.target is None or ahead.kind in ENTRY_KINDS:
                break
            if self.plan[k - 1].kind != "tap":
                break
            act, tgt = self._ground(ahead, obs)
            if act is not None and not (tgt is not None and screen.covered(obs, tgt)):
                self.i = k
                return self._advance(ahead, act)
        # E. lost the app (sent home, switched away)?
        if entry is not None and self.expected_pkg and obs.package != self.expected_pkg and not screen.keyboard_open(obs):
            return self._rewind(entry[1], "The task's screen is gone; go back to it.", obs)
        return self._reveal(step, obs, entry)

    def _engaged_step(self, obs: Observation) -> Optional[AgentStep]:
        """Follow a detour as if it were the task: tick its boxes, press its engage or
        forward buttons — everything but declining."""
        boxes = [e for e in obs.elements if e.checkable and not e.checked and e.clickable and e.enabled and e.area > 0
                 and "inputmethod" not in e.package and not e.package.endswith("systemui")]
        if boxes:
            return self._tap(boxes[0], "The flow asks to confirm this; tick it.", f'Tick "{label(boxes[0])}"')
        engage = screen.engage_buttons(obs)
        if engage:
            return self._tap(engage[0], f"This seems to be part of the task: {label(engage[0])}.", f'Tap "{label(engage[0])}"')
        from ttir.core.lexicon import role_of

        forward = [e for e in reversed(screen.buttons(obs)) if role_of(e) == "neutral" and e.class_name.endswith("Button")
                   and e.package not in ("com.android.systemui", "com.google.android.inputmethod.latin")]
        if forward:
            return self._tap(forward[0], "Continue through this flow.", f'Tap "{label(forward[0])}"')
        return None

    def _fresh_popup(self, obs: Observation, target) -> bool:
        """A pop-up that just appeared (new decline/engage buttons that are not the plan's
        target): agents notice those and react before going on."""
        previous, previous_texts = self.seen_labels, self.seen_texts
        # every button label seen so far this episode: a pop-up's buttons are ones never seen before
        self.seen_labels = (previous or set()) | screen.labels(obs)
        self.seen_texts = {t for t in obs.texts()}
        if not self.params.react_to_popups or previous is None:
            return False
        new = [e for e in screen.dismiss_buttons(obs) + screen.engage_buttons(obs) if label(e) not in previous]
        if not new:
            return False
        if target is None:
            return True
        other_window = any(screen.window_of(obs, e) != screen.window_of(obs, target) for e in new)
        if not other_window and previous_texts and len(previous_texts & self.seen_texts) < 0.5 * len(previous_texts):
            return False  # a new screen of the same app, not something popping up over the old one
        # a dialog that contains the plan's target is the screen the plan expects (one it opened itself)
        box = screen.dialog_of(obs, new)
        return box is None or not screen.within(obs, target, box)

    def _ground(self, step: PlanStep, obs: Observation):
        if step.target is None:
            return ground(step, obs), None
        e = screen.find_lenient(obs, step.target)
        if e is None:
            return None, None
        return act_on(step, e), e

    def _advance(self, step: PlanStep, action: Action) -> AgentStep:
        self.just_rewound = step.kind in ENTRY_KINDS and self.rewinds > 0 and self.i == self._rewound_to
        idx = self.i
        self.i += 1
        self.scrolls, self.scroll_dir, self.hid_keyboard = 0, "down", False
        if step.silent and self.params.repeat_silent_steps:
            self.repeat_pending = idx
        if step.kind in ENTRY_KINDS:
            self.expected_pkg = None  # learnt on the next observation
        return self._emit(action, f"Next step of the plan: {step.describe()}.", step.describe(), plan_index=idx)

    def _tap(self, e, thought: str, summary: str) -> AgentStep:
        x, y = e.center
        return self._emit(Action(action_type="click", x=x, y=y), thought, summary)

    def _drift(self) -> AgentStep:
        self.events.append("drift")
        self.drifted_from = self.i
        if self.params.drift_mode == "terminate":
            self.i = len(self.plan)
            return self._emit(Action(action_type="status", goal_status="complete"),
                              "The interruption is handled; that should be it.", "Declare the task complete")
        self.i = 0
        self.expected_pkg = None
        return self._emit(Action(action_type="navigate_home"), "Start over from the home screen.", "Go home and start again")

    def _current_entry(self) -> Optional[tuple[PlanStep, int]]:
        for k in range(min(self.i, len(self.plan)) - 1, -1, -1):
            if self.plan[k].kind in ENTRY_KINDS:
                return self.plan[k], k
        return None

    def _rewind(self, index: int, why: str, obs: Optional[Observation] = None) -> AgentStep:
        if self.rewinds >= self.params.max_rewinds:
            self.i += 1  # give up on this step
            return self._emit(Action(action_type="wait", seconds=1.0), f"{why} (giving up on this step)", "Wait")
        self.rewinds += 1
        self._rewound_to = index
        self.scrolls, self.scroll_dir = 0, "down"
        step = self.plan[index]
        if (step.kind == "open_app" and obs is not None and self.expected_pkg and obs.package == self.expected_pkg
                and not screen.keyboard_open(obs)):
            # lost inside the right app: step back towards its start screen and follow the plan from there
            self.i = index + 1
            return self._emit(Action(action_type="navigate_back"), f"{why} Go back and look again.", "Go back")
        self.i = index
        action = ground(step, Observation())
        assert action is not None
        return self._advance(step, action)

    def _reveal(self, step: PlanStep, obs: Observation, entry: Optional[tuple[PlanStep, int]]) -> AgentStep:
        if screen.keyboard_open(obs) and not self.hid_keyboard:
            self.hid_keyboard = True
            return self._emit(Action(action_type="navigate_back"), "The keyboard hides part of the screen.", "Hide the keyboard")
        self.scrolls += 1
        if self.scrolls > self.params.reveal_scrolls:
            if self.scroll_dir == "down":
                self.scroll_dir, self.scrolls = "up", 1
            elif entry is not None:
                return self._rewind(entry[1], f"Could not find the target of '{step.describe()}'.", obs)
            else:
                self.i += 1
                return self._emit(Action(action_type="wait", seconds=1.0), f"Could not find: {step.describe()}.", "Wait")
        if not any(e.scrollable for e in obs.elements):
            if entry is not None and self.scrolls > 1:
                return self._rewind(entry[1], f"Could not find the target of '{step.describe()}'.", obs)
            return self._emit(Action(action_type="wait", seconds=1.0), "Waiting for the target to appear.", "Wait")
        target = step.target.describe() if step.target else "the target"
        return self._emit(Action(action_type="scroll", direction=self.scroll_dir),  # type: ignore[arg-type]
                          f"{target} is not visible; scroll {self.scroll_dir}.", f"Scroll {self.scroll_dir} to find {target}")
