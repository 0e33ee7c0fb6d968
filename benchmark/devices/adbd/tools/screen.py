"""``screencap`` and ``uiautomator``: the served phone's screen as an agent reads it
(the observation of its Device: overlays composited, overlay nodes in the dump)."""

from __future__ import annotations

import struct
from typing import Any

from benchmark.devices.adbd.files import FileError
from benchmark.devices.adbd.sh import Call
from benchmark.devices.adbd.text import text

DEFAULT_DUMP = "/sdcard/window_dump.xml"
RGBA_8888 = 1
DUMPED = "UI hierchary dumped to: {path}"  # sic: uiautomator's own spelling


def raw_frame(phone: Any) -> bytes:
    """``screencap`` without -p: width, height, format, colour space, then RGBA pixels."""
    img = phone.observe().screenshot.convert("RGBA")
    w, h = img.size
    return struct.pack("<4I", w, h, RGBA_8888, 0) + img.tobytes()


def screencap(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    png, target = False, None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-p":
            png = True
        elif a == "-h":
            call.err += text("screencap_usage")
            return 0
        elif a == "-d":
            i += 1
        elif a.startswith("-"):
            call.err += text("screencap_usage")
            return 1
        else:
            target = a
        i += 1
    if target is not None:
        png = png or target.endswith(".png")
    data = phone.screenshot_png() if png else raw_frame(phone)
    if target is None:
        call.out += data
        return 0
    try:
        phone.files.write(target, data)
    except FileError as exc:
        return call.error(f"Error opening file: {target} ({exc})")
    return 0


def uiautomator(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    if not args or args[0] != "dump":
        call.err += text("uiautomator_usage")
        return 1 if args and args[0] != "help" else 0
    paths = [a for a in args[1:] if not a.startswith("--")]
    path = paths[0] if paths else DEFAULT_DUMP
    xml = phone.dump_xml()
    if path == "/dev/tty":
        call.print(xml, end="")
    else:
        try:
            phone.files.write(path, xml.encode("utf-8"))
        except FileError as exc:
            return call.error(f"ERROR: could not write {path}: {exc}")
    call.print(DUMPED.format(path=path))
    return 0


TOOLS = {"screencap": screencap, "uiautomator": uiautomator}
