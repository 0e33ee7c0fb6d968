"""``ttir doctor``: check that a real phone or emulator is ready for ttir (``--vlm``: a model endpoint)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ttir.cli.arguments import option_flag

DESCRIPTION = """\
Check, in order, everything a run on a real phone or emulator needs, and say in
plain words what is missing and how to fix it. The state-knob checks change a
setting for a moment and put it back (also if you press Ctrl-C).

checks:
  adb server          an adb server answers at --host:--port (default 127.0.0.1:5037, or
                      ANDROID_ADB_SERVER_HOST/PORT); if none runs, adbutils' bundled adb
                      is started, unless --no-start-server
  device              exactly one device is chosen (--serial, else ANDROID_SERIAL, else the
                      only one attached) and it is authorised: "unauthorised" means the
                      "Allow USB debugging?" prompt on the phone has not been accepted
  leftover settings   an earlier run that was killed left settings changed: they are
                      restored now (warn)
  android             the API level (a few commands differ between versions)
  screencap           a screenshot can be taken; the latency is what every step will pay
  uiautomator dump    the UI tree can be dumped; latency and node count
  foreground app      dumpsys names the app in front (warn only: the UI tree's package is
                      the fallback)
  settings writable   `settings put system` works for the adb shell user
  knob NAME           each state knob the perturbations turn (font_scale, density_scale,
                      size_scale, dark_theme, orientation, time_format, date_format,
                      brightness) is set, read back and restored; date_format is best
                      effort (Android 8+ formats dates from the locale)

With --vlm, it checks a model endpoint instead (any OpenAI-compatible one: the
offline `ttir serve-model`, vLLM, Ollama, OpenAI; default TTIR_VLM_BASE_URL /
TTIR_VLM_MODEL / TTIR_VLM_API_KEY):
  reachable           GET /models answers
  model listed        the model is among those it serves (warn: some servers answer any name)
  structured replies  a reply with a JSON schema comes back parsed, and in which form:
                      response_format json_schema (OpenAI, vLLM), json_object + schema
                      (llama-cpp-python), or none (plain text, parsed leniently: warn)
  images              a 32x32 image is accepted (warn if not: a text-only model gets the
                      accessibility tree as numbered text elements instead)

Status: ok / warn (works with a caveat) / fail / skip (could not run: an earlier check
failed). The exit code is 0 when every needed check passed, 1 otherwise.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serial", default=None, help="device serial, as `adb devices` lists it (default: "
                   "ANDROID_SERIAL, else the only attached device)")
    p.add_argument("--host", default=None, help="adb server host (default ANDROID_ADB_SERVER_HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="adb server port (default ANDROID_ADB_SERVER_PORT or 5037)")
    p.add_argument("--no-start-server", dest="start_server", action="store_false",
                   help="do not start an adb server when none answers")
    p.add_argument("--skip-knobs", dest="knobs", action="store_false",
                   help="do not change any setting (skips the knob round trips)")
    p.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                   help="wait after each setting change before reading it back (default 1.0)")
    p.add_argument("--vlm", action="store_true", help="check a model endpoint instead of a phone")
    p.add_argument("--base-url", default=None, help="--vlm: the endpoint (default TTIR_VLM_BASE_URL)")
    p.add_argument("--model", default=None, help="--vlm: the model name (default TTIR_VLM_MODEL)")
    p.add_argument("--api-key", default=None, help="--vlm: the API key (default TTIR_VLM_API_KEY, or EMPTY)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="--vlm: per-request timeout (default 120: a small local model on a busy CPU is slow)")
    p.set_defaults(func=run)


MARKS = {"ok": " ok ", "warn": "warn", "fail": "FAIL", "skip": "skip"}


# the options of each check: a phone's (adb) and an endpoint's (--vlm), with their defaults; given to
# the other check they were ignored (`ttir doctor --base-url URL` without --vlm checked a phone)
PHONE_OPTIONS: dict[str, Any] = {"serial": None, "host": None, "port": None, "start_server": True, "knobs": True,
                                 "settle": 1.0}
VLM_OPTIONS: dict[str, Any] = {"base_url": None, "model": None, "api_key": None, "timeout": 120.0}


def _other_checks_options(args: argparse.Namespace) -> None:
    """Refuse an option of the other check; fill in this check's defaults."""
    own, other = (VLM_OPTIONS, PHONE_OPTIONS) if args.vlm else (PHONE_OPTIONS, VLM_OPTIONS)
    given = [n for n, default in other.items() if getattr(args, n) is not None and getattr(args, n) != default]
    if given:
        flag = {"start_server": "--no-start-server", "knobs": "--skip-knobs"}
        names = ", ".join(flag.get(n, option_flag(n)) for n in given)
        if args.vlm:
            raise ValueError(f"{names}: for a phone's check (ttir doctor without --vlm); --vlm checks a model endpoint")
        raise ValueError(f"{names}: for the model endpoint's check; add --vlm "
                         f"(ttir doctor --vlm {names.split(', ')[0]} …)")
    for name, default in own.items():
        if getattr(args, name) is None:
            setattr(args, name, default)


def run(args: argparse.Namespace) -> int:
    _other_checks_options(args)
    if args.vlm:
        return run_vlm(args)
    from benchmark.devices.adb.doctor import run_checks

    if args.settle < 0:
        raise ValueError(f"--settle={args.settle} must be >= 0 seconds")
    return report(run_checks(serial=args.serial, host=args.host, port=args.port, start_server=args.start_server,
                             knobs=args.knobs, settle_seconds=args.settle),
                  "this device can run ttir's real-device benchmark")


def run_vlm(args: argparse.Namespace) -> int:
    from ttir.core.config import VLMConfig
    from ttir.model.doctor import run_vlm_checks

    if args.timeout <= 0:
        raise ValueError(f"--timeout={args.timeout} must be > 0 seconds")
    config = VLMConfig(base_url=args.base_url, model=args.model, api_key=args.api_key, timeout_s=args.timeout)
    return report(run_vlm_checks(config), "ttir's model tier can use this endpoint")


def report(checks: Any, ready: str) -> int:
    blocking: list[str] = []
    for check in checks:
        print(f"[{MARKS[check.status]}] {check.name}: {check.detail}", flush=True)
        if check.blocking:
            blocking.append(check.name)
    if blocking:
        print(f"\nnot ready: {len(blocking)} needed check(s) failed ({', '.join(blocking)}); see the messages above.",
              file=sys.stderr)
        return 1
    print(f"\nready: {ready}.")
    return 0
