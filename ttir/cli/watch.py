"""``ttir watch``: keep a phone clear of interruptions while anything else drives it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from ttir.cli.arguments import positive_seconds, writable_file
from ttir.cli.stopping import StopSignal

DESCRIPTION = """\
Keep a phone clear of interruptions while anything else drives it: your agent,
a test suite, a person. Every --interval seconds ttir looks at the screen
(uiautomator dump + screencap through adb); once two looks in a row agree (it
never taps while the screen is changing) it tries your rules, then the guard's
interference check: a permission prompt is declined, a rating dialog or a
what's-new sheet closed, an ANR waited on, a notification swiped away. At most
recovery.budget actions per interruption; a lock screen or a required update is
reported, never dismissed.

Your rules, for what the model should not have to learn (in --config):
  watch:
    interval_s: 0.5
    rules:
      - {when: {text: "Rate us"}, tap: "Not now"}
      - {when: {text: "Enable sync", package: com.example.app}, tap: "Skip"}

Each intervention is a JSON line (--log FILE, or stdout); Ctrl-C (a second one:
at once) or the end of --duration prints a summary. Run it beside the agent, on
the same phone:
  ttir watch --serial emulator-5554 --duration 600 &
  python my_agent.py
In Python: `with ttir.watching("emulator-5554") as watcher: run_suite()`.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serial", required=True, help="the phone's adb serial (`adb devices`), e.g. emulator-5554 or 127.0.0.1:5555")
    p.add_argument("--interval", type=float, default=None, metavar="S",
                   help="seconds between two looks (default: watch.interval_s of --config, 1.0)")
    p.add_argument("--duration", type=positive_seconds, default=None, metavar="S", help="stop after S seconds (default: until Ctrl-C)")
    p.add_argument("--config", type=Path, default=None, metavar="YAML", help="a ttir config (watch rules, interference, recovery)")
    p.add_argument("--goal", default="", help="the task, when known: a dialog the goal needs is left alone")
    p.add_argument("--log", type=writable_file, default=None, metavar="FILE", help="append the interventions here as JSON lines (default: stdout)")
    p.add_argument("--adb-port", type=int, default=None,
                   help="the adb server's port (default ANDROID_ADB_SERVER_PORT or 5037)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ttir.core.config import TTIRConfig
    from ttir.guarded.watch import Intervention, Watcher, watch_for

    config = TTIRConfig.from_yaml(args.config) if args.config else TTIRConfig()
    if args.interval is not None:
        config.watch.interval_s = args.interval  # validated on assignment (0.05 .. 3600 s)
    from benchmark.devices import AdbDevice

    device = AdbDevice(args.serial, port=args.adb_port, settle_seconds=0, action_settle_seconds=0)
    out: TextIO = open(args.log, "a", encoding="utf-8") if args.log else sys.stdout  # noqa: SIM115 - closed below

    def write(item: Intervention) -> None:
        out.write(json.dumps(item.model_dump(mode="json"), ensure_ascii=False) + "\n")
        out.flush()

    watcher = Watcher(device, config, goal=args.goal, on_intervention=write)
    with StopSignal() as stop:
        print(f"ttir watch: watching {args.serial} every {config.watch.interval_s:g} s"
              f"{'' if args.duration is None else f' for {args.duration:g} s'}; Ctrl-C to stop", file=sys.stderr)
        try:
            watch_for(watcher, args.duration, stop.event)
        except KeyboardInterrupt:
            pass
        finally:
            if out is not sys.stdout:
                out.close()
            device.close()
    print("ttir watch: " + json.dumps(watcher.summary()), file=sys.stderr)
    return 0
