"""HangLayer: an app that stopped responding. The framework's "<App> isn't
responding" dialog shows over it; "Wait" keeps the app hung (the dialog comes
back), and only closing the app — then opening it again — recovers.

SystemHangLayer: System UI or the system process stopped responding; there only
"Wait" helps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from PIL import Image

from perturb.overlay import effects
from perturb.overlay.dialog import DialogOverlay
from perturb.overlay.geometry import Geometry
from perturb.overlay.layer import Layer
from perturb.overlay.screens import APP_INPUT
from perturb.overlay.spec import ButtonSpec
from ttir.core.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

SYSTEM_HANG_PACKAGE = "com.android.systemui"  # what the event log names as hung


class HangLayer(Layer):
    kind = "app_hang"

    def __init__(self, source: str, *, package: str, make_dialog: Callable[[], DialogOverlay],
                 reshow_after_steps: int = 2, settle_time_s: float = 0.0):
        super().__init__(source, owner=package)
        self.package = package
        self.make_dialog = make_dialog
        self.reshow_after_steps = reshow_after_steps
        self.settle_time_s = settle_time_s
        self.dialog: Optional[DialogOverlay] = None
        self.waiting_since: Optional[int] = None
        self.stopped = False  # the app was closed; the hang ends when it is opened again
        self.shows = 0

    # -- the dialog ---------------------------------------------------------------------
    def _show_dialog(self, ctx: "PerturbationContext") -> None:
        d = self.make_dialog()
        d.source = self.source
        d.owner = self.package
        d.handlers.update({"close_app": self._close_app, "wait": self._wait})
        self.dialog = d
        self.waiting_since = None
        self.shows += 1
        d.on_show(ctx)
        if self.shows > 1:
            self.emit(ctx, "hang_persists", package=self.package, shows=self.shows)

    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.emit(ctx, "app_hang", package=self.package)
        self._show_dialog(ctx)

    def _close_app(self, ctx: "PerturbationContext", b: ButtonSpec) -> None:
        if self.dialog is not None:
            self.dialog.close()
        effects.force_stop(ctx, self.package)
        effects.settle(ctx.device, self.settle_time_s)
        self.stopped = True
        self.owner = None  # nothing of the hang is on screen any more; wait for the relaunch
        self.emit(ctx, "app_closed", package=self.package, label=b.label)

    def _wait(self, ctx: "PerturbationContext", b: ButtonSpec) -> None:
        if self.dialog is not None:
            self.dialog.close()
        self.waiting_since = ctx.step
        self.emit(ctx, "hang_wait", package=self.package, label=b.label)

    @property
    def dialog_up(self) -> bool:
        return self.dialog is not None and not self.dialog.closed

    def dialog_box(self) -> Optional[tuple[int, int, int, int]]:
        return self.dialog.dialog_box() if self.dialog_up and not self.stopped else None  # type: ignore[union-attr]

    # -- Layer ------------------------------------------------------------------------------
    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        if self.stopped or not self.dialog_up:
            return obs
        assert self.dialog is not None
        return self.dialog.composite(obs, img, geom, ctx)

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        if self.stopped:
            return False
        if self.dialog_up:
            assert self.dialog is not None
            if self.dialog.route(action, ctx, geom):
                return True
            return False
        if action.action_type in APP_INPUT:
            return self.blocked(action, ctx, where="app_not_responding", package=self.package)
        return False

    def tick(self, ctx: "PerturbationContext") -> None:
        device = ctx.device
        if self.stopped:
            fg = ctx.observe_raw().package
            if fg == self.package and effects.app_running(device, self.package):
                self.emit(ctx, "hang_recovered", package=self.package)
                self.close()
            return
        if not effects.app_running(device, self.package):
            # closed another way (recents "Clear all", a force stop): the process is gone
            if self.dialog is not None:
                self.dialog.close()
            self.stopped = True
            self.owner = None
            self.emit(ctx, "app_closed", package=self.package, label="")
            return
        due = self.waiting_since is None or ctx.step - self.waiting_since >= self.reshow_after_steps
        if not self.dialog_up and due and ctx.observe_raw().package == self.package:
            self._show_dialog(ctx)


class SystemHangLayer(Layer):
    """System UI (or the system process) that stopped responding: its "isn't responding"
    dialog shows over every screen. Each "Wait" lets it catch up — the dialog returns
    after ``reshow_after_steps`` until ``waits_to_recover`` waits have been given; any
    other button (Close app) restarts it, which ends the hang the hard way."""

    kind = "system_hang"

    def __init__(self, source: str, *, make_dialog: Callable[[], DialogOverlay], waits_to_recover: int = 2,
                 reshow_after_steps: int = 2):
        super().__init__(source, owner=None)
        self.make_dialog = make_dialog
        self.waits_to_recover = waits_to_recover
        self.reshow_after_steps = reshow_after_steps
        self.dialog: Optional[DialogOverlay] = None
        self.waits = 0
        self.waiting_since: Optional[int] = None

    def _show_dialog(self, ctx: "PerturbationContext") -> None:
        d = self.make_dialog()
        d.source = self.source
        d.owner = None
        d.handlers["wait"] = self._wait
        self.dialog = d
        self.waiting_since = None
        d.on_show(ctx)
        if self.waits:
            self.emit(ctx, "hang_persists", package=d.package, waits=self.waits)

    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.emit(ctx, "app_hang", package=SYSTEM_HANG_PACKAGE)
        self._show_dialog(ctx)

    def _wait(self, ctx: "PerturbationContext", b: ButtonSpec) -> None:
        if self.dialog is not None:
            self.dialog.close()
        self.waits += 1
        self.emit(ctx, "hang_wait", package=SYSTEM_HANG_PACKAGE, label=b.label, waits=self.waits)
        self.waiting_since = ctx.step  # caught up after enough waits: tick says so

    @property
    def dialog_up(self) -> bool:
        return self.dialog is not None and not self.dialog.closed

    def dialog_box(self) -> Optional[tuple[int, int, int, int]]:
        return self.dialog.dialog_box() if self.dialog_up else None  # type: ignore[union-attr]

    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        if not self.dialog_up:
            return obs
        assert self.dialog is not None
        return self.dialog.composite(obs, img, geom, ctx)

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        if not self.dialog_up:
            return False  # between two dialogs the phone answers (slowly)
        assert self.dialog is not None
        consumed = self.dialog.route(action, ctx, geom)
        if self.dialog.closed and self.waiting_since is None and not self.closed:
            self.emit(ctx, "hang_restarted", package=SYSTEM_HANG_PACKAGE)  # Close app: restarted, no longer hung
            self.close()
        return consumed

    def tick(self, ctx: "PerturbationContext") -> None:
        if self.closed or self.dialog_up or self.waiting_since is None:
            return
        if self.waits >= self.waits_to_recover:
            self.emit(ctx, "hang_recovered", package=SYSTEM_HANG_PACKAGE)
            self.close()
        elif ctx.step - self.waiting_since >= self.reshow_after_steps:
            self._show_dialog(ctx)
