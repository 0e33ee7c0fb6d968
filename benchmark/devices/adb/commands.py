"""Exact shell command strings for driving Android over ``adb shell``.

Pure functions, no I/O: every string returned here is what the device's
``sh -c`` receives, so tests can pin them down exactly. Anything that ends up
inside a command (package names, key codes, setting names, typed text) is
validated or quoted here, so nothing an agent says can inject shell syntax.
"""

from __future__ import annotations

import re
import shlex
from typing import Optional

# Where `uiautomator dump` writes; /data/local/tmp is writable by the shell user on every version.
DUMP_PATH = "/data/local/tmp/ttir_window_dump.xml"
LONG_PRESS_MS = 1000  # well above Android's 400-500 ms long-press timeout
SWIPE_MS = 300  # `input swipe`'s own default
SCROLL_MS = 400  # slow enough to scroll by roughly the finger's travel, not fling far
TEXT_CHUNK = 32  # long `input text` strings can arrive out of order; type in short pieces
CLEAR_FALLBACK_DELETES = 64  # delete presses when the field's text length is unknown
KEYCOMBINATION_SDK = 33  # `input keycombination` (select-all via Ctrl+A) exists from Android 13

_KEYCODE = re.compile(r"^(KEYCODE_[A-Z0-9_]+|[0-9]{1,3})$")
_PACKAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
_ACTIVITY = re.compile(r"^\.?[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$")
_SETTING_KEY = re.compile(r"^[a-z][a-z0-9_]*$")
_SETTING_VALUE = re.compile(r"^[A-Za-z0-9_./:-]+$")
_NAMESPACES = ("system", "secure", "global")
TYPEABLE = frozenset(chr(c) for c in range(0x20, 0x7F))  # what `input text`'s virtual keymap can type
_TEXT_KEYS = {"\n": "KEYCODE_ENTER", "\t": "KEYCODE_TAB"}


class UntypeableText(ValueError):
    """Text that ``input text`` cannot type (it only knows printable ASCII)."""

    def __init__(self, text: str, bad: list[str]):
        self.bad = bad
        shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in bad)
        super().__init__(
            f"text={text!r} contains characters `adb shell input text` cannot type: {shown}; it only types "
            "printable ASCII (plus newline and tab as key presses). Type those characters some other way "
            "(e.g. paste them, or pick them on the on-screen keyboard)"
        )


# ---------------------------------------------------------------- validation


def check_keycode(code: str) -> str:
    if not _KEYCODE.match(code or ""):
        raise ValueError(f"keycode={code!r} is not a key code; expected a name like 'KEYCODE_ENTER' or a number")
    return code


def check_package(package: str) -> str:
    if not _PACKAGE.match(package or ""):
        raise ValueError(f"package={package!r} is not an Android package name; expected e.g. 'com.android.settings'")
    return package


def check_component(component: str) -> str:
    """``package/activity`` (activity absolute or starting with '.')."""
    pkg, sep, activity = (component or "").partition("/")
    if not sep or not _PACKAGE.match(pkg) or not _ACTIVITY.match(activity):
        raise ValueError(
            f"component={component!r} is not 'package/activity'; expected e.g. 'com.android.settings/.Settings'"
        )
    return component


def _check_setting(namespace: str, key: str, value: Optional[str] = None) -> None:
    if namespace not in _NAMESPACES:
        raise ValueError(f"namespace={namespace!r} is not a settings namespace; expected one of {', '.join(_NAMESPACES)}")
    if not _SETTING_KEY.match(key or ""):
        raise ValueError(f"key={key!r} is not a settings key; expected lowercase letters, digits and '_'")
    if value is not None and not _SETTING_VALUE.match(value):
        raise ValueError(f"value={value!r} for setting {key} must be a plain token (letters, digits, . / : _ -)")


def _coord(v: int, name: str) -> str:
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ValueError(f"{name}={v!r} must be a non-negative integer pixel coordinate")
    return str(v)


def _duration(ms: int) -> str:
    if not isinstance(ms, int) or not 0 <= ms <= 60000:
        raise ValueError(f"duration_ms={ms!r} must be an integer within 0..60000")
    return str(ms)


