"""``dumpsys window windows|displays`` and ``dumpsys activity activities|top``, in
Android 14's format: the lines tools grep for (``mCurrentFocus``,
``mFocusedApp``, ``topResumedActivity``, ``ResumedActivity``, ``cur=WxH``)."""

from __future__ import annotations

import zlib
from typing import Any

from benchmark.devices.adbd.sh import Call
from benchmark.devices.adbd.text import text
from benchmark.sim.system import IME, LAUNCHER, SYSTEMUI, bars

SERVICES = ("activity", "display", "input_method", "package", "settings", "window")


def _hash(name: str) -> str:
    return f"{zlib.crc32(name.encode()) & 0xFFFFFFF:07x}"


def _short(component: str) -> str:
    """``pkg/pkg.Main`` -> ``pkg/.Main`` (how ActivityRecords print their component)."""
    pkg, _, act = component.partition("/")
    return f"{pkg}/{act[len(pkg):]}" if act.startswith(pkg + ".") else component


class Screen:
    """What the window manager knows right now."""

    def __init__(self, phone: Any):
        obs = phone.observe()
        raw = phone.sim.observe()
        self.phone = phone
        self.focus_component = obs.foreground or raw.foreground or f"{LAUNCHER}/"
        self.app_component = raw.foreground or self.focus_component
        self.keyboard = any("inputmethod" in e.package for e in obs.elements)
        self.metrics = phone.sim.metrics()
        self.packages = phone.packages()

    def task_id(self, package: str) -> int:
        return 10 + (self.packages.index(package) if package in self.packages else len(self.packages))

    def uid(self, package: str) -> int:
        return 10100 + self.task_id(package)

    def window(self, name: str) -> str:
        return f"Window{{{_hash(name)} u0 {name}}}"

    def record(self, component: str) -> str:
        package = component.split("/")[0]
        return f"ActivityRecord{{{_hash(component + 'record')} u0 {_short(component)} t{self.task_id(package)}}}"


def _entry(screen: Screen, index: int, name: str, package: str) -> str:
    uid = 1000 if package in ("android", SYSTEMUI) else screen.uid(package)
    return text("dumpsys_window_entry", index=index, window=screen.window(name), task=screen.task_id(package),
                session=_hash(name + "session"), pid=3000 + index * 17, uid=uid - 10000 if uid > 10000 else 0,
                client=_hash(name + "client"), owner_uid=uid, for_all=str(package == SYSTEMUI).lower(),
                package=package).decode()


def window_windows(screen: Screen) -> bytes:
    m = screen.metrics
    entries = [("NavigationBar0", SYSTEMUI), ("StatusBar", SYSTEMUI)]
    if screen.keyboard:
        entries.append(("InputMethod", IME))
    entries.append((screen.app_component, screen.app_component.split("/")[0]))
    if screen.focus_component != screen.app_component:
        entries.append((screen.focus_component, screen.focus_component.split("/")[0]))
    windows = "".join(_entry(screen, i, name, pkg) for i, (name, pkg) in enumerate(reversed(entries)))
    landscape = m.width > m.height
    return text("dumpsys_window_windows", windows=windows, sw_dp=int(min(m.width, m.height) / m.px_per_dp),
                w_dp=int(m.width / m.px_per_dp), h_dp=int(m.height / m.px_per_dp), dpi=int(round(m.dpi)),
                orientation="land" if landscape else "port", width=m.width, height=m.height,
                rotation=1 if landscape and not screen.phone.display.natural_landscape else 0,
                focus=screen.window(screen.focus_component), focused_app=screen.record(screen.app_component))


def window_displays(screen: Screen) -> bytes:
    m = screen.metrics
    phone = screen.phone
    (init_w, init_h), init_dpi = phone.display.size, phone.display.density
    size_override, dpi_override = phone.settings.override("wm_size"), phone.settings.override("wm_density")
    base = ""
    if size_override or dpi_override:
        bw, bh = (int(v) for v in (size_override or f"{init_w}x{init_h}").split("x"))
        base = f" base={bw}x{bh} {dpi_override or init_dpi}dpi"
    settings = phone.sim.settings
    x1, y1, x2, y2 = bars(m, settings.orientation, settings.navigation_mode).app
    app_w, app_h = x2 - x1, y2  # the app window spans the status bar (edge to edge), not the navigation bar
    short, long_ = min(m.width, m.height), max(m.width, m.height)
    landscape = m.width > m.height
    return text("dumpsys_window_displays", init_w=init_w, init_h=init_h, init_dpi=init_dpi, base=base,
                width=m.width, height=m.height, app_width=app_w, app_height=app_h, short=short,
                short_app=min(app_w, app_h), long=long_, long_app=max(app_w, app_h), rotation=1 if landscape else 0,
                dpi=int(round(m.dpi)))


def activity_activities(screen: Screen) -> bytes:
    component = screen.app_component
    package = component.split("/")[0]
    uid = screen.uid(package)
    return text("dumpsys_activity_activities", task_hash=_hash(package + "task"), task=screen.task_id(package),
                uid=uid, package=package, record=screen.record(component), process_hash=_hash(package + "proc"),
                pid=4000 + screen.task_id(package), app_uid=uid - 10000, short_component=_short(component))


def dumpsys(phone: Any, call: Call) -> int:
    args = [a for a in call.argv[1:] if a not in ("-a", "--all")]
    if args[:1] == ["-l"]:
        call.print("Currently running services:")
        for s in SERVICES:
            call.print(f"  {s}")
        return 0
    screen = Screen(phone)
    service, what = (args[0] if args else ""), (args[1] if len(args) > 1 else "")
    if service == "window":
        if what in ("windows", "w"):
            call.out += window_windows(screen)
        elif what in ("displays", "d"):
            call.out += window_displays(screen)
        elif what == "":
            call.out += window_displays(screen) + b"\n" + window_windows(screen)
        else:
            call.print(f"Bad window command, or no windows match: {what}")
        return 0
    if service == "activity":
        if what in ("activities", "a", "top", "recents", ""):
            call.out += activity_activities(screen)
        else:
            call.print(f"Bad activity command, or no activities match: {what}")
        return 0
    if service in SERVICES:
        return 0  # known services with nothing to report here
    call.print(f"Can't find service: {service}" if service else "Usage: dumpsys [-l] [SERVICE [ARGS]]")
    return 0


TOOLS = {"dumpsys": dumpsys}
