"""Parsers for the text Android's shell tools print. Pure functions, robust to
the wording differences between Android versions (fixtures: tests/fixtures/adb/)."""

from __future__ import annotations

import re
from typing import Optional

# `pkg/activity` as dumpsys prints components (activity may be relative: `.Settings`).
_COMPONENT = r"(?P<pkg>[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)/(?P<act>[A-Za-z0-9_.$]+)"
_CURRENT_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*?\s" + _COMPONENT + r"\}")
_FOCUSED_APP = re.compile(r"mFocusedApp=.*?ActivityRecord\{\S+\s+u\d+\s+" + _COMPONENT)
_RESUMED = re.compile(r"(?:mResumedActivity|ResumedActivity)[:=]\s*ActivityRecord\{\S+\s+u\d+\s+" + _COMPONENT)


def _component(m: re.Match[str]) -> str:
    pkg, act = m.group("pkg"), m.group("act")
    if act.startswith("."):
        act = pkg + act  # dumpsys abbreviates activities inside their own package
    return f"{pkg}/{act}"


def parse_foreground(window_dump: str, activity_dump: str = "") -> Optional[str]:
    """The foreground ``package/activity`` from ``dumpsys window`` (and, as a
    fallback, ``dumpsys activity activities``) output; ``None`` if neither says.

    The focused window wins (a permission dialog on top of an app is what the
    user sees); when it is not an activity window (status bar, a pop-up, an
    ANR dialog, ``null`` during a transition) the focused app is used.
    """
    for pattern, text in ((_CURRENT_FOCUS, window_dump), (_FOCUSED_APP, window_dump), (_RESUMED, activity_dump)):
        m = pattern.search(text or "")
        if m:
            return _component(m)
    return None


def parse_wm_size(output: str) -> tuple[tuple[int, int], Optional[tuple[int, int]]]:
    """``wm size`` → (physical size, override size or None)."""
    phys = re.search(r"Physical size:\s*(\d+)x(\d+)", output or "")
    if not phys:
        raise ValueError(f"`wm size` printed {output!r}; expected a line 'Physical size: WxH'")
    over = re.search(r"Override size:\s*(\d+)x(\d+)", output)
    physical = (int(phys.group(1)), int(phys.group(2)))
    return physical, ((int(over.group(1)), int(over.group(2))) if over else None)


def parse_wm_density(output: str) -> tuple[int, Optional[int]]:
    """``wm density`` → (physical dpi, override dpi or None)."""
    phys = re.search(r"Physical density:\s*(\d+)", output or "")
    if not phys:
        raise ValueError(f"`wm density` printed {output!r}; expected a line 'Physical density: N'")
    over = re.search(r"Override density:\s*(\d+)", output)
    return int(phys.group(1)), (int(over.group(1)) if over else None)


def parse_night_mode(output: str) -> str:
    """``cmd uimode night`` → yes / no / auto / custom."""
    m = re.search(r"Night mode:\s*(\w+)", output or "")
    if not m:
        raise ValueError(f"`cmd uimode night` printed {output!r}; expected 'Night mode: yes|no|auto'")
    return m.group(1).lower()


def parse_setting(output: str) -> Optional[str]:
    """``settings get`` → the value, or ``None`` when the key is unset (``null``)."""
    text = (output or "").strip()
    if not text or text == "null":
        return None
    if "\n" in text or "Exception" in text or text.startswith(("Error", "usage:", "Invalid")):
        raise ValueError(f"`settings get` printed {text!r}; expected a single value or 'null'")
    return text


def parse_current_display(output: str) -> Optional[tuple[int, int]]:
    """The rotated logical size from ``dumpsys window displays`` (``cur=WxH``)."""
    m = re.search(r"\bcur=(\d+)x(\d+)", output or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def parse_sdk(output: str) -> int:
    text = (output or "").strip()
    if not text.isdigit():
        raise ValueError(f"`getprop ro.build.version.sdk` printed {text!r}; expected an API level number")
    return int(text)


def parse_packages(output: str) -> set[str]:
    """``pm list packages`` → the set of package names."""
    return {line.split(":", 1)[1].strip() for line in (output or "").splitlines() if line.startswith("package:")}


def extract_dump(output: str) -> Optional[str]:
    """The XML document from ``uiautomator dump … && cat …`` output (which starts
    with a status line); ``None`` when the dump failed."""
    text = output or ""
    start = text.find("<?xml")
    if start == -1:
        start = text.find("<hierarchy")
    end = text.rfind("</hierarchy>")
    if start == -1 or end == -1:
        return None
    return text[start : end + len("</hierarchy>")]


def command_failed(output: str) -> Optional[str]:
    """The error message if a shell tool's output reports a failure, else ``None``.

    ``input``, ``settings``, ``wm``, ``am`` and ``monkey`` often exit 0 and print
    the problem instead, so the text is what tells success from failure.
    """
    for line in (output or "").splitlines():
        s = line.strip()
        if (
            "Exception" in s
            or s.startswith(("Error", "error:", "Unknown command", "Bad argument", "usage:", "Usage:"))
            or "monkey aborted" in s
            or "No activities found" in s
            or "Security exception" in s
            or "not found" in s
        ):
            return output.strip()
    return None


# Messages the adb server sends back, and what each means for the user.
def explain_adb_error(message: str, serial: Optional[str]) -> Optional[tuple[str, bool]]:
    """(plain-words explanation, retry might help) for an adb error, or None if unrecognised."""
    who = f"device {serial}" if serial else "the device"
    low = (message or "").lower()
    if "unauthorized" in low:
        return (
            f"{who} is unauthorised: unlock the phone and accept the 'Allow USB debugging?' prompt (tick "
            "'Always allow from this computer'). No prompt? Revoke USB debugging authorisations in Developer "
            "options, then unplug and replug the cable.",
            False,
        )
    if "offline" in low:
        return (
            f"{who} is offline: unplug and replug the cable (or run `adb reconnect`), keep the phone unlocked "
            "with USB debugging on; an emulator is offline until it has finished booting.",
            True,
        )
    if "not found" in low or "no devices" in low or "can't find" in low:
        return (
            f"{who} is not attached: check the cable and that `adb devices` lists it; for Wi-Fi debugging "
            "run `adb connect HOST:PORT` first.",
            True,
        )
    return None
