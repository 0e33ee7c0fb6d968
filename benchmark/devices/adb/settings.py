"""The state knobs on a real phone: which device state each knob touches, how
to read and write it, and a snapshot of the originals that can always be put
back (also by a later process, from a journal file, if this one was killed).

Each knob maps to one or more *states* (a system setting, the ``wm`` size or
density override, the night mode). A state's raw value is a string, or
``None`` for "unset / no override"; writing ``None`` deletes the setting or
resets the override, so restoring is writing the original back.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from loguru import logger

from benchmark.device import DeviceSettings
from benchmark.devices.adb import commands as cmd
from benchmark.devices.adb.parse import parse_night_mode, parse_setting, parse_wm_density, parse_wm_size

SYSTEM_SETTINGS = (
    "font_scale",
    "accelerometer_rotation",
    "user_rotation",
    "time_12_24",
    "date_format",
    "screen_brightness_mode",
    "screen_brightness",
)
SECURE_SETTINGS = ("navigation_mode",)
STATES = (*SYSTEM_SETTINGS, "system_locales", *SECURE_SETTINGS, "wm_density", "wm_size", "night_mode")

KNOB_STATES: dict[str, tuple[str, ...]] = {
    "font_scale": ("font_scale",),
    "density_scale": ("wm_density",),
    "size_scale": ("wm_size",),
    "dark_theme": ("night_mode",),
    "orientation": ("accelerometer_rotation", "user_rotation"),
    "time_format": ("time_12_24",),
    "date_format": ("date_format",),
    "brightness": ("screen_brightness_mode", "screen_brightness"),
    "navigation_mode": ("navigation_mode",),
    "locale": ("system_locales",),
}
NAVIGATION_MODES = {"three_button": "0", "gesture": "2"}

DATE_PATTERNS = {"US": "MM/dd/yyyy", "EU": "dd/MM/yyyy"}
BEST_EFFORT = {
    "date_format": "Android 8 and later format dates from the locale and ignore the date_format setting; "
    "it is written (and restored) but has no visible effect there",
    "locale": "system_locales is written (and restored); apps pick the new language up when they restart, "
    "and some builds only after a reboot",
}


@dataclass(frozen=True)
class Display:
    """The phone's physical screen, the base the scale knobs multiply."""

    size: tuple[int, int]
    density: int

    @property
    def natural_landscape(self) -> bool:
        return self.size[0] > self.size[1]

    @classmethod
    def parse(cls, wm_size_output: str, wm_density_output: str) -> "Display":
        return cls(parse_wm_size(wm_size_output)[0], parse_wm_density(wm_density_output)[0])


# ---------------------------------------------------------------- read / write one state


def read_command(state: str) -> str:
    if state in SYSTEM_SETTINGS or state == "system_locales":
        return cmd.settings_get("system", state)
    if state in SECURE_SETTINGS:
        return cmd.settings_get("secure", state)
    return {"wm_density": cmd.WM_DENSITY, "wm_size": cmd.WM_SIZE, "night_mode": cmd.NIGHT_MODE}[_known(state)]


def parse_state(state: str, output: str) -> Optional[str]:
    """A state's raw value from its read command's output (ValueError if unreadable)."""
    if state in SYSTEM_SETTINGS or state in SECURE_SETTINGS or state == "system_locales":
        return parse_setting(output)
    if state == "wm_density":
        return _opt_str(parse_wm_density(output)[1])
    if state == "wm_size":
        over = parse_wm_size(output)[1]
        return f"{over[0]}x{over[1]}" if over else None
    if state == "night_mode":
        return parse_night_mode(output)
    raise ValueError(_unknown(state))


def write_command(state: str, raw: Optional[str]) -> str:
    """The command that sets a state to ``raw`` (``None``: unset / reset the override)."""
    if state in SYSTEM_SETTINGS or state == "system_locales":
        return cmd.settings_delete("system", state) if raw is None else cmd.settings_put("system", state, raw)
    if state == "navigation_mode":  # a read-only mirror of the active navbar overlay: switch the overlay
        return cmd.navigation_overlay(raw or "0")
    if state == "wm_density":
        return cmd.wm_density(None if raw is None else int(raw))
    if state == "wm_size":
        if raw is None:
            return cmd.wm_size(None)
        m = re.fullmatch(r"(\d+)x(\d+)", raw)
        if not m:
            raise ValueError(f"wm_size={raw!r} must look like '1080x2400'")
        return cmd.wm_size((int(m.group(1)), int(m.group(2))))
    if state == "night_mode":
        return cmd.night_mode(raw or "no")
    raise ValueError(_unknown(state))


