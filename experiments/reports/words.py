"""The report's own words (``text.yaml``) and sizes as people read them, for every report
module (one place: the markdown report, the comparison and the CLI all read them here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TEXT_FILE = Path(__file__).with_name("text.yaml")


def human_size(n: int) -> str:
    """``n`` bytes as bytes, KB or MB.

    Args:
        n: a size in bytes.

    Returns:
        e.g. ``"512 bytes"``, ``"1.5 KB"``, ``"12.0 MB"``.
    """
    size = float(n)
    for unit in ("bytes", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{n} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover


def load_text() -> dict[str, Any]:
    """The report's headings and sentences (``experiments/reports/text.yaml``)."""
    import yaml

    return yaml.safe_load(TEXT_FILE.read_text(encoding="utf-8"))


__all__ = ["TEXT_FILE", "human_size", "load_text"]
