"""``settings``, ``wm``, ``cmd`` and ``getprop``: the phone's configuration."""

from __future__ import annotations

import re
from typing import Any

from benchmark.devices.adb.commands import NAVBAR_OVERLAYS
from benchmark.devices.adb.settings import NAVIGATION_MODES
from benchmark.devices.adbd.settings import NAMESPACES
from benchmark.devices.adbd.sh import Call
from benchmark.devices.adbd.text import text

NIGHT_MODES = ("yes", "no", "auto", "custom")
CMD_NOT_FOUND = 20  # cmd's exit status for an unknown service
# a client's `settings put` is kept for the server's life: bounded, so that no client can grow it at will
MAX_SETTING_KEY = 256
MAX_SETTING_VALUE = 16 * 1024
MAX_SETTINGS = 2048  # keys in all namespaces together (a phone holds a few hundred): 32 MiB of values at most


def settings(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    while len(args) >= 2 and args[0] == "--user":
        args = args[2:]
    if len(args) < 2 or args[0] not in ("get", "put", "delete", "list"):
        call.err += text("settings_usage")
        return 1
    verb, namespace = args[0], args[1].lower()
    if namespace not in NAMESPACES:
        return call.error(f"Invalid namespace '{args[1]}'; expected one of {', '.join(NAMESPACES)}")
    if verb == "list":
        for k, v in phone.settings.listing(namespace).items():
            call.print(f"{k}={v}")
        return 0
    if len(args) < 3 or (verb == "put" and len(args) < 4):
        call.err += text("settings_usage")
        return 1
    key = args[2]
    if verb == "get":
        value = phone.settings.get(namespace, key)
        call.print("null" if value is None else value)
    elif verb == "put":
        if len(args[3]) > MAX_SETTING_VALUE or len(key) > MAX_SETTING_KEY:
            return call.error(f"settings: a key of at most {MAX_SETTING_KEY} and a value of at most "
                              f"{MAX_SETTING_VALUE} characters (got {len(key)} and {len(args[3])})", 1)
        held = sum(phone.settings.count(n) for n in NAMESPACES)
        if phone.settings.get(namespace, key) is None and held >= MAX_SETTINGS:
            return call.error(f"settings: the phone holds {MAX_SETTINGS} keys already (system, secure and global "
                              "together); delete one first", 1)
        phone.settings.put(namespace, key, args[3])
    else:
        call.print(f"Deleted {int(phone.settings.delete(namespace, key))} rows")
    return 0


def wm(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    if not args or args[0] not in ("size", "density"):
        call.err += text("wm_usage")
        return 1 if args else 0
    what, value = args[0], (args[1] if len(args) > 1 else None)
    if what == "size":
        if value is None:
            w, h = phone.display.size
            call.print(f"Physical size: {w}x{h}")
            over = phone.settings.override("wm_size")
            if over:
                call.print(f"Override size: {over}")
        elif value == "reset":
            phone.settings.set_override("wm_size", None)
        else:
            m = re.fullmatch(r"(\d{2,5})x(\d{2,5})", value)
            if not m:
                return call.error(f"Error: bad size {value}")
            phone.settings.set_override("wm_size", f"{int(m.group(1))}x{int(m.group(2))}")
        return 0
    if value is None:
        call.print(f"Physical density: {phone.display.density}")
        over = phone.settings.override("wm_density")
        if over:
            call.print(f"Override density: {over}")
    elif value == "reset":
        phone.settings.set_override("wm_density", None)
    else:
        if not value.isdigit() or not 72 <= int(value) <= 1200:
            return call.error(f"Error: bad density {value}")
        phone.settings.set_override("wm_density", str(int(value)))
    return 0


def uimode(phone: Any, call: Call, args: list[str]) -> int:
    if args[:1] != ["night"]:
        call.err += text("uimode_usage")
        return 1 if args and args[0] != "help" else 0
    if len(args) > 1:
        if args[1] not in NIGHT_MODES:
            return call.error(f"Error: mode must be one of {', '.join(NIGHT_MODES)}")
        phone.settings.set_override("night_mode", args[1])
    call.print(f"Night mode: {phone.settings.override('night_mode')}")
    return 0


def overlay(phone: Any, call: Call, args: list[str]) -> int:
    """The navigation-bar overlays (the only overlays this phone has): ``list`` and
    ``enable-exclusive --category PKG``, which is how Settings switches navigation mode."""
    modes = {NAVBAR_OVERLAYS[code]: mode for mode, code in NAVIGATION_MODES.items()}
    current = NAVBAR_OVERLAYS[NAVIGATION_MODES[phone.sim.settings.navigation_mode]]
    if args[:1] == ["list"]:
        call.print("android")
        for package in NAVBAR_OVERLAYS.values():
            mark = "[x]" if package == current else ("[ ]" if package in modes else "---")
            call.print(f"{mark} {package}")
        return 0
    if args[:1] == ["enable-exclusive"]:
        package = next((a for a in args[1:] if not a.startswith("--")), "")
        if package not in NAVBAR_OVERLAYS.values():
            return call.error(f"Error: Unable to find overlay {package!r}")
        if package not in modes:
            return call.error(f"Error: overlay {package} is not supported by this phone "
                              f"(navigation modes: {', '.join(NAVIGATION_MODES)})")
        phone.settings.set_knob("navigation_mode", modes[package])
        return 0
    return call.error("usage: cmd overlay list | enable-exclusive --category PACKAGE")


def cmd(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    if not args:
        return call.error("cmd: No service specified; use -l to list all running services", CMD_NOT_FOUND)
    service, rest = args[0], args[1:]
    if service == "-l":
        call.print("Currently running services:")
        for s in ("input", "overlay", "package", "settings", "ttir", "uimode", "window"):
            call.print(f"  {s}")
        return 0
    if service == "uimode":
        return uimode(phone, call, rest)
    if service == "overlay":
        return overlay(phone, call, rest)
    if service == "ttir":
        from benchmark.devices.adbd.tools.ttir_service import ttir_service

        return ttir_service(phone, call, rest)
    aliases = {"package": "pm", "settings": "settings", "input": "input", "window": "wm"}
    if service in aliases:
        call.argv = [aliases[service], *rest]
        return phone.tools[aliases[service]](call)
    return call.error(f"cmd: Can't find service: {service}", CMD_NOT_FOUND)


def getprop(phone: Any, call: Call) -> int:
    props = phone.properties
    args = call.argv[1:]
    if not args:
        for k in sorted(props):
            call.print(f"[{k}]: [{props[k]}]")
        return 0
    call.print(props.get(args[0], args[1] if len(args) > 1 else ""))
    return 0


TOOLS = {"settings": settings, "wm": wm, "cmd": cmd, "getprop": getprop}