# ---------------------------------------------------------------- touch and keys


def tap(x: int, y: int) -> str:
    return f"input tap {_coord(x, 'x')} {_coord(y, 'y')}"


def swipe(x1: int, y1: int, x2: int, y2: int, duration_ms: int = SWIPE_MS) -> str:
    return (
        f"input swipe {_coord(x1, 'x')} {_coord(y1, 'y')} {_coord(x2, 'x2')} {_coord(y2, 'y2')} "
        f"{_duration(duration_ms)}"
    )


def long_press(x: int, y: int, duration_ms: int = LONG_PRESS_MS) -> str:
    """A press held in place: a swipe that does not move."""
    return swipe(x, y, x, y, duration_ms)


def double_tap(x: int, y: int) -> str:
    # One shell invocation, so the two taps are as close together as `input` allows.
    return f"{tap(x, y)} && {tap(x, y)}"


def keyevent(*codes: str) -> str:
    if not codes:
        raise ValueError("keyevent needs at least one key code")
    return "input keyevent " + " ".join(check_keycode(c) for c in codes)


def keycombination(*codes: str) -> str:
    if len(codes) < 2:
        raise ValueError(f"keycombination needs at least two key codes, got {list(codes)}")
    return "input keycombination " + " ".join(check_keycode(c) for c in codes)


# ---------------------------------------------------------------- text


def untypeable(text: str) -> list[str]:
    """The distinct characters of ``text`` that ``input text`` cannot produce, in order."""
    bad: list[str] = []
    for c in text:
        if c not in TYPEABLE and c not in _TEXT_KEYS and c not in bad:
            bad.append(c)
    return bad


def _input_text_args(line: str) -> list[str]:
    """`input text` arguments for one line of printable ASCII.

    Spaces become ``%s`` (input's own escape for a space). ``input`` has no way
    to type a literal ``%s``, so the text is split right after such a ``%``
    and the ``s`` starts the next argument; long lines are cut into short
    pieces, never inside a ``%s`` token.
    """
    pieces: list[str] = []
    current = ""
    size = 0
    for i, c in enumerate(line):
        token = "%s" if c == " " else c
        must_split = c == "s" and current.endswith("%") and not current.endswith("%s")
        if current and (must_split or size >= TEXT_CHUNK):
            pieces.append(current)
            current, size = "", 0
        current += token
        size += 1
    if current:
        pieces.append(current)
    return pieces


def text_commands(text: str) -> list[str]:
    """Shell commands that type ``text`` into the focused field.

    Raises :class:`UntypeableText` for characters `input text` cannot type
    (anything outside printable ASCII, except newline/tab, which are sent
    as Enter/Tab key presses).
    """
    bad = untypeable(text)
    if bad:
        raise UntypeableText(text, bad)
    commands: list[str] = []
    line = ""
    for c in text:
        if c in _TEXT_KEYS:
            commands.extend(f"input text {shlex.quote(a)}" for a in _input_text_args(line))
            commands.append(keyevent(_TEXT_KEYS[c]))
            line = ""
        else:
            line += c
    commands.extend(f"input text {shlex.quote(a)}" for a in _input_text_args(line))
    return commands


def clear_text_commands(sdk: int, known_length: Optional[int] = None) -> list[str]:
    """Empty the focused field: select-all + delete where the shell can send Ctrl+A,
    else move to the end and press delete once per character (plus a margin)."""
    if sdk >= KEYCOMBINATION_SDK:
        return [keycombination("KEYCODE_CTRL_LEFT", "KEYCODE_A"), keyevent("KEYCODE_DEL")]
    n = CLEAR_FALLBACK_DELETES if known_length is None else min(256, known_length + 4)
    return [keyevent("KEYCODE_MOVE_END", *(["KEYCODE_DEL"] * n))]


# ---------------------------------------------------------------- apps


def launch_package(package: str) -> str:
    return f"monkey -p {check_package(package)} -c android.intent.category.LAUNCHER 1"


def launch_component(component: str) -> str:
    return f"am start -n {shlex.quote(check_component(component))}"


