"""The step-row format of a tuning dataset: one JSON object per line.

``ttir tune build`` writes it from recorded runs; a user writes the same format to
label trajectories from their own phone. A row is one decision of an agent: the
goal, the screen it decided on, the steps before it, and the labels (any subset).

    {"goal": "Turn on Wi-Fi", "observation": {"xml": "s1.xml", "foreground": "com.android.settings"},
     "history": [{"observation": {"xml": "s0.xml"}, "action": {"action_type": "click", "x": 540, "y": 860},
                  "summary": "Tap \\"Network & internet\\""}],
     "labels": {"previous_intended_effect_satisfied": "no", "interference_present": false}}

Fields (paths are relative to the JSONL file's folder; ``xml`` may also be the
dump itself, starting with ``<``):

- ``goal`` (required): the task as the agent was given it;
- ``observation``: ``screenshot`` (PNG/JPEG path), ``xml`` (uiautomator dump),
  ``foreground`` (package or package/activity), ``screen_size`` ([w, h], only
  needed without XML); every field optional — a row with no screenshot is
  judged from the tree, one with no XML from the pixels;
- ``history``: the previous steps, oldest first; the last one led to
  ``observation``. Each: ``observation`` (as above), ``action`` (the JSON action:
  ``action_type``, ``x``, ``y``, ``text`` …), ``thought``, ``summary`` (the
  intended effect, in words), ``source`` (``agent`` or ``recovery``);
- ``pending``: the step about to be taken, only for a ``status: complete`` claim
  (the task-alignment check judges the claim);
- ``labels``: ``interference_present`` (bool), ``previous_intended_effect_satisfied``
  ("yes" / "no"), ``repeat_failure_detected`` (bool), ``task_alignment``
  ("on_track" / "off_track"); a missing or null label is not scored;
- ``id`` and ``meta`` (free-form; ``perturbation``, ``component``, ``agent`` and
  ``clean`` drive the breakdowns).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ttir.core.dump import MAX_CHARS as MAX_DUMP_CHARS
from ttir.core.types import Action
from ttir.core.validation import error_lines

# the longest line read: a row may hold its screen's dump inline, and its history's (a few screens)
MAX_LINE_CHARS = 4 * MAX_DUMP_CHARS


class ObservationRef(BaseModel):
    """Where one screen's screenshot and UI dump are."""

    model_config = ConfigDict(extra="forbid")

    screenshot: Optional[str] = Field(None, description="Screenshot file (PNG/JPEG), relative to the JSONL file.")
    xml: Optional[str] = Field(None, description="uiautomator dump file, or the dump itself.")
    foreground: Optional[str] = Field(None, description="Foreground package (or package/activity).")
    screen_size: Optional[tuple[int, int]] = Field(None, description="Screen size in pixels, when there is no XML.")


class HistoryEntry(BaseModel):
    """One past step: the screen it was decided on and what the agent did."""

    model_config = ConfigDict(extra="forbid")

    observation: ObservationRef = Field(default_factory=ObservationRef)
    action: dict[str, Any]
    thought: str = ""
    summary: str = ""
    source: Literal["agent", "recovery"] = "agent"

    @field_validator("action")
    @classmethod
    def _valid_action(cls, v: dict[str, Any]) -> dict[str, Any]:
        Action(**v)  # raises with the field named
        return v


class PendingStep(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: dict[str, Any]
    thought: str = ""
    summary: str = ""

    @field_validator("action")
    @classmethod
    def _valid_action(cls, v: dict[str, Any]) -> dict[str, Any]:
        Action(**v)
        return v


class Labels(BaseModel):
    """The diagnosers' questions, answered (any subset)."""

    model_config = ConfigDict(extra="forbid")

    interference_present: Optional[bool] = None
    previous_intended_effect_satisfied: Optional[Literal["yes", "no"]] = None
    repeat_failure_detected: Optional[bool] = None
    task_alignment: Optional[Literal["on_track", "off_track"]] = None


class StepRow(BaseModel):
    """One decision step with its labels."""

    model_config = ConfigDict(extra="forbid")

    id: Optional[str] = None
    goal: str
    observation: ObservationRef = Field(default_factory=ObservationRef)
    history: list[HistoryEntry] = Field(default_factory=list)
    pending: Optional[PendingStep] = None
    labels: Labels = Field(default_factory=Labels)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def perturbation(self) -> str:
        return str(self.meta.get("perturbation") or ("clean" if self.is_clean else "unknown"))

    @property
    def is_clean(self) -> bool:
        if "clean" in self.meta:
            return bool(self.meta["clean"])
        return self.meta.get("perturbation") == "clean"

    @property
    def group(self) -> str:
        """Rows of one episode share a group (they share observations)."""
        return str(self.meta.get("episode") or self.id or "")


def dataset_file(path: Union[str, Path]) -> Path:
    """The JSONL file of a dataset: ``path`` itself, or ``path/steps.jsonl`` for a folder."""
    p = Path(path)
    if p.is_dir():
        f = p / "steps.jsonl"
        if not f.exists():
            raise FileNotFoundError(f"dataset folder {p} has no steps.jsonl (build one with `ttir tune build`)")
        return f
    if not p.exists():
        raise FileNotFoundError(f"dataset {p} does not exist; expected a JSONL file or a folder with steps.jsonl")
    return p


def read_rows(path: Union[str, Path]) -> Iterator[StepRow]:
    """Every row of a dataset, validated; a bad line raises naming the file, line and field."""
    f = dataset_file(path)
    with f.open("r", encoding="utf-8") as fh:
        n = 0
        while True:
            line = fh.readline(MAX_LINE_CHARS + 1)  # bounded: a line of /dev/zero or a file with no newline
            if not line:
                break
            n += 1
            if len(line) > MAX_LINE_CHARS:
                raise ValueError(f"{f}:{n}: the line is longer than {MAX_LINE_CHARS:,} characters; a step row holds "
                                 "file paths, or its screens' dumps inline")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{f}:{n}: not valid JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError(f"{f}:{n}: expected a JSON object per line, got {type(data).__name__}")
            try:
                row = StepRow.model_validate(data)
            except ValidationError as exc:
                raise ValueError(f"{f}:{n}: invalid step row:\n  " + "\n  ".join(error_lines(exc))) from None
            if row.id is None:
                row.id = f"{f.stem}:{n}"
            yield row


__all__ = ["HistoryEntry", "Labels", "ObservationRef", "PendingStep", "StepRow", "dataset_file", "read_rows"]
