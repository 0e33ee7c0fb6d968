"""FrameMemo: reuse layouts and frames across SimDevice episodes.

Every observation of a :class:`~benchmark.sim.device.SimDevice` builds its widget trees,
lays them out, exports the nodes as accessibility elements, draws the screenshot and
writes the uiautomator dump. All but the first step are pure functions of the widget
trees, the metrics and the device settings, and the same screens come back again and
again when one task is run under many perturbations. A ``FrameMemo`` passed as
``SimDevice(frame_memo=...)`` keeps them, keyed by everything they are computed from:

- a *layout* (``lay``, ``lay_screen``) by the widget trees laid out (every field of every
  widget but its handlers, of which only whether they are set is read, and a field's
  ``store``, whose value is in the field's text already), the metrics, the position and,
  for an app screen, its route state (scroll offsets); a repeated one is rebuilt from the
  kept shape onto the current widgets, so the nodes carry this frame's own handlers;
- a *frame*'s elements, screenshot and dump by every laid-out node with its widget, every
  window's own fields, the metrics, the system bars, the settings and the toast.

What an observation holds is identical with and without a memo (the same pixels,
elements and dump; tests/benchmark/test_sim_memo.py checks it): keys are written with
:mod:`marshal`, which takes plain values only (str, bytes, numbers, None, tuples, lists,
dicts, sets; ``1``, ``1.0`` and ``True`` written apart), so a tree holding anything else
is simply not memoised; the screenshot handed out is a read-only view of the kept one
(the same pixels; Pillow copies them on the first write to it, so a perturbation drawing
into it changes only its own copy); the elements (UIElement objects) of a screen are
shared by the observations of it, as they are by the copies ``Observation.replace`` makes,
and like them are never changed in place. Without ``frame_memo`` (the default) the device does
exactly what it did before. A memo serves one frame at a time: share it between devices
of one thread, not across threads.
"""

from __future__ import annotations

import marshal
import operator
from collections import OrderedDict
from dataclasses import fields
from typing import Any, Callable, Iterable, Optional, Sequence

from benchmark.ui.layout import Node
from benchmark.ui.widgets import Widget

DEFAULT_FRAMES = 64  # a screenshot is ~2 MB at 540x1200 (64 frames ~ 130 MB), ~8 MB at the full 1080x2400
LAYOUTS_PER_FRAME = 4  # a frame lays out a few trees (app screen, keyboard, status bar, nav bar)

# what a key reads of a widget: every field but its children (walked) and its handlers
# (only whether each is set: all that the layout, the export and the renderer read of them)
_HANDLERS = tuple(f.name for f in fields(Widget) if f.name.startswith("on_"))
_WIDGET_FIELDS = tuple(f.name for f in fields(Widget) if f.name != "children" and f.name not in _HANDLERS)
# a node: its widget, children and these; a kept layout is rebuilt positionally, so layouts are
# kept only while Node's fields are the ones this module knows (LAYOUTS)
_NODE_FIELDS = ("bounds", "lines", "font_px", "visible", "meta")
_node_values = operator.attrgetter(*_NODE_FIELDS)
LAYOUTS = tuple(f.name for f in fields(Node)) == ("widget", "bounds", "children", "lines", "font_px", "visible", "meta")
_ATOMS = frozenset({str, int, float, bool, type(None)})


def _recorder() -> Callable[[Widget], tuple]:
    """``_widget_record(w)``: what the layout, the export and the renderer read of ``w`` — its
    fields, ``state`` without a field's ``store`` (its text and focus are copied into the
    widget), whether each handler is set, and how many children it has. Written out from
    the field names (it runs for every widget of every frame: attribute loads in one tuple
    display are the cheapest)."""
    values = ", ".join("state" if f == "state" else f"w.{f}" for f in _WIDGET_FIELDS)
    handlers = ", ".join(f"w.{h} is None" for h in _HANDLERS)
    src = ("def _widget_record(w):\n"
           "    state = w.state\n"
           "    if 'store' in state:\n"
           "        state = {k: v for k, v in state.items() if k != 'store'}\n"
           f"    return ({values}, {handlers}, len(w.children))\n")
    namespace: dict[str, Any] = {}
    exec(src, namespace)  # noqa: S102 - generated from the dataclass field names above
    return namespace["_widget_record"]


