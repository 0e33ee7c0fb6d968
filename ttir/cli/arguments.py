"""argparse types the commands share.

- :func:`writable_file`: an option naming a file the command writes, checked while the command
  line is read.
"""

from __future__ import annotations

import argparse
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


__all__ = ["writable_file"]
