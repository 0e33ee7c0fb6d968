"""HangLayer: an app that stopped responding. The framework's "<App> isn't
responding" dialog shows over it; "Wait" keeps the app hung (the dialog comes
back), and only closing the app — then opening it again — recovers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from PIL import Image

from perturb.overlay import effects
from perturb.overlay.dialog import DialogOverlay
from perturb.overlay.geometry import Geometry
from perturb.overlay.layer import Layer
from perturb.overlay.screens import APP_INPUT
from perturb.overlay.spec import ButtonSpec
from ttir.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext


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