_widget_record = _recorder()


def _immutable(v: Any) -> bool:
    t = type(v)
    return t in _ATOMS or (t is tuple and all(_immutable(x) for x in v))


def shared_view(img: Any) -> Any:
    """A read-only view of ``img`` sharing its pixels: Pillow copies them on the view's
    first write (``paste``, ``ImageDraw``, ``putpixel``), so the kept frame never changes."""
    try:
        view = img._new(img.im)
    except AttributeError:  # not a Pillow image as we know it: a plain copy
        return img.copy()
    view.readonly = 1
    return view


class MemoEntry:
    """What one frame turned into: elements, which nodes they came from (their places in
    the frame's pre-order walk), and, once drawn, the screenshot and the dump."""

    __slots__ = ("elements", "node_index", "screenshot", "xml")

    def __init__(self, elements: list, node_index: tuple[int, ...]):
        self.elements = elements
        self.node_index = node_index
        self.screenshot: Any = None  # never handed out itself: observations get a shared_view
        self.xml: Optional[str] = None


class FrameMemo:
    """A bounded (least recently used) store of layouts and frames, shareable between devices."""

    def __init__(self, max_frames: int = DEFAULT_FRAMES):
        if max_frames < 1:
            raise ValueError(f"max_frames={max_frames}: keep at least one frame")
        self.max_frames = max_frames
        self._entries: "OrderedDict[bytes, MemoEntry]" = OrderedDict()
        self._layouts: "OrderedDict[bytes, tuple]" = OrderedDict()
        self.hits = self.misses = self.unkeyed = 0  # frames (unkeyed: something not plain in them)
        self.layout_hits = self.layout_misses = self.layout_unkeyed = 0
        self.begin_frame()

    def begin_frame(self) -> None:
        """Start a frame: forget the layouts of the last one. A frame's key names the widgets
        its layouts recorded by (layout, place) instead of recording them again; the widget
        lists are held until the next frame, so no id is reused meanwhile."""
        self._frame_keys: list[bytes] = []
        self._frame_widgets: dict[int, tuple[int, int]] = {}
        self._frame_lists: list[list[Optional[Widget]]] = []

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self._layouts.clear()
        self.hits = self.misses = self.unkeyed = 0
        self.layout_hits = self.layout_misses = self.layout_unkeyed = 0

    # -- layouts ------------------------------------------------------------------------------
    def lay(self, what: str, roots: Sequence[Optional[Widget]], args: tuple, compute: Callable[[], Node]) -> Node:
        """``compute()``, the layout ``what`` of the widget trees ``roots`` with ``args``
        (metrics, position, state: all else it reads), or the same layout seen before,
        rebuilt onto these widgets (fresh nodes: the caller may move them)."""
        if not LAYOUTS:
            return compute()
        serial = len(self._frame_keys)
        widgets: list[Optional[Widget]] = []
        records: list[Any] = [what, args]
        places: dict[int, tuple[int, int]] = {}
        record, add, put = _widget_record, records.append, widgets.append
        for root in roots:
            stack = [root]
            while stack:
                w = stack.pop()
                if w is None:
                    put(None)
                    add(None)
                    continue
                places[id(w)] = (serial, len(widgets))
                put(w)
                add(record(w))
                if w.children:
                    stack.extend(reversed(w.children))
        try:
            key = marshal.dumps(records, 2)
        except ValueError:  # not plain: not memoised
            self.layout_unkeyed += 1
            return compute()
        self._frame_keys.append(key)
        self._frame_lists.append(widgets)
        self._frame_widgets.update(places)
        shape = self._layouts.get(key)
        if shape is not None:
            self._layouts.move_to_end(key)
            self.layout_hits += 1
            return _rebuild(shape, widgets)
        self.layout_misses += 1
        node = compute()
        shape = _record(node, widgets)
        if shape is not None:
            self._layouts[key] = shape
            while len(self._layouts) > self.max_frames * LAYOUTS_PER_FRAME:
                self._layouts.popitem(last=False)
        return node

    # -- frames -------------------------------------------------------------------------------
    @staticmethod
    def walk(roots: Iterable[Node]) -> list[Node]:
        """The nodes of all ``roots`` in pre-order (the order of the key and of ``node_index``)."""
        out: list[Node] = []
        for root in roots:
            stack = [root]
            while stack:
                n = stack.pop()
                out.append(n)
                stack.extend(reversed(n.children))
        return out

    def key(self, windows: list[Any], flat: list[Node], context: tuple) -> Optional[bytes]:
        """The identity of a frame: ``context`` (metrics, bars, settings, toast, area …),
        every window's own fields and every node with its widget (one of this frame's
        layouts recorded: its place there, the layout's key being part of this key); None
        (not memoised) when anything in it is not a plain value."""
        parts: list[Any] = [context, self._frame_keys]
        for win in windows:
            parts.append((win.name, win.package, win.bg, win.modal, win.activity, win.on_outside is None, win.accent,
                          win.wallpaper, win.bar))
        registered = self._frame_widgets
        for n in flat:
            w = n.widget
            ref = registered.get(id(w))
            parts.append(ref if ref is not None else _widget_record(w))
            parts.append(_node_values(n))
            parts.append(len(n.children))
        try:
            return marshal.dumps(parts, 2)
        except ValueError:
            self.unkeyed += 1
            return None

    def get(self, key: bytes) -> Optional[MemoEntry]:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry

    def put(self, key: bytes, elements: list, nodes: list[Node], flat: list[Node]) -> MemoEntry:
        where = {id(n): i for i, n in enumerate(flat)}
        entry = MemoEntry(list(elements), tuple(where[id(n)] for n in nodes))
        self._entries[key] = entry
        while len(self._entries) > self.max_frames:
            self._entries.popitem(last=False)
        return entry


