"""Export laid-out nodes as uiautomator accessibility nodes (:class:`UIElement`)."""

from __future__ import annotations

from typing import Optional

from benchmark.ui.layout import Node
from ttir.core.types import UIElement

# containers that always appear in the dump even without an id or handler
_ALWAYS = {"scroll", "top_bar", "card", "web", "grid"}
_SKIP = {"spacer", "divider"}


def resource_id(widget_id: str, package: str) -> str:
    if not widget_id:
        return ""
    if ":" in widget_id:
        return widget_id
    return f"{package}:id/{widget_id}"


def _element(n: Node, package: str, parent: Optional[int], depth: int) -> UIElement:
    w = n.widget
    k = w.kind
    pkg = w.package or package
    text = w.text
    if k == "field":
        text = w.text or w.hint
    elif k == "switch":
        text = "ON" if w.state.get("checked") else "OFF"
    clickable = w.on_click is not None or k in ("field", "checkbox", "radio", "switch", "slider")
    long_clickable = w.on_long_click is not None or k == "field"
    checkable = k in ("checkbox", "radio", "switch") or "checked" in w.state
    return UIElement.unchecked(
        text=text,
        content_desc=w.desc if k != "switch" else "",
        resource_id=resource_id(w.id, pkg),
        class_name=w.class_name or "android.view.View",
        package=pkg,
        bounds=n.vis,
        hint=w.hint if k == "field" else "",
        clickable=clickable and w.state.get("enabled", True),
        long_clickable=long_clickable,
        editable=k == "field",
        checkable=checkable,
        checked=bool(w.state.get("checked")) if checkable else False,
        enabled=bool(w.state.get("enabled", True)),
        focusable=clickable or k == "field",
        focused=bool(w.state.get("focused")),
        scrollable=k == "scroll" and bool(n.meta.get("can_scroll")),
        selected=bool(w.state.get("selected")),
        password=bool(w.state.get("password")),
        parent=parent,
        depth=depth,
    )


def _emits(n: Node, is_root: bool) -> bool:
    w = n.widget
    if w.kind in _SKIP or w.style.get("a11y") is False:
        return False
    if is_root or w.kind in _ALWAYS or n.meta.get("dialog"):
        return True
    if w.kind in ("row", "column"):
        return bool(w.id or w.on_click or w.on_long_click or w.style.get("emit"))
    return True


def export(windows: list[tuple[Node, str]]) -> tuple[list[UIElement], list[Node]]:
    """Flatten windows (root node, package) into elements and the parallel node list."""
    elements: list[UIElement] = []
    nodes: list[Node] = []

    def walk(n: Node, package: str, parent: Optional[int], depth: int, is_root: bool) -> None:
        if n.widget.style.get("a11y") is False:
            return
        if _emits(n, is_root):
            elements.append(_element(n, package, parent, depth))
            nodes.append(n)
            me: Optional[int] = len(elements) - 1
            d = depth + 1
        else:
            me, d = parent, depth
        for c in n.children:
            walk(c, package, me, d, False)

    for root, package in windows:
        walk(root, package, None, 0, True)
    return elements, nodes
