"""How ``ttir`` help reads: paragraphs wrapped to the terminal, indented blocks (examples,
tables) kept as written, and the grouped command list of ``ttir --help``.

- :class:`WrappedHelpFormatter` — the argparse formatter every ``ttir`` parser can use.
- :func:`command_listing` — ``ttir --help``'s commands, one titled block per group.
"""

from __future__ import annotations

import argparse
import shutil
import textwrap
from typing import Mapping

MAX_WIDTH = 100  # wider lines are hard to read even on a wide terminal


def help_width() -> int:
    """The width help is wrapped to: the terminal's (``COLUMNS``), at most :data:`MAX_WIDTH`."""
    return max(40, min(MAX_WIDTH, shutil.get_terminal_size((80, 24)).columns - 2))


class WrappedHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs wrapped paragraph by paragraph: a paragraph whose first line is not
    indented is reflowed to the terminal's width; an indented one (an example, a table) is kept
    line for line, as written."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 32,
                 width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, width or help_width())

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return wrap_paragraphs(text, width, indent)


def wrap_paragraphs(text: str, width: int, indent: str = "") -> str:
    """``text`` with each unindented paragraph reflowed to ``width`` and indented ones kept.

    Args:
        text: paragraphs separated by blank lines.
        width: the line width to wrap to.
        indent: put before every line.

    Returns:
        The wrapped text.
    """
    out: list[str] = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if lines and lines[0] and not lines[0][0].isspace():
            head: list[str] = []  # a title line ("examples:") followed by indented lines keeps them
            rest = lines
            while rest and rest[0] and not rest[0][0].isspace():
                head.append(rest[0])
                rest = rest[1:]
            para = textwrap.fill(" ".join(head), width, initial_indent=indent, subsequent_indent=indent,
                                 break_on_hyphens=False, break_long_words=False)
            out.append("\n".join([para, *(indent + line for line in rest)]))
        else:
            out.append("\n".join(indent + line for line in lines))
    return "\n\n".join(out)


def command_listing(groups: Mapping[str, Mapping[str, str]], titles: Mapping[str, str],
                    width: int | None = None) -> str:
    """The commands of ``groups`` (group -> command -> one-line help), one titled block per group,
    each help wrapped beside its command's name."""
    width = width or help_width()
    name_width = max(len(n) for g in groups.values() for n in g) + 2
    blocks = []
    for group, commands in groups.items():
        lines = [f"{titles.get(group, group)}:"]
        for name, text in commands.items():
            wrapped = textwrap.wrap(text, max(20, width - name_width - 2), break_on_hyphens=False) or [""]
            lines.append(f"  {name:<{name_width}}{wrapped[0]}")
            lines += [f"  {'':<{name_width}}{more}" for more in wrapped[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
