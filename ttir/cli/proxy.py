"""``ttir proxy``: serve a real device behind the guard, for an agent you cannot change."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from ttir.cli.arguments import writable_file
from ttir.cli.stopping import StopSignal

DESCRIPTION = """\
Put the guard between an adb-driven agent and its phone, without touching the
agent's code. ttir serves an adb device on --port that forwards every command to
the real device --serial through the adb server; the agent connects to it and
runs unchanged:

  ttir proxy --serial emulator-5554 --port 6555 --log interventions.jsonl &
  adb connect 127.0.0.1:6555
  ANDROID_SERIAL=127.0.0.1:6555 python my_agent.py

Before an `input` command (tap, swipe, text, keyevent) goes through, the guard
looks at the screen (the last `uiautomator dump` the agent pulled through the
proxy, while no input has gone through since and it is younger than --fresh;
else a dump of its own) with its checks: an interruption is dismissed first
(the agent's command then goes through; it is held back once, with an error,
when it would land on an interruption the guard could not clear), a repeated
action without effect is redone another way, and with --goal an off-task screen
is brought back. Every other command (screencap, uiautomator dump, pull/push,
am, pm, dumpsys, ...) passes through byte for byte.

Each intervention is a JSON line (--log FILE, or stdout); Ctrl-C prints a
summary. No authentication, as adbd over TCP: it listens on 127.0.0.1 unless
--host says otherwise.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serial", required=True, help="the real device's adb serial (`adb devices`), e.g. emulator-5554")
    p.add_argument("--port", type=int, required=True, help="the TCP port the agent connects to (adb connect 127.0.0.1:PORT)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--goal", default="", help="the agent's task: turns the task-alignment check on")
    p.add_argument("--config", type=Path, default=None, metavar="YAML", help="a ttir config (checks, interference, recovery)")
    p.add_argument("--log", type=writable_file, default=None, metavar="FILE", help="append the interventions here as JSON lines (default: stdout)")
    p.add_argument("--fresh", type=float, default=5.0, metavar="S",
                   help="a screen the agent pulled counts as current for at most S seconds (default 5)")
    p.add_argument("--settle", type=float, default=0.3, metavar="S",
                   help="seconds to wait after each recovery action before looking again (default 0.3)")
    p.add_argument("--adb-port", type=int, default=None,
                   help="the adb server's port (default ANDROID_ADB_SERVER_PORT or 5037)")
    p.set_defaults(func=run)


READY = "Ctrl-C stops."  # the last line printed once the proxy listens


def run(args: argparse.Namespace) -> int:
    from ttir.cli.serve_adb import is_loopback
    from ttir.core.config import TTIRConfig
    from ttir.guarded.proxy import AdbProxy, ProxyIntervention

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: expected a TCP port (1..65535)")
    for flag, value in (("--fresh", args.fresh), ("--settle", args.settle)):
        if not 0 <= value <= 600:
            raise ValueError(f"{flag} {value}: expected seconds between 0 and 600")
    config = TTIRConfig.from_yaml(args.config) if args.config else TTIRConfig()
    if not is_loopback(args.host):
        from loguru import logger

        print(f"WARNING: --host {args.host} serves the device {args.serial} to the network with no authentication: "
              "anyone who can reach this machine may run shell commands on it (install apps, read its files, tap "
              "anywhere). Use the default --host 127.0.0.1 unless the network is yours alone.", file=sys.stderr)
        logger.warning("proxy: listening on non-loopback address {} without authentication", args.host)
    out: TextIO = open(args.log, "a", encoding="utf-8") if args.log else sys.stdout  # noqa: SIM115 - closed below
    lock = threading.Lock()

    def write(item: ProxyIntervention) -> None:
        with lock:
            out.write(json.dumps(item.model_dump(mode="json"), ensure_ascii=False) + "\n")
            out.flush()

    from benchmark.device import DeviceError

    try:
        proxy = AdbProxy(args.serial, port=args.port, host=args.host, goal=args.goal, config=config,
                         adb_port=args.adb_port, settle_s=args.settle, fresh_s=args.fresh, on_intervention=write)
    except DeviceError as exc:  # no such device, no adb server: one line, not a traceback
        if out is not sys.stdout:
            out.close()
        raise ValueError(f"--serial {args.serial}: {exc}") from None
    except OSError as exc:
        if out is not sys.stdout:
            out.close()
        raise ValueError(f"{exc}; is something else listening there? Choose another --port") from None
    with StopSignal() as stop:
        proxy.start()
        print(f"ttir proxy: {args.serial} behind the guard on {proxy.address}"
              f"{f' (goal: {args.goal})' if args.goal else ''}\n  adb connect {proxy.address}\n{READY}",
              file=sys.stderr, flush=True)
        try:
            stop.wait()
        finally:
            proxy.close()
            if out is not sys.stdout:
                out.close()
    print("ttir proxy: " + json.dumps(proxy.summary()), file=sys.stderr)
    return 0
