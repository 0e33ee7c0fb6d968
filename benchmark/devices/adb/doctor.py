"""The checks behind ``ttir doctor``: is everything a real-phone run needs there?

:func:`run_checks` yields one :class:`~ttir.core.doctor_check.DoctorCheck` at a time (so the CLI can print
as it goes). A check that is ``needed`` and fails makes the setup unusable.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator, Optional, Union

from benchmark.device import DeviceError, DeviceSettings, SETTING_NAMES
from benchmark.devices.adb.parse import command_failed, parse_setting
from ttir.core.doctor_check import DoctorCheck, Status

CHECKS: dict[str, str] = {
    "adb server": "an adb server answers (ttir starts adbutils' bundled adb if none runs)",
    "device": "exactly one phone/emulator is chosen, attached and authorised for USB debugging",
    "leftover settings": "no earlier run died leaving the phone's settings changed (they are restored if so)",
    "android": "the Android API level, which decides a few command variants",
    "screencap": "`screencap -p` returns a PNG screenshot (and how long it takes)",
    "uiautomator dump": "`uiautomator dump` returns the UI tree (how long, how many nodes)",
    "foreground app": "`dumpsys window` names the app in front",
    "settings writable": "`settings put system` works for the shell user",
    **{f"knob {k}": f"the {k} state knob can be set, read back and restored" for k in SETTING_NAMES},
}
NOT_NEEDED = {"foreground app", "leftover settings", "android", "knob date_format", "knob locale",
              "knob navigation_mode"}


def _check(name: str, status: Status, detail: str) -> DoctorCheck:
    return DoctorCheck(name=name, status=status, detail=detail, needed=name not in NOT_NEEDED)


def _skip_rest(after: str, reason: str, knobs: bool) -> Iterator[DoctorCheck]:
    names = list(CHECKS)
    for name in names[names.index(after) + 1 :]:
        if name.startswith("knob ") and not knobs:
            continue
        yield _check(name, "skip", reason)


def probe_value(knob: str, current: DeviceSettings) -> Any:
    """A value for ``knob`` that differs from the current one (so a round trip proves something)."""
    options: dict[str, tuple[Any, Any]] = {
        "font_scale": (1.15, 1.3),
        "density_scale": (1.1, 0.9),
        "size_scale": (0.9, 0.8),
        "dark_theme": (True, False),
        "orientation": ("landscape", "portrait"),
        "time_format": (24, 12),
        "date_format": ("EU", "US"),
        "brightness": (60, 200),
        "navigation_mode": ("gesture", "three_button"),
        "locale": ("es-ES", "en-US"),
    }
    first, second = options[knob]
    return second if getattr(current, knob) == first else first


def run_checks(
    *,
    serial: Optional[str] = None,
    host: Optional[str] = None,
    port: Optional[int] = None,
    start_server: bool = True,
    knobs: bool = True,
    settle_seconds: float = 1.0,
    journal_dir: Union[str, Path, None] = "auto",
    adb_device: Any = None,
) -> Iterator[DoctorCheck]:
    """Run the checks in order, yielding each result; stops early when the rest cannot run."""
    from benchmark.devices.adb.device import AdbDevice
    from benchmark.devices.adb.settings import SettingsSnapshot, default_journal_dir

    if adb_device is None:
        server = yield from _server_checks(serial, host, port, start_server, knobs)
        if server is None:
            return
        adb_device = server
    jdir = default_journal_dir() if journal_dir == "auto" else (Path(journal_dir) if journal_dir else None)
    stale = SettingsSnapshot(str(getattr(adb_device, "serial", "")), jdir).stale_journals()
    try:
        device = AdbDevice(adb_device=adb_device, settle_seconds=settle_seconds, action_settle_seconds=0,
                           journal_dir=jdir)
    except DeviceError as exc:
        yield _check("leftover settings", "fail", str(exc))
        return
    if stale:
        pids = ", ".join(str(d["pid"]) for _, d in stale)
        yield _check("leftover settings", "warn", f"run(s) {pids} died with the phone's settings changed; restored them")
    else:
        yield _check("leftover settings", "ok", "none")
    problems: list[DoctorCheck] = []
    try:
        yield from _device_checks(device, knobs)
    except DeviceError as exc:
        problems.append(DoctorCheck(name="device", status="fail", detail=f"the phone stopped answering: {exc}"))
    finally:  # no yield in here: the generator may be closing (Ctrl-C)
        try:
            device.close()
        except DeviceError as exc:
            problems.append(DoctorCheck(name="restore", status="fail", detail=str(exc)))
    yield from problems


def _server_checks(serial: Optional[str], host: Optional[str], port: Optional[int], start_server: bool,
                   knobs: bool) -> Iterator[DoctorCheck]:
    from benchmark.devices.adb.transport import ensure_server, pick_serial, server_address

    try:
        host, port = server_address(host, port)
        ensure_server(host, port, start=start_server)
        import adbutils

        client = adbutils.AdbClient(host=host, port=port, socket_timeout=10)
        version = client.server_version()
    except (DeviceError, ValueError, OSError) as exc:
        yield _check("adb server", "fail", str(exc))
        yield from _skip_rest("adb server", "needs the adb server", knobs)
        return None
    except Exception as exc:  # noqa: BLE001 - adbutils errors, reported as they are
        yield _check("adb server", "fail", f"the adb server at {host}:{port} did not answer: {exc}")
        yield from _skip_rest("adb server", "needs the adb server", knobs)
        return None
    yield _check("adb server", "ok", f"answers at {host}:{port} (adb 1.0.{version})")
    try:
        attached = [(d.serial, d.state) for d in client.list()]
        chosen = pick_serial(serial, attached)
    except Exception as exc:  # noqa: BLE001 - DeviceError explains; adbutils errors are shown as they are
        yield _check("device", "fail", str(exc) if isinstance(exc, DeviceError) else f"listing devices failed: {exc}")
        yield from _skip_rest("device", "needs an attached, authorised device", knobs)
        return None
    others = [s for s, _ in attached if s != chosen]
    yield _check("device", "ok", f"{chosen} is attached and authorised" + (f" (also attached: {', '.join(others)})"
                                                                            if others else ""))
    return client.device(chosen)


def _timed(fn: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn()
    return out, 1000 * (time.perf_counter() - t)


def _device_checks(device: Any, knobs: bool) -> Iterator[DoctorCheck]:
    from ttir.core.types import Observation

    yield _check("android", "ok" if device.sdk else "warn",
                 f"API level {device.sdk}" if device.sdk else "could not read ro.build.version.sdk")
    try:
        image, ms = _timed(device.screenshot)
        yield _check("screencap", "ok", f"{image.size[0]}x{image.size[1]} PNG in {ms:.0f} ms")
    except DeviceError as exc:
        yield _check("screencap", "fail", f"{exc}; is the screen on and unlocked?")
    xml, ms = _timed(device.dump_xml)
    if xml is None:
        yield _check("uiautomator dump", "fail", "no UI tree after retries; unlock the screen, and stop "
                                                 "other UI automation (Appium, uiautomator2) that holds the service")
    else:
        n = len(Observation.from_xml(xml).elements)
        yield _check("uiautomator dump", "ok" if n else "warn", f"{n} nodes in {ms:.0f} ms")
    fg = device.foreground()
    yield _check("foreground app", "ok" if fg else "warn", fg or "dumpsys did not name a focused activity")
    yield from _settings_writable(device)
    if not knobs:
        return
    current = device.settings
    for knob in SETTING_NAMES:
        yield _knob_round_trip(device, knob, current)


def _settings_writable(device: Any) -> Iterator[DoctorCheck]:
    from benchmark.devices.adb import commands as cmd

    try:
        before = parse_setting(device.shell(cmd.settings_get("system", "font_scale")))
        value = before or "1.0"
        out = device.shell(cmd.settings_put("system", "font_scale", value))
        problem = command_failed(out)
        after = parse_setting(device.shell(cmd.settings_get("system", "font_scale")))
        if before is None:
            device.shell(cmd.settings_delete("system", "font_scale"))
    except ValueError as exc:
        yield _check("settings writable", "fail", str(exc))
        return
    if problem or after != value:
        yield _check("settings writable", "fail", f"wrote font_scale={value}, read back {after!r}: {problem or ''}")
    else:
        yield _check("settings writable", "ok", f"font_scale={value} written and read back")


def _knob_round_trip(device: Any, knob: str, current: DeviceSettings) -> DoctorCheck:
    from benchmark.devices.adb.settings import BEST_EFFORT, KNOB_STATES, knob_targets, same_value

    name = f"knob {knob}"
    value = probe_value(knob, current)
    states = KNOB_STATES[knob]
    try:
        before = {s: device.read_state(s) for s in states}
        device.configure(**{knob: value})
        wanted = knob_targets(knob, value, device.display)
        got = {s: device.read_state(s) for s in states}
        device.restore_settings()
        restored = {s: device.read_state(s) for s in states}
    except DeviceError as exc:
        return _check(name, "fail", str(exc))
    wrong = [f"{s} is {got[s]!r}, expected {wanted[s]!r}" for s in states if not same_value(s, got[s], wanted[s])]
    if wrong:
        return _check(name, "fail", f"set {value!r} but " + "; ".join(wrong))
    unrestored = [f"{s} is {restored[s]!r}, was {before[s]!r}" for s in states
                  if not same_value(s, restored[s], before[s])]
    if unrestored:
        return _check(name, "fail", "not restored: " + "; ".join(unrestored))
    detail = f"set to {value!r}, read back, restored"
    if knob in BEST_EFFORT:
        return _check(name, "warn", f"{detail}; but {BEST_EFFORT[knob]}")
    return _check(name, "ok", detail)
