"""Screen-state layers: a loading screen (spinner), a frozen screen (the last frame
stays up) and skeleton placeholders over content that has not loaded yet.

They may block input (``block_actions``): the touch is absorbed and logged as
``blocked_action``; otherwise it reaches the app underneath, unseen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional

from PIL import Image, ImageDraw

from benchmark.ui.a11y import export
from benchmark.ui.layout import Box, Node, _shift, clip, lay
from benchmark.ui.render import Painter, draw_toast
from benchmark.ui.theme import palette
from benchmark.ui.widgets import Widget, column, row, text
from perturb.overlay.build import CardParts
from perturb.overlay.cardlayout import lay_card, paint_card
from perturb.overlay.geometry import Geometry
from perturb.overlay.layer import TOUCH, Layer, inside, touch_point
from perturb.overlay.tree import TNode, app_window, flatten, forest, prune
from ttir.core.types import INERT_TYPES, LOCATED_TYPES, Action, Observation, UIElement

if TYPE_CHECKING:  # pragma: no cover
    from perturb.device import PerturbationContext

# what an unresponsive app ignores; the system keys (home, recents, open_app) and wait still work
APP_INPUT = (*LOCATED_TYPES, "keyboard_enter", "navigate_back")
CONTAINER_HINTS = ("RecyclerView", "ScrollView", "ListView", "GridView")


class TimedLayer(Layer):
    """A layer that ends by itself after ``duration`` steps."""

    finished_event = "finished"

    def __init__(self, source: str, *, owner: Optional[str], duration: int, block_actions: bool):
        super().__init__(source, owner=owner)
        self.duration = duration
        self.blocking = block_actions

    def tick(self, ctx: "PerturbationContext") -> None:
        if self.shown_at is not None and ctx.step - self.shown_at >= self.duration:
            self.close()
            self.emit(ctx, self.finished_event, after_steps=self.duration, overlay=self.kind)

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        if self.blocking and action.action_type in APP_INPUT:
            return self.blocked(action, ctx, where="screen")
        return False


class LoadingLayer(TimedLayer):
    """The app shows its progress indicator instead of its content (``surface``
    screen) or a progress dialog over it (``surface`` dialog)."""

    kind = "loading"
    finished_event = "loading_finished"

    def __init__(self, source: str, *, owner: str, duration: int, block_actions: bool, message: str,
                 surface: Literal["screen", "dialog"] = "screen", accent: Optional[tuple[int, int, int]] = None):
        super().__init__(source, owner=owner, duration=duration, block_actions=block_actions)
        self.message = message
        self.surface = surface
        self.accent = accent

    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.emit(ctx, "overlay_shown", overlay=self.kind, style="spinner", surface=self.surface, text=self.message,
                  blocking=self.blocking, duration_steps=self.duration, package=self.owner)

    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        pkg = self.owner or obs.package or ""
        m = geom.metrics
        pal = palette(geom.dark, self.accent)
        roots = forest(obs.elements)
        at = app_window(roots, pkg)
        if self.surface == "dialog":
            body = [row(Widget("progress", id="android:id/progress", desc=""),
                        text(self.message, id="android:id/message", size=16, weight=1), gap=24, align="center")]
            parts = CardParts("center", "android:id/parentPanel", "android.widget.FrameLayout", [], body, [],
                              "android:id/scrollView", pad=24, gap=0)
            card = lay_card(parts, m, geom.area, {})
            paint_card(img, card, m, pal)
            new = forest(export([(Node(Widget("column", cls="android.widget.FrameLayout"), card.vis, children=[card]), pkg)])[0])
            if at is not None:
                roots[at].children.extend(new[0].children)
            else:
                roots.extend(new)
            return obs.replace(elements=flatten(roots))
        area = geom.area
        tree = column(Widget("progress", id="progress_bar", desc=""),
                      text(self.message, id="loading_text", size=16, color="muted", text_align="center"),
                      id="loading_view", gap=16, align="center")
        node = lay(tree, m, area[0], 0, area[2] - area[0])
        h = node.bounds[3] - node.bounds[1]
        _shift(node, 0, area[1] + ((area[3] - area[1]) - h) // 2)
        clip(node, area)
        ImageDraw.Draw(img).rectangle(area, fill=pal["bg"])
        Painter(img, m, pal).node(node)
        new = forest(export([(Node(Widget("column", cls="android.widget.FrameLayout", id="content"), area, children=[node]), pkg)])[0])
        if at is not None:
            # the content is not drawn yet: only the window and its progress view are in the dump
            roots[at].children = new
        else:
            roots.append(new[0])
        return obs.replace(elements=flatten(roots))


class FrozenLayer(TimedLayer):
    """The display stops updating: the agent keeps seeing ``frame`` (the screen it
    acted on) while the device moves on underneath."""

    kind = "frozen"
    finished_event = "frozen_finished"

    def __init__(self, source: str, *, frame: Observation, duration: int, block_actions: bool, message: str = ""):
        super().__init__(source, owner=None, duration=duration, block_actions=block_actions)
        self.frame = frame
        self.message = message

    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.emit(ctx, "overlay_shown", overlay=self.kind, style="frozen", text=self.message, blocking=self.blocking,
                  duration_steps=self.duration, package=self.frame.package)

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        # a frozen phone ignores the system keys too
        if self.blocking and action.action_type not in INERT_TYPES:
            return self.blocked(action, ctx, where="screen")
        return False

    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        shot = self.frame.screenshot
        if shot is not None:
            img.paste(shot.convert("RGB").resize(img.size) if shot.size != img.size else shot.convert("RGB"), (0, 0))
        elements = list(self.frame.elements)
        if self.message:
            elements = self._toast(img, geom, elements)
        return obs.replace(elements=elements, foreground=self.frame.foreground, orientation=self.frame.orientation,
                           screen_size=self.frame.screen_size)

    def _toast(self, img: Image.Image, geom: Geometry, elements: list[UIElement]) -> list[UIElement]:
        """A toast with the frozen-screen text, drawn like the simulator's toasts."""
        box: Box = draw_toast(img, geom.metrics, self.message, geom.area[3])
        toast = UIElement.unchecked(
            **{**UIElement().model_dump(), "text": self.message, "resource_id": "android:id/message",
               "class_name": "android.widget.TextView", "package": self.frame.package or "", "bounds": box})
        roots = forest(elements)
        at = app_window(roots, self.frame.package)
        host = roots[at] if at is not None else None
        if host is not None:
            host.children.append(TNode(toast))
        else:
            roots.append(TNode(toast))
        return flatten(roots)


