"""Semantic plans: reference solutions that name targets by text / id / description,
never by coordinates, and the grounder that turns a plan step into an Action on
the current screen.

A plan is robust to layout changes (font, density, orientation) because every
step is grounded again on the screen in front of it.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, model_validator

from ttir.core.types import Action, Observation, UIElement

StepKind = Literal[
    "tap", "long_press", "type", "open_app", "back", "home", "enter", "set_slider",
    "open_shade", "wait", "scroll", "app_switch",
]


class Target(BaseModel):
    """How to find an element: any of text / id / desc; ``contains`` for substring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: Optional[str] = None
    id: Optional[str] = None
    desc: Optional[str] = None
    contains: bool = False
    nth: int = 0
    editable: Optional[bool] = None

    @model_validator(mode="after")
    def _need_something(self) -> "Target":
        if self.text is None and self.id is None and self.desc is None:
            raise ValueError("a Target needs at least one of text, id or desc")
        return self

    def matches(self, e: UIElement) -> bool:
        def eq(value: str, wanted: Optional[str]) -> bool:
            if wanted is None:
                return True
            if self.contains:
                return wanted.lower() in value.lower()
            return value.strip().lower() == wanted.strip().lower()

        if e.source == "ocr":
            return self._matches_text_line(e.text, eq)
        if self.editable is not None and e.editable != self.editable:
            return False
        if self.id is not None and not (e.resource_id == self.id or e.short_id == self.id):
            return False
        if self.text is not None and not (eq(e.text, self.text) or (e.editable and eq(e.hint, self.text))):
            return False
        return eq(e.content_desc, self.desc)

    def _matches_text_line(self, line: str, eq: Any) -> bool:
        """A line of text read from the screenshot (no tree): it carries no id, description or
        flags, so the target is read as a person reads a screen — its text, else its
        description, else its id's words ("first_name": the field that says "First name")."""
        for wanted in (self.text, self.desc, self.id.rsplit("/", 1)[-1].replace("_", " ") if self.id else None):
            if wanted is not None:
                return eq(line, wanted)
        return False

    def describe(self) -> str:
        for v in (self.text, self.desc, self.id):
            if v:
                return f'"{v}"'
        return "target"


