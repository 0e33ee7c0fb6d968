"""``am``, ``monkey`` and ``pm``: starting, stopping and listing the phone's apps."""

from __future__ import annotations

from typing import Any

from benchmark.devices.adb.commands import check_component, check_package
from benchmark.devices.adbd.sh import Call
from benchmark.devices.adbd.text import text
from ttir.core.types import Action

NO_ACTIVITIES = "** No activities found to run, monkey aborted."
MONKEY_ABORTED = 252  # monkey's exit status when it aborts


def _installed(phone: Any, package: str) -> bool:
    return package in phone.sim.apps


def launch(phone: Any, package: str) -> bool:
    """Open ``package`` the way its launcher icon does (an app action on the phone)."""
    if not _installed(phone, package) or not phone.sim.apps[package].in_launcher:
        return False
    phone.keyboard.selected_all = False
    return phone.act(Action(action_type="open_app", app_name=package))


def am(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    if not args:
        call.err += text("am_usage")
        return 1
    verb, rest = args[0], args[1:]
    if verb == "force-stop":
        packages = [a for a in rest if not a.startswith("--")]
        if not packages:
            return call.error("Error: no package specified")
        phone.sim.force_stop(packages[0])
        return 0
    if verb in ("start", "start-activity"):
        opts: dict[str, str] = {}
        flags: set[str] = set()
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-n", "-a", "-d", "-c", "-t", "--user") and i + 1 < len(rest):
                opts[a] = rest[i + 1]
                i += 2
                continue
            flags.add(a)
            i += 1
        if "-d" in opts and opts.get("-a", "").endswith("VIEW") and "-n" not in opts:
            call.print(f"Starting: Intent {{ act=android.intent.action.VIEW dat={opts['-d']} }}")
            phone.sim.open_url(opts["-d"])
            return 0
        component = opts.get("-n")
        if component is None:
            return call.error("Error: Activity not started, unable to resolve Intent")
        try:
            check_component(component)
        except ValueError:
            return call.error(f"Error: Bad component name: {component}")
        package = component.split("/")[0]
        if "-S" in flags:
            phone.sim.force_stop(package)
        call.print(f"Starting: Intent {{ cmp={component} }}")
        if not launch(phone, package):
            call.print("Error type 3")
            call.print(f"Error: Activity class {{{component}}} does not exist.")
            return 1
        return 0
    call.err += f"Unknown command: {verb}\n".encode() + text("am_usage")
    return 1


def monkey(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    packages = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-p"]
    count = args[-1] if args and args[-1].isdigit() else None
    if not packages or count is None:
        call.err += text("monkey_usage")
        return 1
    package = packages[0]
    try:
        check_package(package)
    except ValueError:
        call.print(NO_ACTIVITIES)
        return MONKEY_ABORTED
    call.out += text("monkey_launch", package=package, count=count)
    if not launch(phone, package):
        call.print(NO_ACTIVITIES)
        return MONKEY_ABORTED
    call.print("Events injected: 1")
    call.print("## Network stats: elapsed time=3ms (0ms mobile, 0ms wifi, 3ms not connected)")
    return 0


def pm(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    if args[:2] == ["list", "packages"]:
        opts = [a for a in args[2:] if a.startswith("-")]
        filters = [a for a in args[2:] if not a.startswith("-")]
        system = set(phone.data.system_packages) | {p for p, app in phone.sim.apps.items()
                                                     if p.startswith("com.android.")}
        for p in phone.packages():
            if "-3" in opts and p in system or "-s" in opts and p not in system:
                continue
            if filters and filters[0] not in p:
                continue
            call.print(f"package:/data/app/{p}-1/base.apk={p}" if "-f" in opts else f"package:{p}")
        return 0
    if args[:1] == ["path"] and len(args) == 2:
        if args[1] not in phone.packages():
            return 1
        call.print(f"package:/data/app/{args[1]}-1/base.apk")
        return 0
    call.err += text("pm_usage")
    return 1


TOOLS = {"am": am, "monkey": monkey, "pm": pm}