def _record(root: Node, widgets: list[Optional[Widget]]) -> Optional[tuple]:
    """The shape of a laid-out tree in pre-order: per node its widget's place in ``widgets``,
    its parent's place in the shape and its values; None when it cannot be rebuilt exactly
    (a node of another widget, a node twice, a mutable value)."""
    where = {id(w): i for i, w in enumerate(widgets) if w is not None}
    seen: set[int] = set()
    out: list[tuple] = []
    stack: list[tuple[Node, int]] = [(root, -1)]
    while stack:
        n, parent = stack.pop()
        i = where.get(id(n.widget))
        if i is None or id(n) in seen:
            return None
        seen.add(id(n))
        bounds, lines, font_px, visible, meta = _node_values(n)
        if not (_immutable(bounds) and _immutable(lines) and _immutable(font_px) and _immutable(visible)
                and type(meta) is dict and all(type(k) is str and _immutable(x) for k, x in meta.items())):
            return None
        me = len(out)
        out.append((i, parent, bounds, lines, font_px, visible, dict(meta)))
        stack.extend((c, me) for c in reversed(n.children))
    return tuple(out)


def _rebuild(shape: tuple, widgets: list[Optional[Widget]]) -> Node:
    """Fresh nodes of a kept shape, on ``widgets`` (each with its own children list and meta)."""
    nodes = [Node(widgets[i], bounds, [], lines, font_px, visible, dict(meta) if meta else {})
             for i, _, bounds, lines, font_px, visible, meta in shape]
    for node, rec in zip(nodes, shape):
        if rec[1] >= 0:
            nodes[rec[1]].children.append(node)
    return nodes[0]