class PlanStep(BaseModel):
    """One semantic step of a reference solution."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: StepKind
    target: Optional[Target] = None
    text: Optional[str] = None
    value: Optional[float] = None
    direction: Optional[Literal["up", "down"]] = None
    optional: bool = False  # skipped when its target is not on screen (e.g. an AM/PM toggle only 12-hour clocks show)
    silent: bool = False  # the app shows nothing when it works (Markor's Save writes the file without feedback)

    def describe(self) -> str:
        k, t = self.kind, self.target.describe() if self.target else ""
        if k == "tap":
            return f"Tap {t}"
        if k == "long_press":
            return f"Long-press {t}"
        if k == "type":
            return f'Type "{self.text}" into {t}' if self.target else f'Type "{self.text}"'
        if k == "open_app":
            return f"Open the {self.text} app"
        if k == "set_slider":
            return f"Drag {t} to {int(round((self.value or 0) * 100))}%"
        if k == "scroll":
            return f"Scroll {self.direction}"
        return {"back": "Go back", "home": "Go to the home screen", "enter": "Press enter",
                "open_shade": "Pull down the notification shade", "wait": "Wait",
                "app_switch": "Open recent apps"}.get(k, k)


# -- builders (what task authors write) ---------------------------------------------


def T(text: Optional[str] = None, *, id: Optional[str] = None, desc: Optional[str] = None,
      contains: bool = False, nth: int = 0, editable: Optional[bool] = None) -> Target:
    return Target(text=text, id=id, desc=desc, contains=contains, nth=nth, editable=editable)


def tap(target: Target | str, *, optional: bool = False, silent: bool = False) -> PlanStep:
    return PlanStep(kind="tap", target=_t(target), optional=optional, silent=silent)


def long_press(target: Target | str) -> PlanStep:
    return PlanStep(kind="long_press", target=_t(target))


def type_into(target: Target | str, text: str) -> PlanStep:
    return PlanStep(kind="type", target=_t(target, editable=True), text=text)


def open_app(name: str) -> PlanStep:
    return PlanStep(kind="open_app", text=name)


def back() -> PlanStep:
    return PlanStep(kind="back")


def home() -> PlanStep:
    return PlanStep(kind="home")


def enter() -> PlanStep:
    return PlanStep(kind="enter")


def open_shade() -> PlanStep:
    return PlanStep(kind="open_shade")


def set_slider(target: Target | str, fraction: float) -> PlanStep:
    return PlanStep(kind="set_slider", target=_t(target), value=fraction)


def wait() -> PlanStep:
    return PlanStep(kind="wait")


def _t(target: Target | str, editable: Optional[bool] = None) -> Target:
    if isinstance(target, Target):
        return target
    return Target(text=target, editable=editable)


# -- grounding ----------------------------------------------------------------------


def actionable(obs: Observation, e: UIElement) -> bool:
    """Whether touching ``e`` can do something: it or an ancestor takes touches (a line of
    text read from the screenshot may be a button: nothing tells it is not)."""
    if e.source == "ocr":
        return True
    idx: Optional[int] = obs.elements.index(e)
    hops = 0
    while idx is not None and hops < 8:
        node = obs.elements[idx]
        if node.clickable or node.long_clickable or node.editable:
            return True
        idx, hops = node.parent, hops + 1
    return False


KEYBOARD_PACKAGE_HINT = "inputmethod"  # soft keyboards' packages (Gboard, AOSP's LatinIME)


def find(obs: Observation, target: Target, *, touchable: bool = False) -> Optional[UIElement]:
    """The ``nth`` visible, enabled element matching ``target``; with ``touchable``
    only elements a touch can act on (a screen title with the same words is not a button).
    The soft keyboard's keys are never a plan's target (its "Delete" key is not the app's)."""
    hits = [e for e in obs.elements if target.matches(e) and e.enabled and e.area > 0
            and KEYBOARD_PACKAGE_HINT not in e.package]
    if touchable:
        hits = [e for e in hits if actionable(obs, e)]
    if len(hits) <= target.nth:
        return None
    return hits[target.nth]


def _swipe_for_slider(e: UIElement, fraction: float) -> Action:
    """Drag from the slider's centre to the x that corresponds to ``fraction``."""
    x1, y1, x2, y2 = e.bounds
    if fraction >= 1:
        tx = x2 - 1
    elif fraction <= 0:
        tx = x1
    else:
        inset = round((x2 - x1) * 0.04)
        tx = x1 + inset + round((x2 - x1 - 2 * inset) * fraction)
    cy = (y1 + y2) // 2
    return Action(action_type="swipe", x=e.center[0], y=cy, x2=tx, y2=cy, duration_ms=400)


def ground(step: PlanStep, obs: Observation) -> Optional[Action]:
    """The action that performs ``step`` on ``obs``, or None if its target is not visible."""
    k = step.kind
    if k == "open_app":
        return Action(action_type="open_app", app_name=step.text)
    if k == "back":
        return Action(action_type="navigate_back")
    if k == "home":
        return Action(action_type="navigate_home")
    if k == "enter":
        return Action(action_type="keyboard_enter")
    if k == "wait":
        return Action(action_type="wait", seconds=1.0)
    if k == "app_switch":
        return Action(action_type="app_switch")
    if k == "scroll":
        return Action(action_type="scroll", direction=step.direction or "down")
    if k == "open_shade":
        w, h = obs.screen_size
        return Action(action_type="swipe", x=w // 2, y=5, x2=w // 2, y2=int(h * 0.6), duration_ms=300)
    assert step.target is not None
    e = find(obs, step.target, touchable=True)
    if e is None:
        return None
    return act_on(step, e)


def act_on(step: PlanStep, e: UIElement) -> Action:
    """The action performing a targeted ``step`` on element ``e``."""
    k = step.kind
    x, y = e.center
    if k == "tap":
        return Action(action_type="click", x=x, y=y)
    if k == "long_press":
        return Action(action_type="long_press", x=x, y=y)
    if k == "type":
        return Action(action_type="input_text", text=step.text or "", x=x, y=y, clear_text=True)
    if k == "set_slider":
        return _swipe_for_slider(e, float(step.value or 0.0))
    raise ValueError(f"plan step kind={k!r} cannot be grounded")


def reveal(obs: Observation, direction: str = "down") -> Optional[Action]:
    """A scroll that may reveal an off-screen target (None if nothing scrolls)."""
    if not any(e.scrollable for e in obs.elements):
        return None
    return Action(action_type="scroll", direction=direction)  # type: ignore[arg-type]
