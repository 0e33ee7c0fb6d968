"""Translate an :class:`Action` into the shell commands that perform it on a phone.

Pure: the screen (size and the last observation's elements) and the Android
API level come in as arguments, the commands go out. Everything is checked
before the first command is built, so an impossible action raises
:class:`ActionError` with the phone untouched. ``open_app``, ``wait``,
``answer`` and ``status`` need the device itself and are handled by AdbDevice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from benchmark.device import SCROLL_FRACTION, ActionError
from benchmark.devices.adb import commands as cmd
from ttir.core.types import Action, UIElement

FOCUS_PAUSE_SECONDS = 0.4  # after tapping a field, before typing: the keyboard has to come up


@dataclass(frozen=True)
class Pause:
    """Wait on the host between two commands."""

    seconds: float


Step = Union[str, Pause]


@dataclass(frozen=True)
class Screen:
    """What the planner knows about the screen: its size in the current
    orientation and the elements of the last observation (None: not observed)."""

    size: tuple[int, int]
    elements: Optional[Sequence[UIElement]] = None


KEY_ACTIONS = {
    "navigate_back": "KEYCODE_BACK",
    "navigate_home": "KEYCODE_HOME",
    "app_switch": "KEYCODE_APP_SWITCH",
}


SdkLevel = Union[int, Callable[[], int]]


def plan(action: Action, screen: Screen, *, sdk: SdkLevel) -> list[Step]:
    """The commands (and pauses) for a GUI action. Raises ActionError if it cannot be done.

    ``sdk`` is the Android API level, or a function returning it (asked only when needed)."""
    t = action.action_type
    if t == "click":
        return [cmd.tap(*point(action, screen))]
    if t == "double_tap":
        return [cmd.double_tap(*point(action, screen))]
    if t == "long_press":
        x, y = point(action, screen)
        return [cmd.long_press(x, y, action.duration_ms if action.duration_ms is not None else cmd.LONG_PRESS_MS)]
    if t == "swipe":
        return [_swipe(action, screen)]
    if t == "scroll":
        return [_scroll(action, screen)]
    if t in KEY_ACTIONS:
        return [cmd.keyevent(KEY_ACTIONS[t])]
    if t == "keyboard_enter":
        code = action.keycode or "KEYCODE_ENTER"
        try:
            return [cmd.keyevent(code)]
        except ValueError as exc:
            raise ActionError(action, str(exc)) from exc
    if t == "input_text":
        return _input_text(action, screen, sdk)
    raise ActionError(action, f"action_type={t!r} is not performed with input commands")


def _in_screen(action: Action, x: int, y: int, screen: Screen, what: str = "point") -> None:
    w, h = screen.size
    if not (0 <= x < w and 0 <= y < h):
        raise ActionError(
            action, f"{what} ({x}, {y}) is off-screen; the screen is {w}x{h} (x in 0..{w - 1}, y in 0..{h - 1})"
        )


def target_element(action: Action, screen: Screen) -> Optional[UIElement]:
    """The element an index target names (ActionError if there is none), else None."""
    if action.index is None:
        return None
    if screen.elements is None:
        raise ActionError(action, "index targets refer to the last observation's elements; call observe() first")
    if action.index >= len(screen.elements):
        n = len(screen.elements)
        raise ActionError(
            action, f"index={action.index} is out of range: the screen has {n} elements (0..{max(0, n - 1)})"
        )
    return screen.elements[action.index]


def _visible_box(action: Action, el: UIElement, screen: Screen) -> tuple[int, int, int, int]:
    w, h = screen.size
    x1, y1, x2, y2 = el.bounds
    box = (max(0, x1), max(0, y1), min(w, x2), min(h, y2))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise ActionError(
            action, f"element {action.index} ({el.label or el.class_name}) has bounds {tuple(el.bounds)}, nothing of "
            f"which is on the {w}x{h} screen"
        )
    return box


def point(action: Action, screen: Screen) -> tuple[int, int]:
    """The screen point a touch targets: x/y, or the centre of the visible part of ``elements[index]``."""
    el = target_element(action, screen)
    if el is not None:
        x1, y1, x2, y2 = _visible_box(action, el, screen)
        return (x1 + x2) // 2, (y1 + y2) // 2
    if action.x is None or action.y is None:
        raise ActionError(action, "needs a target: x and y, or index")
    _in_screen(action, action.x, action.y, screen)
    return action.x, action.y


def _swipe(action: Action, screen: Screen) -> str:
    assert action.x is not None and action.y is not None and action.x2 is not None and action.y2 is not None
    _in_screen(action, action.x, action.y, screen, "swipe start")
    _in_screen(action, action.x2, action.y2, screen, "swipe end")
    ms = action.duration_ms if action.duration_ms is not None else cmd.SWIPE_MS
    return cmd.swipe(action.x, action.y, action.x2, action.y2, ms)


def _scrollable_at(screen: Screen, at: Optional[tuple[int, int]]) -> Optional[UIElement]:
    """The list a scroll moves: the scrollable element under ``at``, else the largest one
    (the simulator picks the same one, so a scroll means the same on every device)."""
    pool = [e for e in screen.elements or () if e.scrollable and e.area > 0]
    if at is not None:
        pool = [e for e in reversed(pool) if e.contains(*at)]
        return pool[0] if pool else None
    return max(pool, key=lambda e: e.area, default=None)


def _scroll(action: Action, screen: Screen) -> str:
    """A swipe that moves the content SCROLL_FRACTION of the scrolling area's size, towards the
    edge the content should come from: scrolling *down* reveals what is below, so the finger
    moves up (AndroidWorld's convention). The area is the targeted element, else the
    scrollable list under x/y or the largest one on screen, else the whole screen."""
    w, h = screen.size
    el = target_element(action, screen)
    at: Optional[tuple[int, int]] = point(action, screen) if el is None and action.x is not None else None
    area = el if el is not None else _scrollable_at(screen, at)
    x1, y1, x2, y2 = _visible_box(action, area, screen) if area is not None else (0, 0, w, h)
    cx, cy = at or ((x1 + x2) // 2, (y1 + y2) // 2)
    dx, dy = int(round((x2 - x1) * SCROLL_FRACTION)), int(round((y2 - y1) * SCROLL_FRACTION))
    if at is None:  # centred in the area: from 80 % to 20 % of it for a downward scroll
        cx, cy = {"down": (cx, cy + dy // 2), "up": (cx, cy - dy // 2),
                  "right": (cx + dx // 2, cy), "left": (cx - dx // 2, cy)}[action.direction or "down"]
    ex, ey = {"down": (cx, cy - dy), "up": (cx, cy + dy), "right": (cx - dx, cy), "left": (cx + dx, cy)}[
        action.direction or "down"]
    clamp = lambda v, hi: max(0, min(hi - 1, v))  # noqa: E731
    return cmd.swipe(clamp(cx, w), clamp(cy, h), clamp(ex, w), clamp(ey, h), cmd.SCROLL_MS)


def _focused(elements: Sequence[UIElement]) -> Optional[UIElement]:
    focused = [e for e in elements if e.focused]
    return next((e for e in focused if e.editable), focused[0] if focused else None)


def _input_text(action: Action, screen: Screen, sdk: SdkLevel) -> list[Step]:
    text = action.text or ""
    try:
        typing = cmd.text_commands(text)
    except cmd.UntypeableText as exc:
        raise ActionError(action, str(exc)) from exc
    steps: list[Step] = []
    field: Optional[UIElement] = None
    if action.index is not None or action.x is not None:
        x, y = point(action, screen)
        steps += [cmd.tap(x, y), Pause(FOCUS_PAUSE_SECONDS)]
        field = target_element(action, screen)
        if field is None and screen.elements is not None:
            field = next((e for e in reversed(screen.elements) if e.editable and e.contains(x, y)), None)
    elif screen.elements is not None:
        field = _focused(screen.elements)
        if field is None:
            raise ActionError(
                action, "no text field is focused on the last observed screen; tap a field first or give "
                "index/x,y of one"
            )
    if action.clear_text:
        known = len(field.text) if field is not None and field.editable else None
        steps += cmd.clear_text_commands(sdk() if callable(sdk) else sdk, known)
    return steps + typing
