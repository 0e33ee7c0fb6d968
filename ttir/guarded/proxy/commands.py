"""What an agent's shell command line does to the screen: its ``input`` commands read as
:class:`~ttir.core.types.Action` records (the guard's history speaks Actions).

- :func:`input_actions` — the actions of a command line's ``input`` commands (``tap``,
  ``swipe``, ``text``, ``keyevent``, ``press``, ``draganddrop``), or None when the line
  runs no ``input`` at all;
- :func:`reads_screen` — whether a command line may print a UI dump (``uiautomator
  dump``, ``cat`` of a file), so the proxy keeps its reply; :func:`dumps_screen` — whether
  it takes a dump;
- :func:`changes_screen` — whether it may change what is on screen (anything but the
  read-only tools of ``READ_ONLY``), so a screen pulled before it is no longer fresh.

Text from a client is hostile: lines are bounded (``MAX_LINE``), split with ``shlex``
(never run), and what cannot be read is None or an empty list, never an exception.
"""

from __future__ import annotations

import math
import shlex
from typing import Optional

from ttir.core.types import Action

MAX_LINE = 64 * 1024  # the transport's bound on a service name
INPUT_SOURCES = {"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "stylus", "dpad",
                 "gesture", "touchscreen", "gamepad", "rotaryencoder"}
KEY_ACTIONS = {"BACK": "navigate_back", "HOME": "navigate_home", "APP_SWITCH": "app_switch", "ENTER": "keyboard_enter"}
TAP_SLOP_PX = 20  # a swipe that moves less than this is a press in place
LONG_PRESS_MS = 400
_SEPARATORS = {";", "&&", "||", "|", "&", "\n"}
READ_ONLY = frozenset({"screencap", "uiautomator", "cat", "ls", "getprop", "dumpsys", "echo", "rm", "stat", "date",
                       "true", "test", "ps", "id", "whoami", "head", "tail", "grep", "wc", "sleep", "base64"})


def _segments(line: str) -> list[list[str]]:
    """The simple commands of ``line`` (split at ``;``, ``&&``, ``||``, ``|``, ``&``), as words."""
    lexer = shlex.shlex(line[:MAX_LINE].replace("\n", ";"), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SEPARATORS or set(token) <= set(";&|"):
                out.append([])
            else:
                out[-1].append(token)
    except ValueError:  # an unclosed quote: what was read so far
        pass
    return [words for words in out if words]


def _int(text: str) -> Optional[int]:
    try:
        v = float(text)
    except ValueError:
        return None
    return int(v) if math.isfinite(v) and abs(v) < 1e7 else None


def _one(words: list[str]) -> Optional[Action]:
    """One ``input`` command's words (after ``input``) as an Action; None when it is not one."""
    while words and (words[0] in INPUT_SOURCES or words[0] == "-d"):
        words = words[2:] if words[0] == "-d" else words[1:]
    if not words:
        return None
    verb, args = words[0], words[1:]
    nums = [_int(a) for a in args]
    try:
        if verb == "tap" and len(nums) >= 2 and None not in nums[:2]:
            return Action(action_type="click", x=max(0, nums[0]), y=max(0, nums[1]))
        if verb in ("swipe", "draganddrop") and len(nums) >= 4 and None not in nums[:4]:
            x1, y1, x2, y2 = (max(0, n) for n in nums[:4])  # type: ignore[type-var]
            ms = nums[4] if len(nums) > 4 and nums[4] is not None else 300
            if math.hypot(x2 - x1, y2 - y1) < TAP_SLOP_PX:
                if ms >= LONG_PRESS_MS:
                    return Action(action_type="long_press", x=x1, y=y1, duration_ms=min(ms, 60000))
                return Action(action_type="click", x=x1, y=y1)
            return Action(action_type="swipe", x=x1, y=y1, x2=x2, y2=y2, duration_ms=max(0, min(ms, 60000)))
        if verb == "text" and args:
            return Action(action_type="input_text", text=" ".join(args).replace("%s", " "))
        if verb in ("keyevent", "press"):
            codes = [a for a in args if not a.startswith("--")] or (["KEYCODE_DPAD_CENTER"] if verb == "press" else [])
            if not codes:
                return None
            name = codes[0].upper().removeprefix("KEYCODE_")
            kind = KEY_ACTIONS.get(name) or {"4": "navigate_back", "3": "navigate_home", "187": "app_switch",
                                              "66": "keyboard_enter"}.get(name)
            if kind == "keyboard_enter" or kind is None:
                return Action(action_type="keyboard_enter", keycode=f"KEYCODE_{name}" if not name.isdigit() else None)
            return Action(action_type=kind)
    except ValueError:  # an Action the validators refuse (a key code they do not know …)
        return None
    return None


def input_actions(line: str) -> Optional[list[Action]]:
    """The actions of the ``input`` commands in a shell command line.

    Args:
        line: what the agent asked the device to run (``input tap 540 1200``,
            ``input tap 1 2 && input tap 1 2``, ``/system/bin/input swipe …``).

    Returns:
        None when no simple command of the line is ``input``; else the actions read from
        them, in order (an ``input`` command that cannot be read adds nothing, so the list
        may be empty).
    """
    found: Optional[list[Action]] = None
    for words in _segments(line):
        if words[0].rsplit("/", 1)[-1] != "input":
            continue
        found = found if found is not None else []
        action = _one(words[1:])
        if action is not None:
            found.append(action)
    return found


def reads_screen(line: str) -> bool:
    """Whether ``line`` may print a UI dump: it runs ``uiautomator`` or ``cat``.

    Args:
        line: a shell command line.

    Returns:
        True when one of its simple commands is ``uiautomator`` or ``cat``.
    """
    return any(words[0].rsplit("/", 1)[-1] in ("uiautomator", "cat") for words in _segments(line))


def dumps_screen(line: str) -> bool:
    """Whether ``line`` runs ``uiautomator dump`` (a fresh dump of the screen)."""
    return any(words[0].rsplit("/", 1)[-1] == "uiautomator" and "dump" in words[1:3] for words in _segments(line))


def changes_screen(line: str) -> bool:
    """Whether ``line`` may change the screen: one of its simple commands is not in ``READ_ONLY``
    (``am start``, ``monkey``, ``settings put``, ``input`` …).

    Args:
        line: a shell command line.

    Returns:
        False only when every simple command is a read-only tool.
    """
    segments = _segments(line)
    return not segments or any(words[0].rsplit("/", 1)[-1] not in READ_ONLY for words in segments)


__all__ = ["READ_ONLY", "changes_screen", "dumps_screen", "input_actions", "reads_screen"]
