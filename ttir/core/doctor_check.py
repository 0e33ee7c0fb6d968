"""One check of a doctor (`ttir doctor` for phones, `ttir doctor --vlm` for endpoints): its name,
status, what it found, and whether a failure blocks use."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["ok", "warn", "fail", "skip"]
"""How a doctor's check went: ok, warn (works, with a caveat), fail, skip (not applicable)."""


class DoctorCheck(BaseModel):
    """One line of a doctor's report: what was checked, how it went, and why."""

    name: str = Field(description="What was checked, e.g. ``endpoint`` or ``screencap``.")
    status: Status = Field(description="ok, warn, fail or skip.")
    detail: str = Field(description="What the check found, or what to do about a failure.")
    needed: bool = Field(True, description="Whether a failure blocks use; a failed check that is not needed is "
                                           "reported but does not fail the doctor.")

    @property
    def blocking(self) -> bool:
        """Whether this check failed and is needed (the doctor then fails)."""
        return self.needed and self.status == "fail"


__all__ = ["DoctorCheck", "Status"]