def _known(state: str) -> str:
    if state not in STATES:
        raise ValueError(_unknown(state))
    return state


def _unknown(state: str) -> str:
    return f"state={state!r} is not a device state; known: {', '.join(STATES)}"


def _opt_str(v: Optional[int]) -> Optional[str]:
    return None if v is None else str(v)


def _float(v: float) -> str:
    return str(round(float(v), 3))


# ---------------------------------------------------------------- knobs


def knob_targets(knob: str, value: Any, display: Display) -> dict[str, Optional[str]]:
    """The raw state values that put ``knob`` at ``value``, in the order to write them."""
    if knob == "font_scale":
        return {"font_scale": _float(value)}
    if knob == "density_scale":
        return {"wm_density": None if float(value) == 1.0 else str(int(round(display.density * float(value))))}
    if knob == "size_scale":
        if float(value) == 1.0:
            return {"wm_size": None}
        w, h = (int(round(v * float(value))) for v in display.size)
        return {"wm_size": f"{w}x{h}"}
    if knob == "dark_theme":
        return {"night_mode": "yes" if value else "no"}
    if knob == "orientation":
        # user_rotation counts quarter turns from the natural orientation (landscape on some tablets)
        turned = (value == "landscape") != display.natural_landscape
        return {"accelerometer_rotation": "0", "user_rotation": "1" if turned else "0"}
    if knob == "time_format":
        return {"time_12_24": str(int(value))}
    if knob == "date_format":
        return {"date_format": DATE_PATTERNS[value]}
    if knob == "brightness":
        return {"screen_brightness_mode": "0", "screen_brightness": str(int(value))}
    if knob == "navigation_mode":
        return {"navigation_mode": NAVIGATION_MODES[value]}
    if knob == "locale":
        return {"system_locales": str(value)}
    raise ValueError(f"knob={knob!r} is not a device setting; known: {', '.join(KNOB_STATES)}")


def knob_commands(knob: str, value: Any, display: Display) -> list[str]:
    return [write_command(s, raw) for s, raw in knob_targets(knob, value, display).items()]


