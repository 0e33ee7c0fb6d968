"""argparse types the commands share.

- :func:`writable_file`: an option naming a file the command writes, checked while the command
  line is read;
- :func:`output_folder`: an option naming a folder the command writes into, checked the same way
  (nothing is made until the command runs);
- :func:`count` and :func:`positive_count`: an option counting steps or items (0 or more, 1 or more).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path


def writable_file(value: str) -> Path:
    """The ``type`` of an option naming a file to write: its folder is made and written to while
    the command line is read, so that a path that cannot be written fails before the command's
    work (a training, an evaluation, a day of serving phones), not after it.

    Args:
        value: the option's text.

    Returns:
        The path.

    Raises:
        argparse.ArgumentTypeError: the path is a folder, or its folder cannot be made or written in.
    """
    path = Path(value)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a folder; expected a file path to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".ttir-write-check-"):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write in {path.parent} ({exc.strerror or exc}); expected a file "
                                         "path in a folder you can write to") from exc
    return path


def output_folder(value: str) -> Path:
    """The ``type`` of an option naming a folder to write into (new or existing): an existing file
    there, or a file or a folder without write access where the folder would be made, fails while
    the command line is read. Nothing is made here: a command that stops on another error leaves
    no empty folder behind.

    Args:
        value: the option's text.

    Returns:
        The path.

    Raises:
        argparse.ArgumentTypeError: the path is a file, or where it would be made cannot hold it.
    """
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a file; expected a folder to write into (a new one or an "
                                         "existing one)")
    holder = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not holder.is_dir():
        raise argparse.ArgumentTypeError(f"{holder} is a file, so the folder {value} cannot be made there; expected a "
                                         "folder path")
    if not os.access(holder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write in {holder}; expected a folder path you can write to")
    return path


def count(value: str) -> int:
    """The ``type`` of an option counting something that may be none (``--step 0``): a whole
    number of 0 or more (argparse's ``int`` let ``--step -1`` through, and it ran as 0).

    Args:
        value: the option's text.

    Returns:
        The number.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or below 0.
    """
    return _whole_number(value, 0)


def positive_count(value: str) -> int:
    """The ``type`` of an option counting something there must be some of (``--per-perturbation 0``
    built an empty dataset without a word): a whole number of 1 or more.

    Args:
        value: the option's text.

    Returns:
        The number.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or below 1.
    """
    return _whole_number(value, 1)


def _whole_number(value: str, least: int) -> int:
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or n < least:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of {least} or more")
    return n


__all__ = ["count", "output_folder", "positive_count", "writable_file"]
