"""Turn a (script-updated) DOM into simulated-phone widgets, the way Chrome
exposes web content: containers as ``android.view.View``, text as
``android.widget.TextView``, buttons as ``android.widget.Button`` and inputs as
``android.widget.EditText``. CSS px are dp and font sizes are sp, so the page
reflows with the device's density, font scale and orientation."""

from __future__ import annotations

import re
from importlib import resources
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from benchmark.apps.web.css import StyleSheet, color, length
from benchmark.apps.web.dom import Child, Document, Element
from benchmark.ui.widgets import Widget, button, column, field_, row, text

VIEW = "android.view.View"
INLINE_TAGS = frozenset({"span", "b", "strong", "i", "em", "a", "label", "small", "code", "u", "br"})
SKIPPED_TAGS = frozenset({"head", "script", "style", "title", "meta", "link", "template", "noscript"})
LINK_COLOR = (26, 13, 171)

# the user-agent stylesheet (ua.css next to this module)
UA_SHEET = StyleSheet(resources.files(__package__).joinpath("ua.css").read_text(encoding="utf-8"))
INHERITED = ("font-size", "font-weight", "color", "text-align")


@dataclass
class RenderContext:
    """What rendered widgets call back into: the page script, input storage, navigation."""

    on_call: Callable[[str, str], Any]  # (element id, onclick code)
    field_key: Callable[[str], str]  # input id/name -> route-state key holding its value
    on_link: Optional[Callable[[str], Any]] = None
    on_submit: Optional[Callable[[str], Any]] = None  # Enter pressed in an input (its id)
    sheet: StyleSheet = field(default_factory=StyleSheet)


@dataclass(frozen=True)
class _Inherited:
    font_px: float = 16.0
    bold: bool = False
    color: Optional[tuple[int, int, int]] = None
    text_align: str = "left"


def render_page(doc: Document, ctx: RenderContext) -> Widget:
    """The ``<body>`` as one column widget (margins and background included)."""
    ctx.sheet = StyleSheet(doc.stylesheet())
    body = doc.body
    widgets = _block(body, [doc.root], _Inherited(), ctx)
    return widgets[0] if widgets else column()


# --------------------------------------------------------------------- styles


def _declared(el: Element, ancestors: Sequence[Element], ctx: RenderContext) -> dict[str, str]:
    decl = UA_SHEET.declared(el, ancestors)
    decl.update(ctx.sheet.declared(el, ancestors))
    return decl


def _inherit(decl: dict[str, str], parent: _Inherited) -> _Inherited:
    fpx = length(decl.get("font-size"), parent.font_px, parent.font_px)
    weight = decl.get("font-weight", "")
    bold = parent.bold if not weight else (weight == "bold" or (weight.isdigit() and int(weight) >= 600))
    c = color(decl.get("color")) or parent.color
    align = decl.get("text-align", parent.text_align)
    return _Inherited(fpx, bold, c, align if align in ("left", "center", "right") else parent.text_align)


def _hidden(el: Element, decl: dict[str, str]) -> bool:
    return "hidden" in el.attrs or decl.get("display", "").strip() == "none" or (
        el.tag == "input" and el.attrs.get("type", "") == "hidden")


def _is_inline(node: Child, ctx: RenderContext, ancestors: Sequence[Element]) -> bool:
    if isinstance(node, str):
        return True
    if node.tag not in INLINE_TAGS:
        return False
    return ctx.sheet.declared(node, ancestors).get("display", "inline") == "inline"


# --------------------------------------------------------------------- blocks


def _block(el: Element, ancestors: Sequence[Element], parent: _Inherited, ctx: RenderContext) -> list[Widget]:
    """Widgets for a block-level element (with its vertical margins as spacers)."""
    decl = _declared(el, ancestors, ctx)
    if _hidden(el, decl) or el.tag in SKIPPED_TAGS:
        return []
    inh = _inherit(decl, parent)
    if el.tag == "button":
        w = _button(el, decl, inh, ctx)
    elif el.tag == "input":
        w = _input(el, ctx)
    elif el.tag == "br":
        return []
    else:
        w = _container(el, decl, [*ancestors, el], inh, ctx)
    w = _sized(w, decl, inh)
    return _with_margins(w, decl, inh)


def _container(el: Element, decl: dict[str, str], path: list[Element], inh: _Inherited, ctx: RenderContext) -> Widget:
    display = decl.get("display", "block").strip()
    flex = display in ("flex", "inline-flex")
    horizontal = (flex and decl.get("flex-direction", "row").strip() == "row") or el.tag == "tr"
    kids = _children(el, path, inh, ctx, horizontal)
    style: dict[str, Any] = {
        "pad": length(decl.get("padding-top"), inh.font_px),
        "gap": length(decl.get("gap"), inh.font_px),
    }
    bg = color(decl.get("background-color"))
    if bg is not None:
        style["bg"] = bg
    if decl.get("border-radius"):
        style["radius"] = length(decl.get("border-radius"), inh.font_px)
    if el.id:
        style["emit"] = True
    handler = _onclick(el, ctx)
    justify = {"center": "center", "flex-end": "end", "end": "end"}.get(decl.get("justify-content", "").strip(), "start")
    if horizontal:
        if el.tag == "tr":
            for k in kids:
                k.style["weight"] = 1
        align = "center" if decl.get("align-items", "").strip() == "center" else "start"
        return row(*kids, id=el.id, on_click=handler, cls=VIEW, justify=justify, align=align, **style)
    if len(kids) == 1 and kids[0].kind == "text" and not kids[0].id and not kids[0].on_click and not style["pad"] \
            and "bg" not in style:
        # a block holding only text is one TextView (as Chrome reports a heading or a paragraph)
        kids[0].id, kids[0].on_click = el.id, handler
        return kids[0]
    align = "center" if (inh.text_align == "center" or decl.get("align-items", "").strip() == "center") else (
        "end" if inh.text_align == "right" else "start")
    return column(*kids, id=el.id, on_click=handler, cls=VIEW, align=align, **style)