def same_value(state: str, a: Optional[str], b: Optional[str]) -> bool:
    """Whether two raw values of a state mean the same thing (``1.0`` == ``1``)."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def settings_from_states(states: dict[str, Optional[str]], display: Display) -> DeviceSettings:
    """What the phone's current raw states mean as :class:`DeviceSettings` (best effort:
    values the knobs cannot express are clamped, unknowns fall back to defaults)."""
    d: dict[str, Any] = {}
    d["font_scale"] = _clamp(_number(states.get("font_scale"), 1.0), 0.31, 3.0)
    dens = _number(states.get("wm_density"), 0)
    d["density_scale"] = _clamp(dens / display.density if dens else 1.0, 0.31, 3.0)
    width = _number((states.get("wm_size") or "").split("x")[0], 0)
    d["size_scale"] = _clamp(width / display.size[0] if width else 1.0, 0.31, 1.5)
    d["dark_theme"] = states.get("night_mode") == "yes"
    locked = states.get("accelerometer_rotation") == "0"
    turned = locked and states.get("user_rotation") in ("1", "3")
    landscape = turned != display.natural_landscape if locked else display.natural_landscape
    d["orientation"] = "landscape" if landscape else "portrait"
    d["time_format"] = 24 if states.get("time_12_24") == "24" else 12
    d["date_format"] = "EU" if (states.get("date_format") or "").lower().startswith("dd") else "US"
    d["brightness"] = int(_clamp(_number(states.get("screen_brightness"), 102), 0, 255))
    d["navigation_mode"] = "gesture" if states.get("navigation_mode") == "2" else "three_button"
    loc = (states.get("system_locales") or "").split(",")[0]
    if re.fullmatch(r"[a-z]{2,3}(-[A-Z]{2})?", loc):
        d["locale"] = loc
    return DeviceSettings(**d)


def _number(raw: Optional[str], default: float) -> float:
    try:
        return float(raw) if raw else default
    except ValueError:
        return default


def _clamp(v: float, lo: float, hi: float) -> float:
    return max(lo, min(hi, v))


# ---------------------------------------------------------------- snapshot + journal


def default_journal_dir() -> Path:
    base = os.environ.get("TTIR_STATE_DIR") or os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ttir" / "adb"


def journal_name(serial: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", serial or "device")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SettingsSnapshot:
    """The original raw value of every state changed so far, captured BEFORE its
    first change. Mirrored to a journal file ``<serial>.<pid>.json`` in
    ``journal_dir`` (when given), so a run that dies without cleaning up (power
    loss, SIGKILL) can be undone by the next one: see :meth:`adopt_stale`."""

    def __init__(self, serial: str, journal_dir: Optional[Path] = None):
        self.serial = serial
        self.journal_dir = journal_dir
        self.journal = None if journal_dir is None else journal_dir / f"{journal_name(serial)}.{os.getpid()}.json"
        self.originals: dict[str, Optional[str]] = {}

    def __bool__(self) -> bool:
        return bool(self.originals)

    def capture(self, states: tuple[str, ...], read: Callable[[str], Optional[str]]) -> None:
        """Record the originals of ``states`` not captured yet (reads them first, writes the journal)."""
        fresh = {s: read(s) for s in states if s not in self.originals}
        if fresh:
            self.originals.update(fresh)
            self._save()
            logger.debug(f"adb {self.serial}: snapshot of original settings {fresh}")

    def restore(self, run: Callable[[str], str], failed: Callable[[str], Optional[str]]) -> list[str]:
        """Write every original back (last changed first). ``failed(output)`` tells
        a failure from success. Returns the states that could not be restored."""
        problems: list[str] = []
        for state in reversed(list(self.originals)):
            command = write_command(state, self.originals[state])
            try:
                error = failed(run(command))
            except Exception as exc:  # noqa: BLE001 - keep restoring the rest, report at the end
                error = str(exc)
            if error:
                problems.append(f"{state} (`{command}`: {error})")
                continue
            del self.originals[state]
            self._save()
        return problems

    def manual_commands(self) -> list[str]:
        """What a person would type to restore by hand (``adb shell …``)."""
        return [f"adb -s {self.serial} shell {write_command(s, v)}" for s, v in reversed(list(self.originals.items()))]

    # -- journal -----------------------------------------------------------------
    def _save(self) -> None:
        if self.journal is None:
            return
        try:
            if not self.originals:
                self.journal.unlink(missing_ok=True)
                return
            self.journal.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.journal.with_suffix(".tmp")
            tmp.write_text(json.dumps({"serial": self.serial, "pid": os.getpid(), "written": time.time(),
                                       "originals": self.originals}, indent=1), encoding="utf-8")
            os.replace(tmp, self.journal)
        except OSError as exc:
            logger.warning(f"adb {self.serial}: could not write the settings journal {self.journal}: {exc}")

    def stale_journals(self) -> list[tuple[Path, dict[str, Any]]]:
        """Journals for this device left by processes that are no longer running, oldest first."""
        if self.journal_dir is None or not self.journal_dir.is_dir():
            return []
        found = []
        for path in self.journal_dir.glob(f"{journal_name(self.serial)}.*.json"):
            if path == self.journal:
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                pid, originals = int(data["pid"]), dict(data["originals"])
                for s in originals:
                    _known(s)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                logger.warning(f"adb {self.serial}: ignoring unreadable settings journal {path}: {exc}")
                continue
            if _pid_alive(pid):
                logger.warning(f"adb {self.serial}: process {pid} is also driving this device ({path})")
                continue
            found.append((path, {"written": float(data.get("written", 0)), "pid": pid, "originals": originals}))
        return sorted(found, key=lambda item: item[1]["written"])

    def adopt_stale(self) -> list[int]:
        """Take over the originals that dead processes left behind (the earliest
        capture of a state wins); returns their pids."""
        pids = []
        for path, data in self.stale_journals():
            for s, v in data["originals"].items():
                self.originals.setdefault(s, v)
            pids.append(data["pid"])
            self._save()
            path.unlink(missing_ok=True)
        return pids
