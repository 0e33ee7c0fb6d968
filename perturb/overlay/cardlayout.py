"""Lay out an overlay card (head / scrollable body / foot) inside the app area.

The body scrolls when the card would not fit (landscape, large fonts), so the
buttons always stay on screen — an interruption must stay dismissable."""

from __future__ import annotations

from typing import Any

from PIL import Image

from benchmark.ui.layout import Box, Node, _shift, clip, lay, lay_scroll
from benchmark.ui.metrics import Metrics
from benchmark.ui.render import Painter
from benchmark.ui.theme import Palette
from benchmark.ui.widgets import Widget
from perturb.overlay.build import CardParts

SCROLL_KEY = "body"


def _stack(widgets: list[Widget], m: Metrics, x: int, y: int, width: int, gap: int) -> tuple[list[Node], int]:
    nodes: list[Node] = []
    cy = y
    for i, w in enumerate(widgets):
        if i:
            cy += gap
        n = lay(w, m, x, cy, width)
        nodes.append(n)
        cy = n.bounds[3]
    return nodes, cy - y


def lay_card(parts: CardParts, m: Metrics, area: Box, scroll_state: dict[str, Any]) -> Node:
    ax1, ay1, ax2, ay2 = area
    aw, ah = ax2 - ax1, ay2 - ay1
    pad, gap = m.dp(parts.pad), m.dp(parts.gap)
    if parts.placement == "full":
        x, width = ax1, aw
        max_h = ah
    elif parts.placement == "bottom":
        width = min(aw, m.dp(640))
        x = ax1 + (aw - width) // 2
        max_h = ah - m.dp(24)
    elif parts.placement == "top":
        margin = m.dp(8)
        width = min(aw - 2 * margin, m.dp(600))
        x = ax1 + (aw - width) // 2
        max_h = ah // 2
    else:
        width = min(aw - m.dp(48), m.dp(parts.max_w))
        x = ax1 + (aw - width) // 2
        max_h = ah - m.dp(48)
    inner_x, inner_w = x + pad, width - 2 * pad
    if parts.placement == "full":
        head, head_h = _stack(parts.head, m, x, 0, width, 0)
        foot, foot_h = _stack(parts.foot, m, inner_x + m.dp(16), 0, inner_w - m.dp(32), gap)
        foot_h += m.dp(16) * 2 if foot else 0
        body_w = Widget("scroll", id=parts.scroll_id, cls="android.widget.ScrollView", children=parts.body,
                        style={"pad": 24, "gap": 16}, state={"key": SCROLL_KEY})
        top = ay1 + head_h
        bottom = ay2 - foot_h
        body = lay_scroll(body_w, m, (x, top, x + width, bottom), scroll_state)
        for n in head:
            _shift(n, 0, ay1)
        for n in foot:
            _shift(n, 0, bottom + m.dp(16))
        card_box = (x, ay1, x + width, ay2)
        kids = [*head, body, *foot]
    else:
        head, head_h = _stack(parts.head, m, inner_x, 0, inner_w, gap)
        foot, foot_h = _stack(parts.foot, m, inner_x, 0, inner_w, gap)
        content = Widget("column", children=parts.body, style={"gap": parts.gap})
        measured = lay(content, m, inner_x, 0, inner_w)
        body_h = measured.bounds[3] - measured.bounds[1] if parts.body else 0
        n_parts = sum(1 for h in (head_h, body_h, foot_h) if h)
        fixed = 2 * pad + head_h + foot_h + gap * max(0, n_parts - 1)
        view_h = max(0, min(body_h, max_h - fixed))
        total = fixed + view_h
        if parts.placement == "bottom":
            y = ay2 - total
        elif parts.placement == "top":
            y = ay1 + m.dp(8)
        else:
            y = ay1 + (ah - total) // 2
        cy = y + pad
        for n in head:
            _shift(n, 0, cy)
        if head:
            cy += head_h + gap
        kids_body: list[Node] = []
        if parts.body:
            body_w = Widget("scroll", id=parts.scroll_id, cls="android.widget.ScrollView", children=parts.body,
                            style={"gap": parts.gap}, state={"key": SCROLL_KEY})
            kids_body = [lay_scroll(body_w, m, (inner_x, cy, inner_x + inner_w, cy + view_h), scroll_state)]
            cy += view_h + gap
        for n in foot:
            _shift(n, 0, cy)
        kids = [*head, *kids_body, *foot]
        card_box = (x, y, x + width, y + total)
    card_w = Widget("card", id=parts.card_id, desc=parts.desc, on_click=parts.on_click, cls=parts.card_cls,
                    style={"pad": parts.pad, "surface": "dialog", "placement": parts.placement, "scrim": parts.scrim,
                           "radius": parts.radius})
    card = Node(card_w, card_box, children=kids)
    clip(card, area)
    card.meta["dialog"] = parts.placement
    card.meta["scrim"] = parts.scrim
    card.meta["area"] = area
    return card


def paint_card(img: Image.Image, card: Node, m: Metrics, pal: Palette) -> None:
    """Draw a laid-out card; its scrolling body is clipped to its viewport (the
    painter draws whole nodes, so overflow would spill over the head and foot)."""
    body = [c for c in card.children if c.widget.kind == "scroll"]
    shell = Node(card.widget, card.bounds, children=[c for c in card.children if c not in body],
                 visible=card.visible, meta=card.meta)
    Painter(img, m, pal).node(shell)
    for b in body:
        x1, y1, x2, y2 = b.vis
        if x2 <= x1 or y2 <= y1:
            continue
        scratch = img.copy()
        Painter(scratch, m, pal).node(b)
        img.paste(scratch.crop((x1, y1, x2, y2)), (x1, y1))
