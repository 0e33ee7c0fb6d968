"""Layout: a widget tree plus metrics become positioned nodes in screen pixels.

Widths flow down from the parent, heights up from the content (text wraps at
the real font size), so font scale, density and orientation really move
elements. Scroll containers clip their content to a viewport.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from benchmark.ui.metrics import Metrics, line_height, text_width, wrap
from benchmark.ui.widgets import Screen, Widget

Box = tuple[int, int, int, int]


@dataclass(eq=False)
class Node:
    """A laid-out widget. ``bounds`` is where it is drawn; ``visible`` is the part on screen."""

    widget: Widget
    bounds: Box
    children: list["Node"] = field(default_factory=list)
    lines: tuple[str, ...] = ()
    font_px: int = 0
    visible: Optional[Box] = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def vis(self) -> Box:
        return self.visible if self.visible is not None else self.bounds

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


# widths a child takes in a column unless style["fill"] says otherwise
_INTRINSIC_IN_COLUMN = {"button", "icon_button", "image", "progress", "switch"}
_DEFAULT_TEXT_SP = {"button": 15, "field": 17, "checkbox": 16, "radio": 16}


def _style(w: Widget, key: str, default: Any) -> Any:
    v = w.style.get(key)
    return default if v is None else v


def intrinsic_width(w: Widget, m: Metrics, avail: int) -> int:
    """Preferred width of a widget when not stretched (used by rows)."""
    k = w.kind
    if k == "text":
        px = m.sp(_style(w, "size", 16))
        return min(avail, text_width(w.text, px) + 1)
    if k == "button":
        px = m.sp(_style(w, "size", 15))
        return min(avail, max(m.dp(64), text_width(w.text, px) + m.dp(48)))
    if k == "icon_button":
        return m.dp(_style(w, "box", 48))
    if k == "image":
        return m.dp(_style(w, "box", 40))
    if k == "switch":
        return m.dp(52)
    if k == "progress":
        return m.dp(48)
    if k in ("checkbox", "radio"):
        px = m.sp(16)
        return min(avail, m.dp(40) + text_width(w.text, px) + m.dp(8))
    if k == "spacer":
        return m.dp(_style(w, "w", 0))
    if k in ("column", "card", "row", "top_bar") and w.style.get("w") is not None:
        return min(avail, m.dp(w.style["w"]))  # an explicit width (the gesture pill)
    if k in ("column", "card", "row", "top_bar"):
        pad = m.dp(_style(w, "pad", 0))
        if k == "row" or k == "top_bar":
            gap = m.dp(_style(w, "gap", 8))
            total = sum(intrinsic_width(c, m, avail) for c in w.children) + gap * max(0, len(w.children) - 1)
            hpad = m.dp(w.style["hpad"]) if w.style.get("hpad") is not None else pad
            return min(avail, total + 2 * hpad)
        total = max((intrinsic_width(c, m, avail) for c in w.children), default=0)
        return min(avail, total + 2 * pad)
    return avail


def lay(w: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
    """Place ``w`` with its top-left at (x, y) and the given width; its height follows."""
    k = w.kind
    if k == "text":
        px = m.sp(_style(w, "size", 16))
        lines = wrap(w.text, px, width, int(_style(w, "max_lines", 0)))
        h = len(lines) * line_height(px) + 2 * m.dp(_style(w, "vpad", 0))
        return Node(w, (x, y, x + width, y + h), lines=lines, font_px=px)
    if k == "button":
        px = m.sp(_style(w, "size", 15))
        lines = wrap(w.text, px, max(1, width - m.dp(32)), 2)
        h = max(m.dp(_style(w, "min_h", 48)), len(lines) * line_height(px) + m.dp(_style(w, "vpad", 20)))
        return Node(w, (x, y, x + width, y + h), lines=lines, font_px=px)
    if k == "icon_button":
        s = m.dp(_style(w, "box", 48))
        return Node(w, (x, y, x + (width if _style(w, "weight", 0) else s), y + s))
    if k == "image":
        s = m.dp(_style(w, "box", 40))
        return Node(w, (x, y, x + width if _style(w, "fill", False) else x + s, y + s))
    if k == "field":
        px = m.sp(_style(w, "size", 17))
        shown = w.text or w.hint
        inner = max(1, width - m.dp(32))
        if _style(w, "multiline", False):
            lines = wrap(shown, px, inner, 0)
            n = max(int(_style(w, "min_lines", 3)), len(lines))
        else:
            lines = wrap(shown, px, inner, 1)
            n = 1
        h = n * line_height(px) + m.dp(16 if _style(w, "pill", False) else 32)
        if _style(w, "label_space", False):
            h += line_height(m.sp(12))  # a filled field keeps room for its floating label
        return Node(w, (x, y, x + width, y + h), lines=lines, font_px=px)
    if k in ("checkbox", "radio"):
        px = m.sp(16)
        lines = wrap(w.text, px, max(1, width - m.dp(48)), 2)
        h = max(m.dp(48), len(lines) * line_height(px) + m.dp(16))
        return Node(w, (x, y, x + width, y + h), lines=lines, font_px=px)
    if k == "switch":
        return Node(w, (x, y, x + m.dp(52), y + m.dp(32)))
    if k == "slider":
        return Node(w, (x, y, x + width, y + m.dp(48)))
    if k == "progress":
        s = m.dp(48)
        return Node(w, (x, y, x + s, y + s))
    if k == "spacer":
        return Node(w, (x, y, x + width, y + m.dp(_style(w, "h", 8))))
    if k == "divider":
        return Node(w, (x, y, x + width, y + max(1, m.dp(1))))
    if k == "skeleton":
        frac = float(_style(w, "frac", 1.0))
        return Node(w, (x, y, x + int(width * frac), y + m.dp(_style(w, "h", 20))))
    if k == "row" or k == "top_bar":
        return _lay_row(w, m, x, y, width)
    if k == "key":
        return _lay_key(w, m, x, y, width)
    if k == "grid":
        return _lay_grid(w, m, x, y, width)
    if k == "scroll":
        # A scroll container outside a screen body: lay out fully (no viewport).
        return _lay_column(w, m, x, y, width)
    return _lay_column(w, m, x, y, width)


def _lay_column(w: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
    pad = m.dp(_style(w, "pad", 0))
    hpad = m.dp(w.style["hpad"]) if w.style.get("hpad") is not None else pad  # horizontal padding, if it differs
    gap = m.dp(_style(w, "gap", 0))
    margin = m.dp(_style(w, "margin", 0))
    x0, width0 = x + margin, width - 2 * margin
    inner_w = max(1, width0 - 2 * hpad)
    cy = y + margin + pad
    align = _style(w, "align", "start")
    kids: list[Node] = []
    for i, c in enumerate(w.children):
        if i:
            cy += gap
        if c.kind in _INTRINSIC_IN_COLUMN and not _style(c, "fill", False):
            cw = intrinsic_width(c, m, inner_w)
            cx = x0 + hpad + (inner_w - cw if align == "end" else (inner_w - cw) // 2 if align == "center" else 0)
        else:
            cw, cx = inner_w, x0 + hpad
        n = lay(c, m, cx, cy, cw)
        kids.append(n)
        cy = n.bounds[3]
    h_min = m.dp(_style(w, "min_h", 0))
    bottom = max(cy + pad, y + margin + h_min)
    return Node(w, (x0, y + margin, x0 + width0, bottom), children=kids)


def _lay_row(w: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
    pad = m.dp(_style(w, "pad", 0))
    hpad = m.dp(w.style["hpad"]) if w.style.get("hpad") is not None else pad  # horizontal padding, if it differs
    start = m.dp(w.style["pad_start"]) if w.style.get("pad_start") is not None else hpad
    end = m.dp(w.style["pad_end"]) if w.style.get("pad_end") is not None else hpad
    gap = m.dp(_style(w, "gap", 8))
    inner_w = max(1, width - start - end)
    n = len(w.children)
    fixed = [0] * n
    weights = [float(_style(c, "weight", 0)) for c in w.children]
    total_gap = gap * max(0, n - 1)
    for i, c in enumerate(w.children):
        if not weights[i]:
            fixed[i] = intrinsic_width(c, m, inner_w)
    free = inner_w - total_gap - sum(fixed)
    wsum = sum(weights)
    if wsum == 0 and free < 0:
        # shrink the widest children until they fit
        scale = max(0.1, (inner_w - total_gap) / max(1, sum(fixed)))
        fixed = [int(f * scale) for f in fixed]
        free = 0
    floor = [0 if c.kind == "spacer" else m.dp(24) for c in w.children]  # a weighted control keeps a usable width
    widths = [fixed[i] if not weights[i] else max(floor[i], int(max(0, free) * weights[i] / wsum)) for i in range(n)]
    if wsum and free > 0:  # rounding leftovers go to the last weighted child, so the row ends where it should
        last = max(i for i in range(n) if weights[i])
        widths[last] += max(0, inner_w - total_gap - sum(widths))
    justify = _style(w, "justify", "start")
    used = sum(widths) + total_gap
    cx = x + start
    if justify == "end":
        cx += max(0, inner_w - used)
    elif justify == "center":
        cx += max(0, inner_w - used) // 2
    kids = []
    for i, c in enumerate(w.children):
        kids.append(lay(c, m, cx, y + pad, widths[i]))
        cx += widths[i] + gap
    content_h = max((k.bounds[3] - k.bounds[1] for k in kids), default=0)
    h = max(content_h + 2 * pad, m.dp(_style(w, "min_h", 0)))
    if _style(w, "align", "center") == "center":
        for k in kids:
            kh = k.bounds[3] - k.bounds[1]
            _shift(k, 0, (y + (h - kh) // 2) - k.bounds[1])
    return Node(w, (x, y, x + width, y + h), children=kids)


def _lay_key(w: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
    """A key cap: the label (or icon) centred, a subtitle under it, a hint in the corner."""
    h = m.dp(_style(w, "h", 48))
    node = Node(w, (x, y, x + width, y + h))
    has_sub = any(c.style.get("slot") == "subtitle" for c in w.children)
    for c in w.children:
        slot = c.style.get("slot")
        if c.kind == "image":
            s = m.dp(_style(c, "box", 24))
            cx, cy = x + width // 2, y + h // 2
            node.children.append(Node(c, (cx - s // 2, cy - s // 2, cx + s // 2, cy + s // 2)))
            continue
        px = m.sp(_style(c, "size", 16))
        tw, lh = text_width(c.text, px) + 1, line_height(px)
        if slot == "hint":
            x2, y1 = x + width - m.dp(4), y + m.dp(2)
            box = (x2 - tw, y1, x2, y1 + lh)
        elif slot == "subtitle":
            cx, y1 = x + width // 2, y + h // 2 + m.dp(2)
            box = (cx - tw // 2, y1, cx - tw // 2 + tw, y1 + lh)
        else:
            cx = x + width // 2
            cy = y + h // 2 - (m.dp(8) if has_sub else 0)
            box = (cx - tw // 2, cy - lh // 2, cx - tw // 2 + tw, cy - lh // 2 + lh)
        node.children.append(Node(c, box, lines=(c.text,), font_px=px))
    return node


def _lay_grid(w: Widget, m: Metrics, x: int, y: int, width: int) -> Node:
    cols = max(1, int(_style(w, "columns", 4)))
    gap = m.dp(_style(w, "gap", 4))
    cell_h = m.dp(_style(w, "cell_h", 72))
    cw = (width - gap * (cols - 1)) // cols
    kids = []
    rows = 0
    for i, c in enumerate(w.children):
        r, col = divmod(i, cols)
        rows = r + 1
        cx = x + col * (cw + gap)
        cy = y + r * (cell_h + gap)
        node = lay(c, m, cx, cy, cw)
        # cells are fixed-size boxes
        node.bounds = (cx, cy, cx + cw, cy + cell_h)
        kids.append(node)
    h = rows * cell_h + gap * max(0, rows - 1)
    return Node(w, (x, y, x + width, y + h), children=kids)


def _shift(n: Node, dx: int, dy: int) -> None:
    if not dx and not dy:
        return
    for node in n.walk():
        x1, y1, x2, y2 = node.bounds
        node.bounds = (x1 + dx, y1 + dy, x2 + dx, y2 + dy)
        if node.visible is not None:
            a, b, c, d = node.visible
            node.visible = (a + dx, b + dy, c + dx, d + dy)


def _intersect(a: Box, b: Box) -> Optional[Box]:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


def clip(n: Node, box: Box) -> Optional[Node]:
    """Drop nodes outside ``box``; set ``visible`` to the on-screen part of the rest."""
    vis = _intersect(n.vis, box)
    if vis is None:
        return None
    n.visible = vis
    n.children = [c for c in (clip(c, box) for c in n.children) if c is not None]
    return n


# ----------------------------------------------------------------- the screen

SCROLL_STEP = 0.6  # share of the viewport one scroll action moves


def lay_screen(screen: Screen, m: Metrics, area: Box, state: dict[str, Any], root: Widget) -> Node:
    """Lay out an app window inside ``area`` (below the status bar, above nav bar / keyboard).

    ``state`` is the route state that holds scroll offsets (in dp).
    """
    x0, y0, x1, y1 = area
    width = x1 - x0
    rnode = Node(root, area)
    layers: list[Node] = []
    top_y = y0
    if screen.top is not None:
        t = lay(screen.top, m, x0, y0, width)
        layers.append(t)
        top_y = t.bounds[3]
    bottom_y = y1
    bottom_node = None
    if screen.bottom is not None:
        b = lay(screen.bottom, m, x0, 0, width)
        bh = b.bounds[3] - b.bounds[1]
        _shift(b, 0, y1 - bh)
        bottom_node = b
        bottom_y = y1 - bh
    body = screen.body
    viewport = (x0, top_y, x1, bottom_y)
    if body.kind == "scroll":
        body_node = lay_scroll(body, m, viewport, state)
    else:
        body_node = lay(body, m, x0, top_y, width)
        body_node.meta["stretch"] = True
        body_node.bounds = (x0, top_y, x1, max(body_node.bounds[3], bottom_y))
        clip(body_node, viewport)
    # body first so the bars and FAB are drawn (and hit-tested) above it
    rnode.children = [body_node] + layers + ([bottom_node] if bottom_node else [])
    if screen.fab is not None:
        s = m.dp(56)
        margin = m.dp(16)
        fx, fy = x1 - margin - s, bottom_y - margin - s
        fab = Node(screen.fab, (fx, fy, fx + s, fy + s))
        fab.meta["fab"] = True
        rnode.children.append(fab)
    if screen.dialog is not None:
        rnode.children.append(lay_dialog(screen.dialog, m, (x0, y0, x1, y1), anchor_y=top_y))
    return rnode


def lay_scroll(w: Widget, m: Metrics, viewport: Box, state: dict[str, Any]) -> Node:
    x0, y0, x1, y1 = viewport
    key = w.state.get("key", "scroll")
    content = _lay_column(w, m, x0, y0, x1 - x0)
    content_h = content.bounds[3] - content.bounds[1]
    view_h = y1 - y0
    max_off_px = max(0, content_h - view_h)
    off_dp = float(state.get(key, 0.0) or 0.0)
    off_px = min(max_off_px, max(0, m.dp(off_dp)))
    _shift(content, 0, -off_px)
    node = Node(w, viewport, children=content.children)
    focused = next((n for n in content.walk() if n.widget.kind == "field" and n.widget.state.get("focused")), None)
    node.meta.update(
        scroll_key=key,
        content_h_dp=content_h / m.px_per_dp,
        view_h_dp=view_h / m.px_per_dp,
        offset_dp=off_px / m.px_per_dp,
        can_scroll=max_off_px > 0,
        # where the focused field is, even when it lies outside the viewport (the keyboard rose over it)
        focused_bounds=focused.bounds if focused is not None else None,
    )
    node.children = [c for c in (clip(c, viewport) for c in node.children) if c is not None]
    return node


def lay_dialog(w: Widget, m: Metrics, area: Box, anchor_y: Optional[int] = None) -> Node:
    """A dialog card placed in ``area``: centred, bottom sheet, full screen, banner, or an
    overflow menu dropping from under the top bar's ⋮ (``anchor_y``: the bar's bottom)."""
    x0, y0, x1, y1 = area
    width = x1 - x0
    placement = _style(w, "placement", "center")
    if placement == "bottom":
        node = lay(w, m, x0, 0, width)
        h = node.bounds[3] - node.bounds[1]
        _shift(node, 0, y1 - h)
    elif placement == "full":
        node = lay(w, m, x0, y0, width)
        node.bounds = (x0, y0, x1, y1)
    elif placement == "top":
        margin = m.dp(8)
        node = lay(w, m, x0 + margin, y0 + margin, width - 2 * margin)
    elif placement == "menu":
        # a popup menu anchored under the top-right overflow button, as Android's PopupMenu
        margin = m.dp(8)
        dw = min(width - 2 * margin, m.dp(_style(w, "max_w", 280)))
        top = anchor_y - m.dp(4) if anchor_y is not None and anchor_y > y0 else y0 + margin
        node = lay(w, m, x1 - margin - dw, top, dw)
    else:
        dw = min(width - m.dp(48), m.dp(_style(w, "max_w", 560)))
        node = lay(w, m, x0 + (width - dw) // 2, 0, dw)
        h = node.bounds[3] - node.bounds[1]
        _shift(node, 0, y0 + max(0, ((y1 - y0) - h) // 2))
    clip(node, area)
    node.meta["dialog"] = placement
    node.meta["scrim"] = bool(_style(w, "scrim", placement in ("center", "bottom")))
    node.meta["area"] = area
    return node
