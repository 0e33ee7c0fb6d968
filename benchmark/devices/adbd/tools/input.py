"""``input``: touches and keys on the served phone, as Actions on its Device.

``tap`` is a click; ``swipe`` a swipe, or a long press when the finger does not
move and stays down past the long-press timeout; keys map to the navigation
actions, the keyboard's Enter and Delete, typing, and Ctrl+A (select all: the
next Delete or text replaces the field's text). What a real phone would
ignore (a tap off-screen, text with no field focused) does nothing.
"""

from __future__ import annotations

import math
from typing import Any

from benchmark.devices.adbd.sh import Call
from benchmark.devices.adbd.text import text
from ttir.core.types import Action

SOURCES = {"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus", "dpad",
           "gesture", "touchscreen", "gamepad", "rotaryencoder"}
LONG_PRESS_MS = 400  # ViewConfiguration.getLongPressTimeout() since Android 12
TOUCH_SLOP_DP = 8  # ViewConfiguration's touch slop: less movement than this is no swipe
DEFAULT_SWIPE_MS = 300
KEY_ACTIONS = {"HOME": "navigate_home", "BACK": "navigate_back", "APP_SWITCH": "app_switch", "ENTER": "keyboard_enter"}


class BadArguments(ValueError):
    pass


def key_name(phone: Any, code: str) -> str:
    """``KEYCODE_BACK`` / ``BACK`` / ``4`` -> ``BACK``."""
    table: dict[str, int] = phone.data.keycodes
    name = code.upper().removeprefix("KEYCODE_")
    if name in table and not code.isdigit():
        return name
    if code.isdigit():
        for k, v in table.items():
            if v == int(code):
                return k
        return code
    raise BadArguments(f"Unknown keycode: {code}")


def _number(text: str) -> int:
    try:
        v = float(text)
    except ValueError as exc:
        raise BadArguments(f"not a number: {text}") from exc
    if not math.isfinite(v):
        raise BadArguments(f"not a number: {text}")
    return int(v)


def tap(phone: Any, x: int, y: int) -> None:
    phone.keyboard.selected_all = False
    if x >= 0 and y >= 0:
        phone.act(Action(action_type="click", x=x, y=y))


def swipe(phone: Any, x1: int, y1: int, x2: int, y2: int, ms: int) -> None:
    phone.keyboard.selected_all = False
    if min(x1, y1, x2, y2) < 0:
        return
    slop = TOUCH_SLOP_DP * phone.sim.metrics().px_per_dp
    if math.hypot(x2 - x1, y2 - y1) < slop:
        if ms >= LONG_PRESS_MS:
            phone.act(Action(action_type="long_press", x=x1, y=y1, duration_ms=min(ms, 60000)))
        else:
            phone.act(Action(action_type="click", x=x1, y=y1))
        return
    phone.act(Action(action_type="swipe", x=x1, y=y1, x2=x2, y2=y2, duration_ms=min(ms, 60000)))


def type_text(phone: Any, chars: str) -> None:
    """Type into the focused field (Ctrl+A before: replace its text)."""
    replace, phone.keyboard.selected_all = phone.keyboard.selected_all, False
    if getattr(phone.sim, "focus", None) is None or not chars:
        return
    if phone.device is not phone.sim:  # perturbations served with the phone see the typing as an action
        phone.act(Action(action_type="input_text", text=chars, clear_text=True if replace else None))
        return
    # the keyboard's keystrokes, no frame in between: the field is revealed once, with its new text,
    # as when the simulator types in one action (an extra frame would scroll by the suggestion strip)
    if replace:
        phone.sim.clear_text()
    phone.sim.type_text(chars)


def clear_field(phone: Any) -> None:
    """Delete after Ctrl+A: the focused field's text goes."""
    if getattr(phone.sim, "focus", None) is None:
        return
    if phone.device is not phone.sim:
        phone.act(Action(action_type="input_text", text="", clear_text=True))
    else:
        phone.sim.clear_text()


def key(phone: Any, name: str) -> None:
    if name in KEY_ACTIONS:
        phone.keyboard.selected_all = False
        phone.act(Action(action_type=KEY_ACTIONS[name]))
    elif name == "DEL":
        if phone.keyboard.selected_all:
            phone.keyboard.selected_all = False
            clear_field(phone)
        else:
            phone.sim.delete_char()
    elif name == "SPACE":
        type_text(phone, " ")
    elif len(name) == 1 and name.isalnum():
        type_text(phone, name.lower())
    elif name == "NOTIFICATION":
        phone.keyboard.selected_all = False
        phone.sim.open_shade()
    # other keys (volume, power, cursor movement, Tab …) change nothing the simulated phone shows


def input_tool(phone: Any, call: Call) -> int:
    args = list(call.argv[1:])
    if args and args[0] in SOURCES:
        args = args[1:]
    if len(args) >= 2 and args[0] == "-d":
        args = args[2:]
    if not args:
        call.err += text("input_usage")
        return 1
    command, rest = args[0], args[1:]
    try:
        if command == "tap":
            if len(rest) != 2:
                raise BadArguments("tap needs <x> <y>")
            tap(phone, _number(rest[0]), _number(rest[1]))
        elif command == "swipe":
            if len(rest) not in (4, 5):
                raise BadArguments("swipe needs <x1> <y1> <x2> <y2> [duration(ms)]")
            ms = _number(rest[4]) if len(rest) == 5 else DEFAULT_SWIPE_MS
            swipe(phone, *(_number(v) for v in rest[:4]), max(0, ms))
        elif command == "text":
            if not rest:
                raise BadArguments("text needs <string>")
            type_text(phone, rest[0].replace("%s", " "))  # as on a phone: one argument
        elif command == "keyevent":
            codes = [c for c in rest if c not in ("--longpress", "--doubletap", "--async", "--delay")]
            if not codes:
                raise BadArguments("keyevent needs at least one key code")
            names = [key_name(phone, c) for c in codes]
            for name in names * (2 if "--doubletap" in rest else 1):
                key(phone, name)
        elif command == "keycombination":
            codes = rest[2:] if rest[:1] == ["-t"] else rest
            if len(codes) < 2:
                raise BadArguments("keycombination needs at least two key codes")
            names = {key_name(phone, c) for c in codes}
            if names & {"CTRL_LEFT", "CTRL_RIGHT"} and "A" in names:
                phone.keyboard.selected_all = getattr(phone.sim, "focus", None) is not None
        else:
            call.err += f"Error: Unknown command: {command}\n".encode() + text("input_usage")
            return 1
    except BadArguments as exc:
        call.err += f"Error: Invalid arguments for command: {command} ({exc})\n".encode() + text("input_usage")
        return 1
    return 0


TOOLS: dict[str, Any] = {"input": input_tool}
