"""The paper's structured diagnoser judgment (AndroidReality §5.1, Appendix D.1)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


class Judgment(BaseModel):
    """One JSON judgment of the current state along the four dimensions."""

    model_config = ConfigDict(extra="ignore")

    # the descriptions are for readers: the schema sent to a model leaves them out (ttir.model.endpoint)
    repeat_failure_detected: bool = Field(description="Is the agent repeating an attempt that does not work (stuck loop)?")
    previous_intended_effect_satisfied: Literal["yes", "no", "uncertain"] = Field(
        description="Did the previous action have the effect its summary intended (action effect)?")
    interference_present: bool = Field(description="Is an off-task overlay on screen (interference)?")
    task_alignment: Literal["on_track", "off_track", "uncertain"] = Field(
        description="Does the screen still belong to the task's path (task alignment)?")
    reason: str = Field("", description="The model's short explanation.")

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
