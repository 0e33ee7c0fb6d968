"""One check of a doctor (`ttir doctor` for phones, `ttir doctor --vlm` for endpoints): its name,
status, what it found, and whether a failure blocks use."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Status = Literal["ok", "warn", "fail", "skip"]


class DoctorCheck(BaseModel):
    name: str
    status: Status
    detail: str
    needed: bool = True  # a failed check that is not needed is reported but does not fail the doctor

    @property
    def blocking(self) -> bool:
        return self.needed and self.status == "fail"


__all__ = ["DoctorCheck", "Status"]