class SkeletonLayer(TimedLayer):
    """Content placeholders: the app's chrome has loaded, its content has not."""

    kind = "skeleton"
    finished_event = "skeleton_cleared"
    ROW_DP = 72

    def __init__(self, source: str, *, owner: str, duration: int, block_actions: bool, message: str,
                 coverage: float = 1.0):
        super().__init__(source, owner=owner, duration=duration, block_actions=block_actions)
        self.message = message
        self.coverage = coverage
        self._region: Optional[Box] = None
        self._above: list[Box] = []  # app views drawn over the content (a FAB): still there, still tappable

    def on_show(self, ctx: "PerturbationContext") -> None:
        super().on_show(ctx)
        self.emit(ctx, "overlay_shown", overlay=self.kind, style="skeleton", text=self.message, blocking=self.blocking,
                  duration_steps=self.duration, package=self.owner)

    def route(self, action: Action, ctx: "PerturbationContext", geom: Geometry) -> bool:
        if not self.blocking or self._region is None or action.action_type not in APP_INPUT:
            return False
        p = touch_point(action)
        if action.action_type in TOUCH or p is not None:
            if p is not None and inside(self._region, p) and not any(inside(b, p) for b in self._above):
                return self.blocked(action, ctx, where="placeholder")
            return False
        if action.action_type == "scroll":
            return self.blocked(action, ctx, where="placeholder")
        return False

    @staticmethod
    def _container(app: TNode) -> Optional[TNode]:
        best: Optional[TNode] = None
        for n in app.walk():
            e = n.el
            if n is app or not (e.scrollable or any(h in e.class_name for h in CONTAINER_HINTS)):
                continue
            if best is None or e.area > best.el.area:
                best = n
        return best

    @staticmethod
    def _top_bar_bottom(app: TNode) -> int:
        bottoms = [n.el.bounds[3] for n in app.walk()
                   if n is not app and ("Toolbar" in n.el.class_name or n.el.resource_id.endswith(("toolbar", "action_bar")))]
        return max(bottoms, default=app.el.bounds[1])

    def composite(self, obs: Observation, img: Image.Image, geom: Geometry, ctx: "PerturbationContext") -> Observation:
        pkg = self.owner or ""
        roots = forest(obs.elements)
        at = app_window(roots, pkg)
        if at is None:
            return obs
        app = roots[at]
        holder = self._container(app)
        x1, y1, x2, y2 = (holder.el.bounds if holder is not None else
                          (app.el.bounds[0], self._top_bar_bottom(app), app.el.bounds[2], app.el.bounds[3]))
        if holder is not None:
            rows = sorted(holder.children, key=lambda n: n.el.bounds[1])
            keep = rows[: int(round(len(rows) * (1.0 - self.coverage)))]
            if keep:
                y1 = max(y1, max(n.el.bounds[3] for n in keep))
            holder.children = keep
        else:
            region_top = y1

            def outside_region(n: TNode) -> bool:
                return n is app or n.el.bounds[1] < region_top

            app.children = prune(app.children, outside_region)
        region: Box = (x1, y1, x2, y2)
        self._region = region
        if y2 - y1 <= 0:
            return obs.replace(elements=flatten(roots))
        self._above = self._drawn_above(app, holder, region)
        patches = [(b, img.crop(b)) for b in self._above]
        m = geom.metrics
        pal = palette(geom.dark)
        ImageDraw.Draw(img).rectangle(region, fill=pal["bg"])
        n_rows = max(1, (y2 - y1 - m.dp(40)) // m.dp(self.ROW_DP))
        placeholder_rows = [
            row(Widget("image", cls="android.view.View",
                       style={"icon": "", "box": 40, "circle": True, "bg": "skeleton", "color": "skeleton"}),
                column(Widget("skeleton", style={"h": 14, "frac": 0.7}), Widget("skeleton", style={"h": 12, "frac": 0.45}),
                       gap=10, weight=1),
                gap=16, pad=16, align="center", id="placeholder_item", emit=True)
            for _ in range(n_rows)
        ]
        tree = column(text(self.message, id="status_text", size=14, color="muted", vpad=4), *placeholder_rows,
                      id="shimmer_view_container", cls="com.facebook.shimmer.ShimmerFrameLayout", pad=8, gap=0)
        node = lay(tree, m, x1, y1, x2 - x1)
        clip(node, region)
        Painter(img, m, pal).node(node)
        for box, patch in patches:
            img.paste(patch, box[:2])
        new = forest(export([(node, pkg)])[0])
        (holder or app).children.extend(new)
        return obs.replace(elements=flatten(roots))

    @staticmethod
    def _drawn_above(app: TNode, holder: Optional[TNode], region: Box) -> list[Box]:
        """Top-level views after the content container in drawing order that overlap it."""
        if holder is None:
            return []
        order = list(app.walk())
        inner = {id(n) for n in holder.walk()}
        start = next(i for i, n in enumerate(order) if n is holder)
        boxes: list[Box] = []
        covered: set[int] = set()
        for n in order[start + 1:]:
            if id(n) in inner or id(n) in covered:
                continue
            b = n.el.bounds
            if b[2] > region[0] and b[0] < region[2] and b[3] > region[1] and b[1] < region[3] and n.el.area > 0:
                boxes.append(b)
                covered.update(id(k) for k in n.walk())
        return boxes
