"""argparse types the commands share.

- :func:`writable_file`: an option naming a file the command writes, checked while the command
  line is read;
- :func:`output_folder`: an option naming a folder the command writes into, checked the same way
  (nothing is made until the command runs);
- :func:`count` and :func:`positive_count`: an option counting steps or items (0 or more, 1 or more);
- :func:`positive_seconds`: a time limit (a finite number of seconds above 0);
- :func:`share`: a target rate (a number from 0 to 1);
- :func:`option_flag`: an option's flag from its argparse ``dest``, for messages.
"""

from __future__ import annotations

import argparse
import math
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


def positive_seconds(value: str) -> float:
    """The ``type`` of a time limit in seconds (``--timeout``): a finite number above 0 (argparse's
    ``float`` let ``-5``, ``0`` and ``nan`` through, and a request then failed at once or never
    timed out).

    Args:
        value: the option's text.

    Returns:
        The seconds.

    Raises:
        argparse.ArgumentTypeError: not a number, not finite, or 0 or less.
    """
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds above 0 (e.g. 60)")
    return seconds


def share(value: str) -> float:
    """The ``type`` of a target rate or share (``--min-precision``, ``--max-fpr``): a number from 0
    to 1 (argparse's ``float`` took ``95`` for 95 % and ``-1``, and the command then reported that
    no setting met the target).

    Args:
        value: the option's text.

    Returns:
        The share.

    Raises:
        argparse.ArgumentTypeError: not a number, or outside 0..1.
    """
    try:
        rate = float(value)
    except ValueError:
        rate = math.nan
    if not 0.0 <= rate <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{value!r} is not a share from 0 to 1 (e.g. 0.95 for 95 %)")
    return rate


def option_flag(dest: str) -> str:
    """The flag of an option from its argparse ``dest`` (``base_url`` -> ``--base-url``; a trailing
    ``_``, as in ``round_``, is argparse's way around a keyword), for the messages that name it.

    Args:
        dest: the ``dest`` of the option.

    Returns:
        The flag as typed on the command line.
    """
    return "--" + dest.rstrip("_").replace("_", "-")


def _whole_number(value: str, least: int) -> int:
    try:
        n = int(value)
    except ValueError:
        n = None
    if n is None or n < least:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of {least} or more")
    return n


__all__ = ["count", "option_flag", "output_folder", "positive_count", "positive_seconds", "share", "writable_file"]
