"""Helpers shared by the row-based app tasks (expenses, recipes): goal text for a
list of rows, and the loose text comparison AndroidWorld uses for free-form fields."""

from __future__ import annotations

import csv
import io
from typing import Any, Literal, Sequence

TextStyle = Literal["csv", "text_block"]


def rows_as_text(rows: Sequence[dict[str, Any]], fields: Sequence[tuple[str, str]], style: TextStyle) -> str:
    """Render rows for a goal. ``fields`` pairs a row key with its column label.

    csv: a header line plus one quoted CSV line per row; text_block: one
    "Label: value, Label: value" line per row."""
    if style == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([label for _, label in fields])
        for r in rows:
            w.writerow([r[key] for key, _ in fields])
        return buf.getvalue().rstrip("\n")
    if style == "text_block":
        return "\n".join(", ".join(f"{label}: {r[key]}" for key, label in fields) for r in rows)
    raise ValueError(f"style={style!r} is not a text style; expected 'csv' or 'text_block'")


def norm(value: str) -> str:
    """Case- and whitespace-insensitive form of free text (AndroidWorld's fuzzy match is similar)."""
    return " ".join(str(value).replace("\r", "").split()).casefold().rstrip(".")