LIST_PACKAGES = "pm list packages"


# ---------------------------------------------------------------- observation

SCREENCAP = "screencap -p"
UI_DUMP = f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH} && cat {DUMP_PATH}"
FOREGROUND_WINDOW = "dumpsys window windows | grep -E 'mCurrentFocus|mFocusedApp'"
FOREGROUND_ACTIVITY = "dumpsys activity activities | grep -E 'mResumedActivity|ResumedActivity'"
DISPLAY_CURRENT = "dumpsys window displays | grep -E 'cur='"
SDK_LEVEL = "getprop ro.build.version.sdk"


# ---------------------------------------------------------------- settings


def settings_get(namespace: str, key: str) -> str:
    _check_setting(namespace, key)
    return f"settings get {namespace} {key}"


def settings_put(namespace: str, key: str, value: str) -> str:
    _check_setting(namespace, key, value)
    return f"settings put {namespace} {key} {value}"


def settings_delete(namespace: str, key: str) -> str:
    _check_setting(namespace, key)
    return f"settings delete {namespace} {key}"


NAVBAR_OVERLAYS = {  # the overlays that switch Android's navigation mode (Settings > System > Navigation)
    "0": "com.android.internal.systemui.navbar.threebutton",
    "1": "com.android.internal.systemui.navbar.twobutton",
    "2": "com.android.internal.systemui.navbar.gestural",
}


def navigation_overlay(mode: str) -> str:
    """Switch navigation to ``mode`` (secure ``navigation_mode``: 0 three-button, 1 two-button,
    2 gestures) by enabling its overlay exclusively, as the Settings app does."""
    if mode not in NAVBAR_OVERLAYS:
        raise ValueError(f"navigation_mode={mode!r} must be one of {', '.join(NAVBAR_OVERLAYS)}")
    return f"cmd overlay enable-exclusive --category {NAVBAR_OVERLAYS[mode]}"


WM_SIZE = "wm size"
WM_DENSITY = "wm density"
NIGHT_MODE = "cmd uimode night"
_NIGHT_WORDS = ("yes", "no", "auto", "custom")


def wm_size(size: Optional[tuple[int, int]]) -> str:
    """``wm size WxH``, or ``wm size reset`` for ``None`` (back to the physical size)."""
    if size is None:
        return "wm size reset"
    w, h = size
    if not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
        raise ValueError(f"size={size!r} must be two positive integers (width, height)")
    return f"wm size {w}x{h}"


def wm_density(dpi: Optional[int]) -> str:
    """``wm density N``, or ``wm density reset`` for ``None`` (back to the physical density)."""
    if dpi is None:
        return "wm density reset"
    if not isinstance(dpi, int) or not 72 <= dpi <= 1200:
        raise ValueError(f"density={dpi!r} must be an integer dpi within 72..1200")
    return f"wm density {dpi}"


def night_mode(word: str) -> str:
    if word not in _NIGHT_WORDS:
        raise ValueError(f"night mode={word!r} is not one of {', '.join(_NIGHT_WORDS)}")
    return f"cmd uimode night {word}"


# ---------------------------------------------------------------- ttir served phones (`ttir serve-adb`)

TTIR_VERSION = "cmd ttir version"
TTIR_TASK_VERIFY = "cmd ttir task verify"
TTIR_EVENTS = "cmd ttir events"
TTIR_APPS = "cmd ttir apps"
_TASK_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def ttir_task_setup(name: str, seed: int, digest: str) -> str:
    """Ask a served phone to factory-reset and set up task ``name`` (rebuilt from its instance seed)."""
    if not _TASK_NAME.match(name or ""):
        raise ValueError(f"task name={name!r} must be a task class name (letters, digits, '_')")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a non-negative integer instance seed")
    if not re.fullmatch(r"[0-9a-f]{16}", digest or ""):
        raise ValueError(f"digest={digest!r} must be 16 lowercase hex digits")
    return f"cmd ttir task setup {name} {seed} {digest}"


def join(*commands: str) -> str:
    """Several commands in one shell invocation, stopping at the first failure."""
    return " && ".join(commands)
