"""Markdown tables and number formats shared by the report and the comparison."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from experiments.reports.escape import markdown_text


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: Optional[str] = None) -> str:
    """A GitHub-flavoured markdown table; ``align`` is one char per column (l/r/c), default left then right."""
    if not rows:
        return "_(no data)_\n"
    al = align or ("l" + "r" * (len(headers) - 1))
    sep = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |",
             "|" + "|".join(sep[a] for a in al) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_cell(c) for c in r) + " |")
    return "\n".join(lines) + "\n"


def _cell(v: Any) -> str:
    return markdown_text(v)  # cells carry run data (agent text, evidence, names): never live Markdown or HTML


def pct(x: Optional[float], digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}"


def signed_pct(x: Optional[float], digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:+.{digits}f}"


def num(x: Optional[float], digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def signed(x: Optional[float], digits: int = 2) -> str:
    return "–" if x is None else f"{x:+.{digits}f}"


def agent_label(agent: str, kind: str, model_free: bool = True) -> str:
    """How every table names who produced a number."""
    what = (kind + ", no model") if model_free else kind
    return f"{agent} ({what})" if agent != kind else f"{agent} ({'no model' if model_free else 'model'})"
