"""The paper's structured diagnoser judgment (AndroidReality §5.1, Appendix D.1)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator


class Judgment(BaseModel):
    """One JSON judgment of the current state along the four dimensions."""

    model_config = ConfigDict(extra="ignore")

    repeat_failure_detected: bool
    previous_intended_effect_satisfied: Literal["yes", "no", "uncertain"]
    interference_present: bool
    task_alignment: Literal["on_track", "off_track", "uncertain"]
    reason: str = ""

    @field_validator("previous_intended_effect_satisfied", "task_alignment", mode="before")
    @classmethod
    def _normalise(cls, v: object, info: ValidationInfo) -> object:
        # A boolean means yes/no only for the effect question; for task_alignment
        # true/false is ambiguous (on track? drifted?) and must be rejected.
        if isinstance(v, bool):
            if info.field_name == "previous_intended_effect_satisfied":
                return "yes" if v else "no"
            return v
        if isinstance(v, str):
            return v.strip().lower().replace("-", "_").replace(" ", "_")
        return v
