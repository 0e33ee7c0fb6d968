"""``system_ui_not_responding`` (transition, beyond the paper): System UI — or the
system process — stops responding and the framework's "… isn't responding" dialog
shows over whatever is on screen (real dumps hold exactly that). Unlike an app's
own ANR (``app_hang_restart_required``), closing is never the answer: each "Wait"
lets it catch up and after ``waits_to_recover`` waits it has; "Close app" restarts
System UI (the phone drops to its home screen) or the system process (every app is
stopped too), which ends the hang but loses the task's place."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from perturb.device import PerturbationContext
from perturb.overlay.hang import SystemHangLayer
from perturb.transition import TransitionMagnitude, TransitionOverlay
from ttir.core.types import Observation


class SystemHangMagnitude(TransitionMagnitude):
    waits_to_recover: int = Field(2, ge=1, description="Waits after which the hung process has caught up.")
    reshow_after_steps: int = Field(2, ge=1, description="Steps after a Wait before the dialog returns (2: it is gone "
                                                         "from the next screen and back on the one after).")


class SystemHang(TransitionOverlay):
    magnitude_model = SystemHangMagnitude

    def build(self, ctx: PerturbationContext, raw: Observation) -> Any:  # type: ignore[override]
        m = self.magnitude
        return SystemHangLayer(self.name, make_dialog=lambda: super(SystemHang, self).build(ctx, raw),
                               waits_to_recover=m.waits_to_recover, reshow_after_steps=m.reshow_after_steps)
