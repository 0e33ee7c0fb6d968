"""Observations and histories as prompt text (shared by the guard's model tier and
the VLM agent): one line per step, one line per meaningful UI element."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ttir.types import Observation, StepRecord

THOUGHT_CHARS = 300
TREE_LINES = 120
PREVIOUS_TREE_LINES = 60


def clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_history(history: Sequence[StepRecord], last: int, *, first_index: int = 0) -> str:
    """The last ``last`` steps as text: action, source, app, summary and thought."""
    if last <= 0 or not history:
        return "(no previous steps)"
    shown = list(history)[-last:]
    start = first_index + len(history) - len(shown)
    lines = []
    for i, rec in enumerate(shown):
        app = rec.observation.package or "unknown app"
        lines.append(f"- step {start + i + 1} ({rec.source}, on {app}): {rec.step.action.describe()}")
        if rec.step.summary:
            lines.append(f"  summary: {clip(rec.step.summary, THOUGHT_CHARS)}")
        if rec.step.thought:
            lines.append(f"  thought: {clip(rec.step.thought, THOUGHT_CHARS)}")
    return "\n".join(lines)


def _interesting(obs: Observation, i: int) -> bool:
    e = obs.elements[i]
    return bool(e.text or e.content_desc or e.resource_id or e.hint or e.clickable or e.editable
                or e.scrollable or e.checkable or e.long_clickable)


def compact_tree(obs: Observation, max_lines: int = TREE_LINES) -> str:
    """The UI tree as one line per meaningful element, keeping its real index:
    ``[12] Button "Save" id=save (x1,y1,x2,y2) clickable``."""
    lines = []
    foreground = obs.package
    for i, e in enumerate(obs.elements):
        if not _interesting(obs, i):
            continue
        parts = [f"[{i}]", e.class_name.rsplit(".", 1)[-1] or "View"]
        if e.text:
            parts.append(f'"{clip(e.text, 60)}"')
        if e.content_desc:
            parts.append(f'desc="{clip(e.content_desc, 60)}"')
        if e.hint and not e.text:
            parts.append(f'hint="{clip(e.hint, 40)}"')
        if e.short_id:
            parts.append(f"id={e.short_id}")
        if e.package and foreground and e.package != foreground:
            parts.append(f"pkg={e.package}")
        parts.append("(%d,%d,%d,%d)" % e.bounds)
        flags = [f for f in ("clickable", "editable", "scrollable", "checked", "focused", "selected") if getattr(e, f)]
        if not e.enabled:
            flags.append("disabled")
        parts.extend(flags)
        lines.append(" ".join(parts))
    if not lines:
        return "(the accessibility tree is empty)"
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… {len(lines) - max_lines} more elements not shown"]
    return "\n".join(lines)


def _foreground(obs: Observation) -> str:
    return f"Foreground app: {obs.foreground}." if obs.foreground else "Foreground app: unknown."


def describe_screens(current: Observation, previous: Optional[Observation] = None, *,
                     include_tree: bool = False) -> tuple[str, list[Any]]:
    """The ``screen`` text for a prompt and the images to attach.

    With a current screenshot: the previous screenshot (when there is one) and
    the current one, labelled in order. Without: the current UI tree as
    compact text (and the previous tree, shorter), so a tree-only deployment
    still gets a judgment.
    """
    images: list[Any] = []
    lines = [_foreground(current) + f" Screen size {current.screen_size[0]}x{current.screen_size[1]}."]
    if current.screenshot is not None:
        if previous is not None and previous.screenshot is not None:
            images = [previous.screenshot, current.screenshot]
            lines.append("Image 1 is the screen the last step was decided on (before it was executed); "
                         "Image 2 is the current screen.")
        else:
            images = [current.screenshot]
            lines.append("The attached image is the current screen.")
        if include_tree and current.elements:
            lines.append("Accessibility tree of the current screen ([index] class text id bounds flags):")
            lines.append(compact_tree(current))
        return "\n".join(lines), images
    lines.append("No screenshot is available. Accessibility tree of the current screen "
                 "([index] class text id bounds flags):")
    lines.append(compact_tree(current) if current.elements else "(no accessibility tree either)")
    if previous is not None and previous.elements:
        lines.append("")
        lines.append("For comparison, the screen the last step was decided on:")
        lines.append(compact_tree(previous, PREVIOUS_TREE_LINES))
    return "\n".join(lines), images
