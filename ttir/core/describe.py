"""Observations and histories as prompt text (shared by the guard's model tier and
the VLM agent): one line per step, one line per meaningful UI element.

Everything taken from a screen, an agent or a model is untrusted: each value is
one line, clipped and quoted, and each block is fenced as data (:mod:`ttir.core.prompt_data`).
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from ttir.core.prompt_data import escape_tags, fence, one_line, quote
from ttir.core.types import Action, Observation, StepRecord

THOUGHT_CHARS = 300
ACTION_CHARS = 200
TEXT_CHARS = 60
TREE_LINES = 120
PREVIOUS_TREE_LINES = 60
_NOT_NAME = re.compile(r"[^\w.$/:-]")  # what a package, activity or class name cannot hold

clip = one_line  # the name the rest of the code base knows


def name_token(text: Optional[str], limit: int = 80) -> str:
    """A package / activity / class name as a bare token: anything a name cannot hold is dropped."""
    return _NOT_NAME.sub("", one_line(text or "", limit))


def describe_action(action: Action) -> str:
    """``click(x=540, y=1200)`` on one line, clipped (typed text is the agent's: repr-quoted)."""
    return escape_tags(one_line(action.describe(), ACTION_CHARS))


def describe_history(history: Sequence[StepRecord], last: int, *, first_index: int = 0) -> str:
    """The last ``last`` steps as text: action, source, app, summary and thought."""
    if last <= 0 or not history:
        return "(no previous steps)"
    shown = list(history)[-last:]
    start = first_index + len(history) - len(shown)
    lines = []
    for i, rec in enumerate(shown):
        app = name_token(rec.observation.package) or "unknown app"
        lines.append(f"- step {start + i + 1} ({rec.source}, on {app}): {describe_action(rec.step.action)}")
        if rec.step.summary:
            lines.append(f"  summary: {quote(rec.step.summary, THOUGHT_CHARS)}")
        if rec.step.thought:
            lines.append(f"  thought: {quote(rec.step.thought, THOUGHT_CHARS)}")
    return fence("steps so far", "\n".join(lines))


def _interesting(obs: Observation, i: int) -> bool:
    e = obs.elements[i]
    return bool(e.text or e.content_desc or e.resource_id or e.hint or e.clickable or e.editable
                or e.scrollable or e.checkable or e.long_clickable)


def compact_tree(obs: Observation, max_lines: int = TREE_LINES) -> str:
    """The UI tree as one line per meaningful element, keeping its real index:
    ``[12] Button "Save" id="save" (x1,y1,x2,y2) clickable``. Texts, ids and packages
    are quoted (:func:`ttir.core.prompt_data.quote`): the app wrote them."""
    lines = []
    hidden = 0
    foreground = obs.package
    for i, e in enumerate(obs.elements):
        if not _interesting(obs, i):
            continue
        if len(lines) >= max_lines:  # counted, not formatted: a dump can hold tens of thousands of nodes
            hidden += 1
            continue
        parts = [f"[{i}]", name_token(e.class_name.rsplit(".", 1)[-1], 40) or "View"]
        if e.text:
            parts.append(quote(e.text, TEXT_CHARS))
        if e.content_desc:
            parts.append("desc=" + quote(e.content_desc, TEXT_CHARS))
        if e.hint and not e.text:
            parts.append("hint=" + quote(e.hint, 40))
        if e.short_id:
            parts.append("id=" + quote(e.short_id, TEXT_CHARS))
        if e.package and foreground and e.package != foreground:
            parts.append("pkg=" + quote(e.package, TEXT_CHARS))
        parts.append("(%d,%d,%d,%d)" % e.bounds)
        flags = [f for f in ("clickable", "editable", "scrollable", "checked", "focused", "selected") if getattr(e, f)]
        if not e.enabled:
            flags.append("disabled")
        parts.extend(flags)
        lines.append(" ".join(parts))
    if not lines:
        return "(the accessibility tree is empty)"
    if hidden:
        lines.append(f"… {hidden} more elements not shown")
    return "\n".join(lines)


def _foreground(obs: Observation) -> str:
    return f"Foreground app: {name_token(obs.foreground, 120) or 'unknown'}."


def describe_screens(current: Observation, previous: Optional[Observation] = None, *,
                     include_tree: bool = False, vision: bool = True) -> tuple[str, list[Any]]:
    """The ``screen`` text for a prompt and the images to attach.

    With a current screenshot (and ``vision``): the previous screenshot (when there
    is one) and the current one, labelled in order. Without, or for a text-only
    model (``vision=False``): the current UI tree as numbered elements (and the
    previous tree, shorter), as AndroidWorld's T3A agent reads the screen.
    """
    images: list[Any] = []
    lines = [_foreground(current) + f" Screen size {current.screen_size[0]}x{current.screen_size[1]}."]
    if current.screenshot is not None and vision:
        if previous is not None and previous.screenshot is not None:
            images = [previous.screenshot, current.screenshot]
            lines.append("Image 1 is the screen the last step was decided on (before it was executed); "
                         "Image 2 is the current screen.")
        else:
            images = [current.screenshot]
            lines.append("The attached image is the current screen.")
        if include_tree and current.elements:
            lines.append("Accessibility tree of the current screen ([index] class text id bounds flags):")
            lines.append(fence("accessibility tree of the current screen", compact_tree(current)))
        return "\n".join(lines), images
    lines.append(("No screenshot is available. " if vision else "The screens are given as text. ")
                 + "Accessibility tree of the current screen ([index] class text id bounds flags):")
    lines.append(fence("accessibility tree of the current screen", compact_tree(current))
                 if current.elements else "(no accessibility tree either)")
    if previous is not None and previous.elements:
        lines.append("")
        lines.append("For comparison, the screen the last step was decided on:")
        lines.append(fence("accessibility tree of the previous screen", compact_tree(previous, PREVIOUS_TREE_LINES)))
    return "\n".join(lines), images
