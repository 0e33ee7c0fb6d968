"""DialogOverlay: a content-driven interruption (centre dialog, bottom sheet,
full-screen interstitial, heads-up banner, "isn't responding" dialog) with
buttons that have roles and consequences, multi-page flows, checkboxes,
choices, rating stars and text fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

from PIL import Image

from benchmark.ui.a11y import export
from benchmark.ui.layout import Node
from benchmark.ui.theme import palette
from benchmark.ui.widgets import Widget
from perturb.overlay import effects
from perturb.overlay.build import Controls, PageState, card_parts
from perturb.overlay.cardlayout import SCROLL_KEY, lay_card, paint_card
from perturb.overlay.geometry import Geometry
from perturb.overlay.layer import TOUCH, Layer, inside, touch_point
from perturb.overlay.spec import BackBehaviour, ButtonSpec, FlowSpec, PageSpec, Style
from perturb.overlay.tree import app_window, flatten, forest, window_insert_index
from ttir.core.types import Action, Observation

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

SYSTEM_ACCENT = (11, 87, 208)
SWIPE_DISMISS_FRACTION = 0.25  # of the banner's width / height: a swipe that far dismisses it
COMPACT_HEIGHT_DP = 480
ANR_WINDOW_INSET_DP = 16  # an "isn't responding" window is this much larger than its panel (real dumps: 42 px at 420 dpi)  # shorter app areas (landscape) get smaller illustrations
Handler = Callable[["PerturbationContext", ButtonSpec], None]


@dataclass
class Laid:
    key: tuple[Any, ...]
    card: Node
    box: tuple[int, int, int, int]


def _hit(n: Node, p: tuple[int, int]) -> Optional[Node]:
    if not inside(n.vis, p):
        return None
    for c in reversed(n.children):
        r = _hit(c, p)
        if r is not None:
            return r
    w = n.widget
    if w.on_click is not None or w.on_change is not None or w.kind == "field":
        if w.state.get("enabled", True):
            return n
    return None


def _find_scroll(n: Node) -> Optional[Node]:
    for c in n.walk():
        if c.widget.kind == "scroll":
            return c
    return None


class DialogOverlay(Layer):
    """One overlay of one perturbation; see :mod:`perturb.overlay.spec` for content."""

    def __init__(
        self,
        source: str,
        *,
        kind: str,
        variant_id: str,
        pages: list[PageSpec],
        flows: dict[str, FlowSpec],
        style: Style,
        package: str,
        activity: Optional[str] = None,
        blocking: bool = True,
        back: BackBehaviour = "dismiss",
        accent: Optional[tuple[int, int, int]] = None,
        owner: Optional[str] = None,
        auto_dismiss_steps: Optional[int] = None,
        outside_dismisses: bool = False,
        handlers: Optional[dict[str, Handler]] = None,
        in_app: bool = False,
        ids: Optional[dict[str, str]] = None,
    ):
        super().__init__(source, owner=owner)
        self.kind = kind
        self.variant_id = variant_id
        self.pages = pages
        self.flows = flows
        self.base_style = style
        self.package = package
        self.activity = activity
        self.blocking = blocking
        self.back_behaviour = back
        self.accent = accent or SYSTEM_ACCENT
        self.auto_dismiss_steps = auto_dismiss_steps
        self.outside_dismisses = outside_dismisses
        self.handlers = dict(handlers or {})
        self.in_app = in_app
        self.ids = dict(ids or {})
        # navigation state
        self.flow: Optional[str] = None
        self.index = 0
        self.history: list[tuple[Optional[str], int]] = []
        self.page_states: dict[tuple[Optional[str], int], PageState] = {}
        self.scroll: dict[tuple[Optional[str], int], dict[str, Any]] = {}
        self.page_entered_at = 0
        self.version = 0
        self._laid: Optional[Laid] = None
        self._pending: Optional[ButtonSpec] = None
        self._inputs: list[dict[str, Any]] = []

    # -- where we are ----------------------------------------------------------------
    @property
    def current_pages(self) -> list[PageSpec]:
        return self.flows[self.flow].pages if self.flow else self.pages

    @property
    def page(self) -> PageSpec:
        return self.current_pages[self.index]

    @property
    def page_id(self) -> str:
        p = self.page
        return p.id or f"{self.flow or 'main'}:{self.index + 1}"

    @property
    def state(self) -> PageState:
        return self.page_states.setdefault((self.flow, self.index), PageState())

    @property
    def style(self) -> Style:
        flow = self.flows[self.flow] if self.flow else None
        return self.page.style or (flow.style if flow and flow.style else None) or self.base_style

    @property
    def window_package(self) -> str:
        flow = self.flows[self.flow] if self.flow else None
        return (flow.package if flow and flow.package else None) or self.package

    @property
    def window_activity(self) -> Optional[str]:
        flow = self.flows[self.flow] if self.flow else None
        return (flow.activity if flow and flow.activity else None) or self.activity

    @property
    def back_mode(self) -> BackBehaviour:
        flow = self.flows[self.flow] if self.flow else None
        return (flow.back if flow and flow.back else None) or self.back_behaviour

    def describe(self) -> dict[str, Any]:
        return {"overlay": self.kind, "variant": self.variant_id, "style": self.style, "package": self.window_package,
                "page": self.page_id, "title": self.page.title or self.page.header}

    def _changed(self) -> None:
        self.version += 1

    # -- layout -------------------------------------------------------------------------
    def _controls(self) -> Controls:
        tap_card = None
        if self.style == "banner":
            engage = next((b for b in self.page.buttons if b.role == "engage"), None)
            tap_card = (lambda: self._press(engage or ButtonSpec(label=self.page.title or "Notification",
                                                                  role="engage", action="close")))
        return Controls(press=self._press, toggle=self._toggle, choose=self._choose, focus=self._focus,
                        rate=self._rate, tap_card=tap_card)

    def layout(self, geom: Geometry) -> Laid:
        key = (self.version, self.flow, self.index, geom.key)
        if self._laid is not None and self._laid.key == key:
            return self._laid
        flow = self.flows[self.flow] if self.flow else None
        ids = flow.ids if flow is not None and flow.ids else self.ids
        m = geom.metrics
        compact = (geom.area[3] - geom.area[1]) / m.px_per_dp < COMPACT_HEIGHT_DP
        parts = card_parts(self.page, self.state, self.style, self._controls(), ids, compact,
                           (self.index, len(self.current_pages)))
        card = lay_card(parts, geom.metrics, geom.area, self.scroll.setdefault((self.flow, self.index), {}))
        self._laid = Laid(key, card, card.vis)
        return self._laid

    # -- drawing + dump -------------------------------------------------------------------
    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        laid = self.layout(geom)
        # the status and navigation bars stay on top of the app area (a sheet's rounded
        # corners and full-screen pages must not paint over them)
        W, H = img.size
        ax1, ay1, ax2, ay2 = geom.area
        bars = [(box, img.crop(box)) for box in ((0, 0, W, ay1), (0, ay2, W, H), (ax2, ay1, W, ay2))
                if box[3] > box[1] and box[2] > box[0]]
        paint_card(img, laid.card, geom.metrics, palette(geom.dark, tuple(self.accent)))
        for box, patch in bars:
            img.paste(patch, box[:2])
        package = self.window_package
        new_roots = forest(export([(self._window(laid, geom), package)])[0])
        roots = forest(obs.elements)
        fg = obs.package
        w, h = obs.screen_size
        style = self.style
        if style == "fullscreen":
            # a new activity covers the app: the app's window (and its keyboard) leave the dump
            roots = [r for r in roots if "inputmethod" not in r.el.package]
            at = app_window(roots, fg)
            if at is not None and fg == self.owner:
                roots[at:at + 1] = new_roots
            else:
                at = window_insert_index(roots, (w, h))
                roots[at:at] = new_roots
        elif self.in_app and package == fg and app_window(roots, fg) is not None:
            # an in-app dialog is part of the app's own window
            roots[app_window(roots, fg)].children.extend(new_roots[0].children)  # type: ignore[index]
        else:
            at = window_insert_index(roots, (w, h))
            roots[at:at] = new_roots
        changes: dict[str, Any] = {"elements": flatten(roots)}
        activity = self.window_activity
        if activity:
            full = f"{package}{activity}" if activity.startswith(".") else activity
            changes["foreground"] = f"{package}/{full}"
        return obs.replace(**changes)

    def _window(self, laid: Laid, geom: Geometry) -> Node:
        """The window around the card, shaped like the real thing: a dialog activity's
        window fills the screen; a BottomSheetDialog nests its sheet in a
        CoordinatorLayout with a ``touch_outside`` view."""
        frame = Widget("column", cls="android.widget.FrameLayout")
        style = self.style
        if style == "bottom_sheet":
            area = geom.area
            outside = Node(Widget("column", id="touch_outside", cls="android.view.View", on_click=lambda: None), area)
            coordinator = Node(Widget("column", id="coordinator", cls="androidx.coordinatorlayout.widget.CoordinatorLayout"),
                               area, children=[outside, laid.card])
            return Node(frame, area, children=[coordinator])
        if style in ("dialog", "anr") and self.window_activity:
            return Node(frame, (0, 0, *geom.size), children=[laid.card])
        if style == "anr":
            # the framework dialog's window: its decor (with the shadow's inset) > content > the panel
            inset = geom.metrics.dp(ANR_WINDOW_INSET_DP)
            x1, y1, x2, y2 = laid.box
            W, H = geom.size
            outer = (max(0, x1 - inset), max(0, y1 - inset), min(W, x2 + inset), min(H, y2 + inset))
            content = Node(Widget("column", id="android:id/content", cls="android.widget.FrameLayout"), laid.box,
                           children=[laid.card])
            decor = Node(Widget("column", cls="android.widget.FrameLayout", style={"emit": True}), laid.box,
                         children=[content])
            return Node(frame, outer, children=[decor])
        return Node(frame, laid.box, children=[laid.card])

    def dialog_box(self) -> Optional[tuple[int, int, int, int]]:
        if self.closed or self._laid is None or self.style == "banner":
            return None
        return self._laid.box

    # -- input ------------------------------------------------------------------------------
    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        t = action.action_type
        laid = self.layout(geom)
        box = laid.box
        p = touch_point(action)
        if t in TOUCH:
            if p is None:
                return False
            if inside(box, p):
                if t == "long_press":
                    return self.blocked(action, ctx, where="overlay")
                node = _hit(laid.card, p)
                if node is None:
                    return self.blocked(action, ctx, where="overlay")
                self._activate(node)
                self._process(ctx)
                return True
            return self._outside(action, ctx)
        if t == "navigate_back":
            if self.state.focus is not None:
                self.state.focus = None  # back first hides the keyboard
                self._changed()
                return True
            return self._back(action, ctx)
        if t == "input_text":
            if p is not None and inside(box, p):
                node = _hit(laid.card, p)
                if node is None or node.widget.kind != "field":
                    return self.blocked(action, ctx, where="overlay")
                self._activate(node)
            if self.state.focus is None:
                return self.blocked(action, ctx, where="overlay") if (self.blocking or (p and inside(box, p))) else False
            self._type(action.text or "", bool(action.clear_text), ctx)
            return True
        if t == "keyboard_enter":
            if self.state.focus is not None:
                self.state.focus = None
                self._changed()
                return True
            return self.blocked(action, ctx, where="overlay") if self.blocking else False
        if t == "scroll":
            if p is None and not self.blocking:
                return False
            if p is not None and not inside(box, p):
                return self._outside(action, ctx)
            return self._scroll_body(laid, -1 if action.direction == "up" else 1, ctx, action)
        if t == "swipe":
            assert action.x is not None and action.y is not None and action.x2 is not None and action.y2 is not None
            if inside(box, (action.x, action.y)):
                dx, dy = action.x2 - action.x, action.y2 - action.y
                bw, bh = box[2] - box[0], box[3] - box[1]
                if self.style == "banner" and (abs(dx) > bw * SWIPE_DISMISS_FRACTION or dy < -bh * SWIPE_DISMISS_FRACTION):
                    self._dismiss(ctx, via="swipe", label="")
                    return True
                if abs(dy) > abs(dx) and dy:
                    return self._scroll_body(laid, 1 if dy < 0 else -1, ctx, action)
                return self.blocked(action, ctx, where="overlay")
            return self._outside(action, ctx)
        return False  # home, recents, open_app, wait: the system handles them

    def _outside(self, action: Action, ctx: "PerturbationContext") -> bool:
        if not self.blocking:
            return False
        if self.outside_dismisses and action.action_type == "click":
            self._dismiss(ctx, via="outside", label="")
            return True
        return self.blocked(action, ctx, where="outside")

    def _scroll_body(self, laid: Laid, direction: int, ctx: "PerturbationContext", action: Action) -> bool:
        node = _find_scroll(laid.card)
        if node is None or not node.meta.get("can_scroll"):
            return self.blocked(action, ctx, where="overlay") if self.blocking else False
        store = self.scroll.setdefault((self.flow, self.index), {})
        max_off = max(0.0, node.meta["content_h_dp"] - node.meta["view_h_dp"])
        step = node.meta["view_h_dp"] * 0.6 * direction
        store[SCROLL_KEY] = max(0.0, min(max_off, float(node.meta.get("offset_dp", 0.0)) + step))
        self._changed()
        return True

    def _activate(self, node: Node) -> None:
        w = node.widget
        if w.kind == "checkbox" and w.on_change is not None:
            w.on_change(not w.state.get("checked"))
        elif w.on_click is not None:
            w.on_click()
        elif w.on_change is not None:
            w.on_change(not w.state.get("checked"))

    # -- control callbacks (from widgets) -----------------------------------------------------
    def _press(self, b: ButtonSpec) -> None:
        self._pending = b

    def _toggle(self, key: str) -> None:
        st = self.state
        st.checked.symmetric_difference_update({key})
        label = next((c.label for c in self.page.checks if (c.id or c.label) == key), key)
        self._inputs.append({"control": "checkbox", "label": label, "checked": key in st.checked})
        self._changed()

    def _choose(self, k: int) -> None:
        self.state.choice = k
        self._inputs.append({"control": "choice", "label": self.page.choices[k]})
        self._changed()

    def _focus(self, key: str) -> None:
        self.state.focus = key
        self._changed()

    def _rate(self, k: int) -> None:
        self.state.stars = k
        self._inputs.append({"control": "rating", "stars": k})
        self._changed()

    def _type(self, value: str, clear: bool, ctx: "PerturbationContext") -> None:
        st = self.state
        key = st.focus
        assert key is not None
        st.values[key] = ("" if clear else st.values.get(key, "")) + value.replace("\n", " ")
        self.emit(ctx, "overlay_text_entered", field=key, chars=len(value), **self.describe())
        self._changed()

    # -- consequences ------------------------------------------------------------------------
    def _process(self, ctx: "PerturbationContext") -> None:
        for item in self._inputs:
            self.emit(ctx, "overlay_input", **item, page=self.page_id)
        self._inputs = []
        b, self._pending = self._pending, None
        if b is None:
            return
        details = {"label": b.label or b.desc, "role": b.role, "action": b.action, **self.describe()}
        if b.role == "dismiss":
            self.emit(ctx, "overlay_dismissed", via="button", **details)
        elif b.role == "engage":
            self.emit(ctx, "overlay_engaged", **details)
        else:
            self.emit(ctx, "overlay_button", **details)
        self.perform(b, ctx)

    def perform(self, b: ButtonSpec, ctx: "PerturbationContext") -> None:
        action = b.action
        if action in self.handlers:
            self.handlers[action](ctx, b)
            return
        if action == "none":
            return
        if action == "next":
            self._next(ctx, auto=False)
            return
        if action == "previous":
            self._previous(ctx)
            return
        if action.startswith("flow:"):
            self._goto(ctx, action[5:], 0)
            return
        # everything else ends the overlay
        self._finish(ctx, "dismissed" if b.role == "dismiss" else "completed")
        owner = self.owner
        if action == "settings":
            ok = effects.launch(ctx, effects.SETTINGS_PACKAGE)
            self.emit(ctx, "app_launched" if ok else "launch_failed", package=effects.SETTINGS_PACKAGE)
        elif action == "home":
            effects.go_home(ctx)
            self.emit(ctx, "went_home")
        elif action.startswith("launch:"):
            app = action[7:]
            ok = effects.launch(ctx, app)
            self.emit(ctx, "app_launched" if ok else "launch_failed", package=app)
        elif action.startswith("url:"):
            ok = effects.open_url(ctx, action[4:])
            self.emit(ctx, "url_opened" if ok else "launch_failed", url=action[4:])
        elif action == "close_app":
            target = owner or ctx.observe_raw().package
            if target:
                effects.force_stop(ctx, target)
                self.emit(ctx, "app_closed", package=target)

    def _finish(self, ctx: "PerturbationContext", reason: str) -> None:
        if self.closed:
            return
        self.close()
        if reason != "dismissed":
            self.emit(ctx, "overlay_closed", reason=reason, **self.describe())

    def _dismiss(self, ctx: "PerturbationContext", *, via: str, label: str) -> None:
        self.emit(ctx, "overlay_dismissed", via=via, label=label, role="dismiss", **self.describe())
        self.close()

    def _goto(self, ctx: "PerturbationContext", flow: Optional[str], index: int, *, auto: bool = False) -> None:
        before = self.page_id
        self.history.append((self.flow, self.index))
        self.flow, self.index = flow, index
        # pages entered by a tap show from the next observation on (route runs before the
        # step counter moves); auto-advances happen in tick, after it moved
        self.page_entered_at = ctx.step + (0 if auto else 1)
        self._changed()
        self.emit(ctx, "page_advanced", from_page=before, to_page=self.page_id, auto=auto, **self.describe())

    def _next(self, ctx: "PerturbationContext", *, auto: bool) -> None:
        if self.index + 1 < len(self.current_pages):
            self._goto(ctx, self.flow, self.index + 1, auto=auto)
        else:
            self._finish(ctx, "completed")

    def _previous(self, ctx: "PerturbationContext") -> bool:
        if not self.history:
            return False
        before = self.page_id
        self.flow, self.index = self.history.pop()
        self.page_entered_at = ctx.step + 1
        self._changed()
        self.emit(ctx, "page_back", from_page=before, to_page=self.page_id, **self.describe())
        return True

    def _back(self, action: Action, ctx: "PerturbationContext") -> bool:
        mode = self.back_mode
        if mode == "pass":
            return False
        if mode == "absorb":
            return self.blocked(action, ctx, where="back")
        if mode == "previous" and self._previous(ctx):
            return True
        if "back" in self.handlers:
            self.handlers["back"](ctx, ButtonSpec(label="Back", role="dismiss", action="close"))
            return True
        self._dismiss(ctx, via="back", label="")
        return True

    # -- time ------------------------------------------------------------------------------------
    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.page_entered_at = ctx.step
        self.emit(ctx, "overlay_shown", blocking=self.blocking, **self.describe())

    def tick(self, ctx: "PerturbationContext") -> None:
        if self.closed or self.shown_at is None:
            return
        if self.auto_dismiss_steps is not None and ctx.step - self.shown_at >= self.auto_dismiss_steps:
            self.close()
            self.emit(ctx, "overlay_auto_dismissed", after_steps=self.auto_dismiss_steps, **self.describe())
            return
        n = self.page.auto_next_steps
        if n is not None and ctx.step - self.page_entered_at >= n:
            self._next(ctx, auto=True)
