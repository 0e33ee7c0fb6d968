"""The ``ttir`` command line. Each sub-command lives in its own module with
``register(subparsers)``; heavy imports happen inside the command, so
``ttir --help`` is instant."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any, Optional, Sequence

from pydantic import ValidationError

from ttir.core.errors import TTIRError
from ttir.core.validation import error_lines


# group -> command (module name, '-' for '_') -> one-line help, in the order `ttir --help` shows them.
# A new command is one line in its group.
COMMANDS: dict[str, dict[str, str]] = {
    "run": {
        "demo": "solve a task with its reference solution on the simulated phone, saving screenshots and XML",
        "run": "run an experiment spec (clean vs perturbed, guard off vs on), resumable",
        "checkpoints": "first-error checkpoints of a run (AndroidFlux): agents resumed before, at and after the error",
    },
    "inspect": {
        "tasks": "list the benchmark tasks",
        "perturbations": "list the perturbations (AndroidReality's, AnTrap's traps, and those beyond the papers) with their defaults",
        "show": "see what the agent sees: a task step, clean or under a perturbation (side by side)",
        "report": "metrics, tables (report.md), plots and a trajectory viewer (viewer.html) for a run",
        "compare": "two runs' metrics side by side with deltas (compare.md)",
    },
    "phones": {
        "doctor": "check that a real phone or emulator (adb) is ready, or (--vlm) that a model endpoint is",
        "serve-adb": "serve simulated phones as real adb devices (a task and a perturbation on them) for adb-driven agents",
        "proxy": "guard an adb agent you cannot change: an adb device that forwards to the phone and guards each input",
        "watch": "keep a phone clear of interruptions while anything else drives it (an agent, a test suite, a person)",
        "serve-model": "serve the offline model of the local-model extra (SmolLM2-135M, llama.cpp) on 127.0.0.1",
    },
    "tune": {
        "tune": "tune the diagnosers: labelled step datasets, precision/recall, threshold sweeps, prompt A/B",
    },
}
GROUP_TITLES = {"run": "run experiments", "inspect": "inspect tasks, perturbations and runs",
                "phones": "phones and models", "tune": "tune the guard"}

EPILOG = """\
quick start:
  ttir demo ContactsAddContact        solve one task on the simulated phone
  ttir tasks                          what tasks exist

Every command has its own help: ttir help COMMAND (or ttir COMMAND --help). Logs go to stderr; set
TTIR_LOG=DEBUG for more.
"""


def command_help() -> dict[str, dict[str, str]]:
    """:data:`COMMANDS` as ``ttir --help`` lists them (no package is imported for it: the help stays instant)."""
    return COMMANDS


class _TopParser(argparse.ArgumentParser):
    """``ttir``'s parser: its help lists the commands by group."""

    def format_help(self) -> str:
        from ttir.cli.helptext import command_listing, wrap_paragraphs, help_width

        width = help_width()
        return "\n".join([self.format_usage().rstrip(), "", wrap_paragraphs(self.description or "", width), "",
                          command_listing(command_help(), GROUP_TITLES, width), "",
                          "options:", "  -h, --help   show this help and exit", "  --version    the version", "",
                          wrap_paragraphs(EPILOG, width)])


def build_parser() -> argparse.ArgumentParser:
    from ttir.cli.helptext import WrappedHelpFormatter

    parser = _TopParser(
        prog="ttir",
        usage="ttir [-h] [--version] COMMAND ...",
        description="Keep mobile GUI agents on track: a simulated Android phone, realistic perturbations "
        "and a diagnose-then-recover guard (Test-Time Introspective Recovery).",
        formatter_class=WrappedHelpFormatter,
    )
    parser.add_argument("--version", action="version", version="ttir 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_SubParser, prog="ttir")
    for commands in COMMANDS.values():
        for name, help_text in commands.items():
            try:
                mod = importlib.import_module(f"ttir.cli.{name.replace('-', '_')}")
            except ImportError as exc:  # one broken command must not take the whole CLI down
                _unavailable(sub, name, help_text, exc)
                continue
            mod.register(sub, name, help_text)
    return parser


class _SubParser(argparse.ArgumentParser):
    """A command's parser: its help wrapped to the terminal (whatever formatter the command asked for)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        from ttir.cli.helptext import WrappedHelpFormatter

        return WrappedHelpFormatter(prog=self.prog)

    def parse_known_args(self, args: Optional[Sequence[str]] = None,
                         namespace: Optional[argparse.Namespace] = None) -> tuple[argparse.Namespace, list[str]]:
        """Parse a command's arguments; one it does not know is its own error.

        argparse hands what a command's parser does not know back to ``ttir``'s own parser, which
        then printed ``ttir``'s usage for ``ttir demo --task X``: the command that was misread
        (the innermost, ``ttir tune eval``, parses first) names it under its own usage instead.

        Args:
            args: the command's arguments.
            namespace: where to store them.

        Returns:
            The namespace and no left-over arguments (exits with status 2 on any).
        """
        ns, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)} (see `{self.prog} --help`)")
        return ns, extras


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
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["help"]:  # `ttir help CMD [SUB]` is `ttir CMD [SUB] --help`
        argv = [*argv[1:], "--help"]
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
        print(f"ttir {args.command}: error: {_error_text(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only folder: one line naming the path and the cause
        print(f"ttir {args.command}: error: {_error_text(exc)}", file=sys.stderr)
        return 1


def _error_text(exc: BaseException) -> str:
    """One line for an error: an OS error's cause and path (its ``args[0]`` is an errno, not a
    message), a validation error's problems in the config's own words, joined by "; " (pydantic's
    text names its classes and a web page), otherwise the message (a KeyError's without the
    quotes ``str`` adds)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f" ({exc.filename})" if exc.filename else "")
    if isinstance(exc, ValidationError):
        return "invalid setting: " + "; ".join(error_lines(exc))
    return str(exc.args[0]) if exc.args else str(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
