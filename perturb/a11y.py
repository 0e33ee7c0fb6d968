"""``a11y_tree_empty`` (state, beyond the paper): the accessibility tree is lost, as on
real phones where ``uiautomator dump`` fails with "could not get idle state" on an
animated screen, or returns only the window root for a WebView, a Flutter app or a game.

Over any device, for the screens of the chosen apps (or all): the dump the agent would
get holds only its root, or fails. The device's answer to that is the one a real phone
gets from :class:`benchmark.devices.AdbDevice` (:mod:`benchmark.tree_fallback`): one
retry after a settle, then the screenshot alone — its text read by OCR (the
``ttir[ocr]`` extra; ``read_text: false`` for pixels only). Pop-ups are composited into
the screenshot before it is read, so they show as text in the image, not as nodes.
"""

from __future__ import annotations

import random
from typing import Any, Literal, Optional

from pydantic import Field

from benchmark.tree_fallback import TreeProblem, TreeRead, observe_tree
from perturb.base import Magnitude, Perturbation
from perturb.device import PerturbationContext
from ttir.core import ocr
from ttir.core.types import Action, Observation, UIElement

FAILED_DUMP = "uiautomator dump failed: ERROR: could not get idle state."  # what a busy screen answers


class TreeLossMagnitude(Magnitude):
    dump: Literal["root", "fail"] = Field(
        "root", description="What the broken dump gives: 'root' (only the window root: WebView, Flutter, games) or "
                            "'fail' (an error: \"could not get idle state\").")
    apps: list[str] = Field(default_factory=list, description="Apps whose screens lose their tree (packages or app "
                                                              "names); empty: every screen, the launcher too.")
    recover_probability: float = Field(0.0, ge=0.0, le=1.0, description="Chance (seeded) that the retry after the "
                                       "settle gets the full tree: a transient failure.")
    read_text: bool = Field(True, description="Read the screenshot's text (OCR, needs the ttir[ocr] extra); false: the "
                                              "agent gets the pixels alone.")


class A11yTreeEmpty(Perturbation):
    """The accessibility tree of the chosen apps' screens is lost from the trigger step on,
    for ``duration_steps`` (default: the rest of the episode)."""

    component = "state"
    magnitude_model = TreeLossMagnitude

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if self.magnitude.read_text and not ocr.available():
            raise ValueError(f"{self.name}: reading the screenshot's text needs the OCR extra: {ocr.INSTALL_HINT}; "
                             "or set read_text: false to give the agent the pixels alone")
        self._packages: Optional[set[str]] = None

    # -- schedule ----------------------------------------------------------------------
    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        self._packages = {self._package(device, a) for a in self.magnitude.apps} if self.magnitude.apps else None
        if (self.timing.trigger_step or 0) == 0 and self.timing.probability is None and not self.timing.keywords:
            self._start(ctx)

    def after_execute(self, ctx: PerturbationContext) -> None:
        start = ctx.state.get(self._key)
        if start is None:
            if self.timing.is_triggered and self.should_fire(ctx, ctx.observe_raw()):
                self._start(ctx)
            return
        dur = self.persistence.duration_steps
        if dur is not None and ctx.step - start == dur:
            ctx.emit(self.name, "restored", steps=dur)

    def _start(self, ctx: PerturbationContext) -> None:
        if self.fired == 0:
            self.fired += 1
        ctx.state[self._key] = ctx.step

    @property
    def _key(self) -> str:
        return f"{self.name}:since"

    def _active(self, ctx: PerturbationContext) -> bool:
        start = ctx.state.get(self._key)
        if start is None:
            return False
        dur = self.persistence.duration_steps
        return dur is None or ctx.step - start < dur

    @staticmethod
    def _package(device: Any, app: str) -> str:
        resolve = getattr(device, "resolve_app", None)
        if callable(resolve):
            found = resolve(app)
            if found:
                return str(found)
        return app

    # -- what the agent sees -------------------------------------------------------------
    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        if not self._active(ctx) or obs.source != "tree":
            return obs
        if self._packages is not None and obs.package not in self._packages:
            return obs
        attempts = 0

        def read() -> TreeRead:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and self.magnitude.recover_probability and self.rng.random() < self.magnitude.recover_probability:
                return obs  # the retry got the tree: a transient failure
            if self.magnitude.dump == "fail":
                return TreeProblem(FAILED_DUMP)
            return _bare_root(obs)

        out = observe_tree(read, lambda: None, obs.screenshot, lambda: obs.foreground, step=obs.step,
                           time=obs.time, who=self.name, ocr=self.magnitude.read_text)
        if out.source != "tree" and not ctx.state.get(f"{self.name}:shown"):
            ctx.state[f"{self.name}:shown"] = True  # took effect: the first screen the agent sees without its tree
            ctx.emit(self.name, "applied", dump=self.magnitude.dump, package=obs.package, seen_as=out.source,
                     reason=out.tree_error)
        return out

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        """An ``index`` refers to the lines of text the agent was shown, not to the
        device's own nodes: turn it into their point."""
        shown = ctx.shown
        if shown is None or shown.source == "tree":
            return action
        return action.by_coordinates(shown.elements)


def _bare_root(obs: Observation) -> Observation:
    """The dump of a screen whose content the accessibility service cannot see: the app
    window's root node alone."""
    w, h = obs.screen_size
    root = UIElement.unchecked(class_name="android.widget.FrameLayout", package=obs.package or "",
                               bounds=(0, 0, int(w), int(h)))
    bare = obs.replace(elements=[root])
    return bare
