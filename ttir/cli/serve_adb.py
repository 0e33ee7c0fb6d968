"""``ttir serve-adb``: simulated phones as real adb devices, for any adb-driven agent."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional

from ttir.cli.arguments import count, writable_file
from ttir.cli.stopping import StopSignal

DESCRIPTION = """\
Serve N simulated phones over the adb protocol on consecutive TCP ports, as
`adbd` does after `adb tcpip`. Point any agent that drives a phone through adb
at them: `adb connect 127.0.0.1:PORT`, then `adb -s 127.0.0.1:PORT shell input
tap 540 1200`, `adb exec-out screencap -p`, `adb shell uiautomator dump`,
`adb pull`, adbutils, Appium-free scripts ... no emulator needed.

With --task the phones are set up for that task (seeded by --seed), and with
--perturb the perturbation is active on them: pop-ups composited into
`screencap` and the UI dump (taps on them are routed to their buttons),
settings perturbations visible through `settings get`.

Verdict (from the phone's app state, as every task is verified) and the
perturbation event log, while it runs:
  ttir serve-adb --verdict PORT       (via the adb server; JSON)
  adb -s 127.0.0.1:PORT shell cmd ttir task verify
  adb -s 127.0.0.1:PORT shell cmd ttir events
On Ctrl-C / SIGTERM the phones stop, the final verdicts are printed (and
written to --out FILE as JSON).
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=5555, help="TCP port of the first phone (default 5555)")
    p.add_argument("--phones", type=int, default=1, metavar="N", help="how many phones, on PORT, PORT+1, ... (default 1)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--task", default=None, metavar="T", help="set the phones up for task T (see `ttir tasks`)")
    p.add_argument("--perturb", action="append", default=[], metavar="P",
                   help="a perturbation active on the phones (see `ttir perturbations`); may be repeated")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="task parameters (suite seed, AndroidWorld instance seeding) and perturbation realisation")
    p.add_argument("--instance", type=count, default=None, metavar="I", help="--task: the task instance (default 0)")
    p.add_argument("--out", type=writable_file, default=None, metavar="FILE",
                   help="on stop, write the verdicts here (JSON; checked when the command starts)")
    p.add_argument("--verdict", type=int, default=None, metavar="PORT",
                   help="do not serve: print the verdict and event log of the phone served on PORT, and exit")
    p.add_argument("--adb-port", type=int, default=None,
                   help="with --verdict: the adb server's port (default ANDROID_ADB_SERVER_PORT or 5037)")
    p.set_defaults(func=run)


