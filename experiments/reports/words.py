"""The report's own words (``text.yaml``) and sizes as people read them, for every report
module (one place: the markdown report, the comparison and the CLI all read them here)."""

from __future__ import annotations

import re
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


_LABEL = re.compile(r"^(?P<name>[^{@]+)(?:\{(?P<params>.*)\})?(?:@(?P<dump>[a-z_]+))?$")
_PARAM = re.compile(r"(?:^|,)(\w[\w.]*)=")


def setting_words(label: str) -> str:
    """A perturbation label as people read it: ``rate_dialog{language=zh}@focused_window`` ->
    ``rate_dialog (language: zh; focused-window dump)``. Labels stay the report's keys; this is
    how they are shown.

    Args:
        label: a perturbation label (``experiments.metrics.episodes.perturbation_label``).

    Returns:
        The label in words; a label of another shape is returned as it is.
    """
    m = _LABEL.match(label)
    if m is None or not (m["params"] or m["dump"]):
        return label
    parts = []
    if m["params"]:
        found = list(_PARAM.finditer(m["params"]))
        for i, f in enumerate(found):
            end = found[i + 1].start() if i + 1 < len(found) else len(m["params"])
            parts.append(f"{f.group(1)}: {m['params'][f.end():end]}")
    if m["dump"]:
        parts.append(f"{m['dump'].replace('_', '-')} dump")
    return f"{m['name']} ({'; '.join(parts)})"


def load_text() -> dict[str, Any]:
    """The report's headings and sentences (``experiments/reports/text.yaml``)."""
    import yaml

    return yaml.safe_load(TEXT_FILE.read_text(encoding="utf-8"))


__all__ = ["TEXT_FILE", "human_size", "load_text"]