def _children(el: Element, path: list[Element], inh: _Inherited, ctx: RenderContext, horizontal: bool) -> list[Widget]:
    out: list[Widget] = []
    run: list[Child] = []

    def flush() -> None:
        if run:
            w = _inline_run(run, path, inh, ctx)
            if w is not None:
                out.append(w)
            run.clear()

    for child in el.children:
        if _is_inline(child, ctx, path):
            run.append(child)
            continue
        flush()
        assert isinstance(child, Element)
        rendered = _block(child, path, inh, ctx)
        if horizontal:
            grow = ctx.sheet.declared(child, path).get("flex", "").split()
            for w in rendered:
                if grow and grow[0] not in ("0", "none") and w.kind != "spacer":
                    w.style["weight"] = 1
                if w.kind == "field":
                    w.style.setdefault("weight", 1)
        out.extend(rendered)
    flush()
    return out


def _sized(w: Widget, decl: dict[str, str], inh: _Inherited) -> Widget:
    """Apply CSS width/height: a fixed width becomes a shrink-wrapping row whose
    column holds an invisible strut; a height becomes a minimum height."""
    h = length(decl.get("height") or decl.get("min-height"), inh.font_px)
    if h:
        w.style["min_h"] = h
    wd = length(decl.get("width"), inh.font_px)
    centered = decl.get("margin-left", "").strip() == "auto" and decl.get("margin-right", "").strip() == "auto"
    if not wd and not centered:
        return w
    strut = Widget("spacer", style={"h": 0, "w": wd})
    box = column(strut, w) if wd else column(w)
    return row(box, gap=0, justify="center" if centered else "start", align="start")


def _with_margins(w: Widget, decl: dict[str, str], inh: _Inherited) -> list[Widget]:
    top = length(decl.get("margin-top"), inh.font_px)
    bottom = length(decl.get("margin-bottom"), inh.font_px)
    side = length(decl.get("margin-left"), inh.font_px)
    if side and top == bottom == side and w.kind == "column" and not w.style.get("bg"):
        # uniform margins (e.g. the body's 8px) are padding to a transparent column
        w.style["pad"] = float(w.style.get("pad", 0) or 0) + side
        return [w]
    if side:
        w = column(w, pad=side)
    out: list[Widget] = []
    if top:
        out.append(Widget("spacer", style={"h": top}))
    out.append(w)
    if bottom:
        out.append(Widget("spacer", style={"h": bottom}))
    return out


# --------------------------------------------------------------------- leaves


def _onclick(el: Element, ctx: RenderContext) -> Optional[Callable[[], Any]]:
    code = el.attrs.get("onclick", "")
    if not code:
        return None
    return lambda: ctx.on_call(el.id, code)


def _button(el: Element, decl: dict[str, str], inh: _Inherited, ctx: RenderContext) -> Widget:
    label = " ".join(el.text_content().split())
    handler = _onclick(el, ctx) or (lambda: None)  # a <button> is always clickable
    bg = color(decl.get("background-color"))
    style: dict[str, Any] = {"size": inh.font_px}
    if bg is not None:
        style.update(variant="filled", bg=bg, color=inh.color or (0, 0, 0))
    else:
        style["variant"] = "tonal"
    return button(label, handler, id=el.id, enabled="disabled" not in el.attrs, **style)


def _input(el: Element, ctx: RenderContext) -> Widget:
    key_name = el.id or el.attrs.get("name", "") or "input"
    submit = (lambda: ctx.on_submit(key_name)) if ctx.on_submit is not None else None
    w = field_(ctx.field_key(key_name), el.attrs.get("placeholder", ""), id=el.id or key_name, on_submit=submit)
    return w


_SPACES = re.compile(r"[ \t\r\n\f]+")


def _inline_run(run: list[Child], path: list[Element], inh: _Inherited, ctx: RenderContext) -> Optional[Widget]:
    """Consecutive inline content as one TextView (a lone span keeps its id and style)."""
    pieces: list[str] = []

    def collect(node: Child) -> None:
        if isinstance(node, str):
            pieces.append(_SPACES.sub(" ", node))
        elif node.tag == "br":
            pieces.append("\n")
        elif not _hidden(node, ctx.sheet.declared(node, path)):
            for c in node.children:
                collect(c)

    for node in run:
        collect(node)
    value = "\n".join(ln.strip() for ln in "".join(pieces).split("\n")).strip()
    if not value:
        return None
    elements = [n for n in run if isinstance(n, Element)]
    lone = elements[0] if len(elements) == 1 and all(isinstance(n, Element) or not n.strip() for n in run) else None
    style_inh, wid, handler, link_color = inh, "", None, None
    if lone is not None:
        decl = _declared(lone, path, ctx)
        style_inh = _inherit(decl, inh)
        wid = lone.id
        handler = _onclick(lone, ctx)
        href = lone.attrs.get("href", "")
        if lone.tag == "a" and href and ctx.on_link is not None:
            handler = handler or (lambda h=href: ctx.on_link(h))  # type: ignore[misc]
            link_color = LINK_COLOR
    c = link_color or style_inh.color or "text"
    w = text(value, id=wid, size=style_inh.font_px, bold=style_inh.bold, color=c, text_align=style_inh.text_align)
    w.on_click = handler
    return w
