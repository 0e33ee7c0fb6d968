"""The ``ttir`` command line. Each sub-command lives in its own module with
``register(subparsers)``; heavy imports happen inside the command, so
``ttir --help`` is instant."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Optional, Sequence

from ttir.core.errors import TTIRError


# module name -> one-line help, in the order `ttir --help` shows them
COMMANDS: dict[str, str] = {
    "tasks": "list the benchmark tasks",
    "demo": "solve a task with its reference solution on the simulated phone, saving screenshots and XML",
    "doctor": "check that a real phone or emulator (adb) is ready, or (--vlm) that a model endpoint is",
    "serve-model": "serve the offline model of the local-model extra (SmolLM2-135M, llama.cpp) on 127.0.0.1",
    "serve-adb": "serve simulated phones as real adb devices (a task and a perturbation on them) for adb-driven agents",
    "watch": "keep a phone clear of interruptions while anything else drives it (an agent, a test suite, a person)",
    "proxy": "serve a real device behind the guard on a TCP port, for an adb-driven agent you cannot change",
    "perturbations": "list the perturbations (AndroidReality + AnTrap) with their defaults",
    "show": "see what the agent sees: a task step clean vs under a perturbation",
    "run": "run an experiment spec (clean vs perturbed, guard off vs on), resumable",
    "report": "metrics, tables (report.md), plots and a trajectory viewer (viewer.html) for a run",
    "compare": "two runs' metrics side by side with deltas (compare.md)",
    "tune": "tune the diagnosers: labelled step datasets, precision/recall, threshold sweeps, prompt A/B",
}

EPILOG = """\
quick start:
  ttir demo ContactsAddContact        solve one task on the simulated phone
  ttir tasks                          what tasks exist

Every command has its own --help. Logs go to stderr; set TTIR_LOG=DEBUG for more.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ttir",
        description="Keep mobile GUI agents on track: a simulated Android phone, realistic perturbations "
        "and a diagnose-then-recover guard (Test-Time Introspective Recovery).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="ttir 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        try:
            mod = importlib.import_module(f"ttir.cli.{name.replace('-', '_')}")
        except ImportError as exc:  # one broken command must not take the whole CLI down
            _unavailable(sub, name, help_text, exc)
            continue
        mod.register(sub, name, help_text)
    return parser


def _unavailable(sub: Any, name: str, help_text: str, exc: Exception) -> None:
    p = sub.add_parser(name, help=f"{help_text} (unavailable: {exc})")

    def fail(args: argparse.Namespace) -> int:
        print(f"ttir {name}: this command cannot load: {exc}", file=sys.stderr)
        return 2

    p.set_defaults(func=fail)


def main(argv: Optional[Sequence[str]] = None) -> int:
    import os

    from ttir import enable_logging

    enable_logging(os.environ.get("TTIR_LOG", "INFO"))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `ttir … | head` closed the pipe: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (TTIRError, KeyError, ValueError, FileNotFoundError) as exc:
        print(f"ttir {args.command}: error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only folder: one line naming the path and the cause
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"ttir {args.command}: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