def build_device(task: Any, perturbations: list[str], seed: int) -> Any:
    """A simulated phone, wrapped by the perturbations (one fresh set per phone)."""
    from benchmark import SimDevice

    device: Any = SimDevice()
    if perturbations:
        from perturb import PerturbedDevice, make

        budget = task.budget if task is not None else None
        device = PerturbedDevice(device, [make(p) for p in perturbations], seed=seed, budget=budget)
    return device


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine.

    Args:
        host: the ``--host`` value.

    Returns:
        True for ``localhost`` and loopback addresses; False for any other (``0.0.0.0``, a LAN address).
    """
    import ipaddress

    if host.strip().lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name other than localhost: it may resolve to any interface


# what serving takes and --verdict (which serves nothing) does not, with the defaults: they were ignored
SERVING_OPTIONS: dict[str, Any] = {"port": 5555, "phones": 1, "task": None, "perturb": [], "seed": 0,
                                   "instance": None, "out": None}


def run(args: argparse.Namespace) -> int:
    if args.verdict is not None:
        given = [n for n, default in SERVING_OPTIONS.items() if getattr(args, n) != default]
        if given:
            raise ValueError(f"{', '.join('--' + n for n in given)}: options of serving phones; --verdict serves "
                             "none (it asks the phone already served on its PORT)")
        return show_verdict(args.verdict, args.host, args.adb_port)
    if args.adb_port is not None:
        raise ValueError("--adb-port: only with --verdict (the adb server it asks); serving phones needs none")
    if args.phones < 1:
        raise ValueError(f"--phones={args.phones} must be >= 1")
    if not 0 < args.port or args.port + args.phones - 1 > 65535:
        raise ValueError(f"--port={args.port} with --phones={args.phones} leaves the TCP port range (1..65535)")
    from loguru import logger

    from benchmark import make_task
    from benchmark.devices.adbd import AdbDaemon, ServedPhone

    if args.instance is not None and not args.task:
        raise ValueError(f"--instance {args.instance} picks an instance of --task, and no --task was given; "
                         "add --task NAME (see `ttir tasks`)")
    task = make_task(args.task, seed=args.seed, i=args.instance or 0) if args.task else None
    if args.perturb:
        from perturb import REGISTRY
        from ttir.core.errors import UnknownNameError, resolve_name

        try:  # a name in any case; an unknown one with the closest known one
            args.perturb = [resolve_name("perturbation", p, REGISTRY, see="ttir perturbations") for p in args.perturb]
        except UnknownNameError as exc:
            raise ValueError(f"--perturb: {exc}") from None
    if not is_loopback(args.host):
        print(f"WARNING: --host {args.host} serves these phones to the network with no authentication: anyone who "
              "can reach this machine may run shell commands on them (file writes, settings) and start or stop "
              "their tasks. Use the default --host 127.0.0.1 unless the network is yours alone.", file=sys.stderr)
        logger.warning("serve-adb: listening on non-loopback address {} without authentication", args.host)
    daemons: list[Any] = []
    try:
        for k in range(args.phones):
            port = args.port + k
            phone = ServedPhone(build_device(task, args.perturb, args.seed), serial=f"ttir-sim-{port}")
            if task is not None or args.perturb:
                phone.start_task(task)
            try:
                daemons.append(AdbDaemon(phone, host=args.host, port=port).start())
            except OSError as exc:
                raise ValueError(f"{exc}; is something else listening there? Choose another --port") from None
        with StopSignal() as stop:
            _announce(daemons, task, args)
            stop.wait()
    finally:
        for d in daemons:
            d.close()
    verdicts = [d.phone.verdict() | {"address": d.address} for d in daemons]
    for v in verdicts:
        if v["task"] is not None:
            print(f"{v['address']}: {v['task']} success={v['success']} after {v['actions']} actions, "
                  f"{len(v['events'])} perturbation events", flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(verdicts, indent=1, default=str), encoding="utf-8")
        print(f"verdicts -> {args.out}")
    logger.info("served phones stopped")
    return 0


def _announce(daemons: list[Any], task: Any, args: argparse.Namespace) -> None:
    what = [f"task {task.name}" if task is not None else "no task", *(f"perturbation {p}" for p in args.perturb)]
    print(f"serving {len(daemons)} simulated phone(s) ({', '.join(what)}, seed {args.seed}):")
    for d in daemons:
        print(f"  adb connect {d.address}")
    if task is not None:
        print(f"goal: {task.goal}")
        first = daemons[0]
        print(f"verdict: ttir serve-adb --verdict {first.port}   (or: adb -s {first.address} shell cmd ttir task verify)")
    if args.perturb:
        print(f"events:  adb -s {daemons[0].address} shell cmd ttir events")
    from benchmark.devices.adbd.spawn import READY  # what spawn() waits for

    print(READY, flush=True)


def show_verdict(port: int, host: str, adb_port: Optional[int]) -> int:
    import adbutils

    from benchmark.devices.adb import commands as cmd
    from benchmark.devices.adb.transport import ensure_server, server_address

    server_host, server_port = server_address(None, adb_port)
    ensure_server(server_host, server_port)
    client = adbutils.AdbClient(host=server_host, port=server_port)
    serial = f"{host}:{port}"
    try:
        if serial not in {d.serial for d in client.list()}:
            client.connect(serial, timeout=10)
        out = client.device(serial).shell(cmd.TTIR_TASK_VERIFY)
    except Exception as exc:  # noqa: BLE001 - adbutils' errors, in plain words
        print(f"ttir serve-adb: no served phone answers at {serial} (through the adb server at "
              f"{server_host}:{server_port}): {exc}. Is `ttir serve-adb --port {port}` running?", file=sys.stderr)
        return 1
    if not out.strip().startswith("{"):
        print(f"ttir serve-adb: {serial} gave no verdict: {out.strip()[:300]}", file=sys.stderr)
        return 1
    print(json.dumps(json.loads(out), indent=1))
    return 0
