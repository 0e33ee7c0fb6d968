"""Declarative widgets: what a simulated screen is made of.

Apps build a fresh widget tree on every frame (like a React render): the tree
is laid out in dp by :mod:`benchmark.ui.layout`, drawn by
:mod:`benchmark.ui.render` and exported as uiautomator nodes by
:mod:`benchmark.ui.a11y`. Handlers are plain callables captured at build time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from benchmark.ui import tokens

Handler = Optional[Callable[..., Any]]

# kind -> Android class name reported in the UI dump
CLASS_NAMES: dict[str, str] = {
    "column": "android.widget.LinearLayout",
    "row": "android.widget.LinearLayout",
    "scroll": "androidx.recyclerview.widget.RecyclerView",
    "text": "android.widget.TextView",
    "button": "android.widget.Button",
    "icon_button": "android.widget.ImageButton",
    "image": "android.widget.ImageView",
    "field": "android.widget.EditText",
    "checkbox": "android.widget.CheckBox",
    "switch": "android.widget.Switch",
    "slider": "android.widget.SeekBar",
    "radio": "android.widget.RadioButton",
    "top_bar": "android.view.ViewGroup",
    "card": "android.widget.FrameLayout",
    "grid": "android.widget.GridView",
    "progress": "android.widget.ProgressBar",
    "web": "android.webkit.WebView",
    "spacer": "",
    "divider": "",
    "skeleton": "android.view.View",
    "key": "android.widget.FrameLayout",
}


@dataclass(eq=False)
class Widget:
    """One node of a screen description.

    ``style`` holds visual knobs (``size`` in sp, ``bold``, ``color`` role,
    ``bg`` role, ``variant`` …); ``state`` holds semantic flags
    (``checked``, ``selected``, ``enabled``, ``value`` …).
    """

    kind: str
    id: str = ""
    text: str = ""
    desc: str = ""
    hint: str = ""
    children: list["Widget"] = field(default_factory=list)
    on_click: Handler = None
    on_long_click: Handler = None
    on_change: Handler = None
    on_submit: Handler = None
    style: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    cls: str = ""  # overrides CLASS_NAMES[kind]
    package: str = ""  # overrides the window's package (rare: web content)

    def __post_init__(self) -> None:
        if self.kind not in CLASS_NAMES:
            raise ValueError(f"widget kind={self.kind!r} is unknown; expected one of {', '.join(CLASS_NAMES)}")

    @property
    def class_name(self) -> str:
        return self.cls or CLASS_NAMES[self.kind]


# ------------------------------------------------------------------ factories


def column(
    *children: Optional[Widget], id: str = "", pad: float = 0, gap: float = 0, desc: str = "", text: str = "",
    on_click: Handler = None, on_long_click: Handler = None, cls: str = "", **style: Any,
) -> Widget:
    return Widget("column", id=id, desc=desc, text=text, on_click=on_click, on_long_click=on_long_click, cls=cls,
                  children=[c for c in children if c is not None], style={"pad": pad, "gap": gap, **style})


def row(
    *children: Optional[Widget], id: str = "", pad: float = 0, gap: float = 8, desc: str = "", text: str = "",
    on_click: Handler = None, on_long_click: Handler = None, cls: str = "", **style: Any,
) -> Widget:
    return Widget("row", id=id, desc=desc, text=text, on_click=on_click, on_long_click=on_long_click, cls=cls,
                  children=[c for c in children if c is not None], style={"pad": pad, "gap": gap, **style})


def scroll(
    *children: Optional[Widget], id: str = "list", state_key: str = "scroll", pad: float = 0, gap: float = 0, **style: Any
) -> Widget:
    """A vertically scrolling container; its offset lives in the route state under ``state_key``."""
    return Widget(
        "scroll",
        id=id,
        children=[c for c in children if c is not None],
        style={"pad": pad, "gap": gap, **style},
        state={"key": state_key},
    )


def text(value: str, *, id: str = "", size: float = 16, bold: bool = False, color: str = "text", **style: Any) -> Widget:
    return Widget("text", id=id, text=value, style={"size": size, "bold": bold, "color": color, **style})


def button(
    label: str,
    on_click: Handler = None,
    *,
    id: str = "",
    variant: str = "filled",
    desc: str = "",
    enabled: bool = True,
    **style: Any,
) -> Widget:
    """``variant``: filled (primary), tonal, outlined or text (flat)."""
    return Widget(
        "button", id=id, text=label, desc=desc, on_click=on_click,
        style={"variant": variant, **style}, state={"enabled": enabled},
    )


def icon_button(icon: str, desc: str, on_click: Handler = None, *, id: str = "", cls: str = "", **style: Any) -> Widget:
    return Widget("icon_button", id=id, desc=desc, on_click=on_click, cls=cls, style={"icon": icon, **style})


def image(icon: str, *, desc: str = "", id: str = "", size: float = 40, cls: str = "", **style: Any) -> Widget:
    return Widget("image", id=id, desc=desc, cls=cls, style={"icon": icon, "box": size, **style})


def field_(
    key: str,
    hint: str,
    *,
    id: str = "",
    multiline: bool = False,
    password: bool = False,
    on_submit: Handler = None,
    input_type: str = "text",
    ime_action: str = "",
    **style: Any,
) -> Widget:
    """An EditText bound to ``key`` in its window's state; the device fills in the value
    and writes typed text there (the state dict is the single source of truth).

    ``input_type`` (text, email, url, phone, number) picks the keyboard layout, as
    android:inputType does; ``ime_action`` (done, search, go, send, next) the action
    key (default: enter for multi-line fields, done otherwise)."""
    return Widget(
        "field", id=id or key, hint=hint, on_submit=on_submit,
        style={"multiline": multiline, **style},
        state={"key": key, "password": password, "input_type": input_type, "ime_action": ime_action},
    )


def checkbox(label: str, checked: bool, on_change: Handler = None, *, id: str = "", **style: Any) -> Widget:
    return Widget("checkbox", id=id, text=label, on_change=on_change, style=dict(style), state={"checked": checked})


def switch(label: str, checked: bool, on_change: Handler = None, *, id: str = "", summary: str = "", **style: Any) -> Widget:
    """A settings-style row: title (+ summary) and a Switch; tapping the row toggles it."""

    def toggle() -> Any:
        return on_change(not checked) if on_change else None

    texts = [text(label, id="android:id/title", size=17)]
    if summary:
        texts.append(text(summary, id="android:id/summary", size=14, color="muted"))
    return Widget(
        "row", id=id, on_click=toggle,
        children=[column(*texts, weight=1), Widget("switch", id="android:id/switch_widget", on_click=toggle, state={"checked": checked})],
        style={"pad": 16, "gap": 16, "min_h": 64, "align": "center", **style},
    )


def radio(label: str, checked: bool, on_click: Handler = None, *, id: str = "", **style: Any) -> Widget:
    return Widget("radio", id=id, text=label, on_click=on_click, style=dict(style), state={"checked": checked})


def slider(value: float, on_change: Handler = None, *, id: str = "slider", desc: str = "", lo: float = 0, hi: float = 1) -> Widget:
    """A SeekBar; ``on_change(new_value)`` is called with a value in [lo, hi]."""
    return Widget("slider", id=id, desc=desc, on_change=on_change, state={"value": value, "lo": lo, "hi": hi})


def list_item(
    title: str,
    subtitle: str = "",
    *,
    on_click: Handler = None,
    on_long_click: Handler = None,
    id: str = "",
    icon: str = "",
    trailing: Optional[Widget] = None,
    selected: bool = False,
    title_id: str = "",
    subtitle_id: str = "",
) -> Widget:
    """A clickable row: optional leading icon, title, subtitle and a trailing widget."""
    texts = [text(title, id=title_id or "title", size=16)]
    if subtitle:
        texts.append(text(subtitle, id=subtitle_id or "summary", size=14, color="muted"))
    children: list[Widget] = []
    if icon:
        children.append(image(icon, size=40, color="accent"))
    children.append(column(*texts, weight=1))
    if trailing is not None:
        children.append(trailing)
    return Widget(
        "row", id=id, on_click=on_click, on_long_click=on_long_click, children=children,
        style={"pad": 16, "gap": 16, "min_h": 64, "align": "center"}, state={"selected": selected},
    )


def top_bar(title: str, *, back: Handler = None, actions: Optional[list[Widget]] = None, id: str = "toolbar") -> Widget:
    """Material 3's small top app bar: the headline 16 dp from the edge (56 dp after a
    navigation icon), 48 dp action icons whose glyphs sit 16 dp from the other edge,
    and a trailing text / pill button kept 16 dp off the edge."""
    kids: list[Widget] = []
    if back is not None:
        kids.append(icon_button("back", "Navigate up", back, id="navigate_up"))
    kids.append(text(title, id="title", size=22, weight=1, max_lines=1))
    kids.extend(actions or [])
    style: dict[str, Any] = {"pad": tokens.TOOLBAR_PAD, "gap": tokens.TOOLBAR_GAP, "min_h": tokens.TOOLBAR_H,
                             "align": "center"}
    if back is None:
        style["pad_start"] = tokens.TITLE_INSET
    if actions and actions[-1].kind == "button":
        style["pad_end"] = tokens.EDGE
    return Widget("top_bar", id=id, children=kids, style=style)


def title_inset() -> dict[str, Any]:
    """The style that puts a top bar's headline 16 dp from the edge when no navigation
    icon leads it (merge it into the bar's style)."""
    return {"pad_start": tokens.TITLE_INSET}


def key(label: str = "", on_click: Handler = None, *, id: str = "", desc: str = "", icon: str = "", hint: str = "",
        subtitle: str = "", weight: float = 1.0, h: float = 48, role: str = "char", size: float = 22) -> Widget:
    """A soft-keyboard key: a rounded cap with a centred label (or icon), optionally a
    corner hint (the long-press character) or a subtitle (a dial pad's letters).
    ``role`` picks its colours: char, special (shift, delete, ?123) or action (enter).
    Exported like a Gboard key: a clickable FrameLayout whose description names it,
    holding the TextView / ImageView it draws."""
    color = {"char": "key_text", "special": "key_text", "action": "on_key_action"}.get(role, "key_text")
    kids: list[Widget] = []
    if icon:
        kids.append(image(icon, size=24, color=color, slot="label"))
    elif label:
        kids.append(text(label, size=size, color=color, slot="label"))
    if subtitle:
        kids.append(text(subtitle, size=10, color="key_hint", slot="subtitle"))
    if hint:
        kids.append(text(hint, size=10, color="key_hint", slot="hint"))
    return Widget("key", id=id, desc=desc or label, on_click=on_click, children=kids,
                  style={"weight": weight, "h": h, "role": role})


def card(*children: Optional[Widget], id: str = "", on_click: Handler = None, pad: float = 16, gap: float = 8, **style: Any) -> Widget:
    return Widget("card", id=id, on_click=on_click, children=[c for c in children if c is not None], style={"pad": pad, "gap": gap, **style})


def spacer(h: float = 8) -> Widget:
    return Widget("spacer", style={"h": h})


def divider() -> Widget:
    return Widget("divider")


def progress(*, id: str = "progress", desc: str = "Loading") -> Widget:
    return Widget("progress", id=id, desc=desc)


def skeleton(h: float = 20, *, width_frac: float = 1.0) -> Widget:
    return Widget("skeleton", style={"h": h, "frac": width_frac})


def grid(cells: list[Widget], columns: int, *, id: str = "grid", cell_h: float = 72, gap: float = 4) -> Widget:
    return Widget("grid", id=id, children=cells, style={"columns": columns, "cell_h": cell_h, "gap": gap})


@dataclass(eq=False)
class Screen:
    """A whole app window: top bar, body, optional bottom bar, FAB and dialog."""

    body: Widget
    top: Optional[Widget] = None
    bottom: Optional[Widget] = None
    fab: Optional[Widget] = None
    dialog: Optional[Widget] = None
    activity: str = ".MainActivity"
    bg: str = "bg"


def dialog(
    title: str,
    message: str = "",
    buttons: Optional[list[Widget]] = None,
    *,
    body: Optional[list[Widget]] = None,
    style: str = "center",
    cls: str = "",
    scrim: bool = True,
) -> Widget:
    """An AlertDialog-shaped card: title, message, optional body, buttons in a row.

    Uses the framework's real ids (``android:id/alertTitle``, ``message``,
    ``button1``…) because that is what real dialogs report.
    """
    kids: list[Widget] = []
    if title:
        kids.append(text(title, id="android:id/alertTitle", size=22))
    if message:
        kids.append(text(message, id="android:id/message", size=15, color="muted"))
    kids.extend(body or [])
    if buttons:
        kids.append(row(*buttons, id="android:id/buttonPanel", gap=8, justify="end"))
    return Widget(
        "card", id="android:id/parentPanel", children=kids, cls=cls or "android.widget.FrameLayout",
        style={"pad": 24, "gap": 16, "surface": "dialog", "placement": style, "scrim": scrim},
    )


def popup_menu(items: list[tuple[str, Handler]], *, max_w: float = 280) -> Widget:
    """An overflow PopupMenu (pass it as ``Screen.dialog``): a ListView of items whose
    labels use ``android:id/title``, anchored top-right, without a scrim. Tapping
    outside closes it like any dialog."""
    rows = [
        Widget("row", on_click=handler, children=[text(label, id="android:id/title", size=16)],
               style={"pad": 14, "min_h": 48, "align": "center"})
        for label, handler in items
    ]
    return Widget(
        "card", children=rows, cls="android.widget.ListView",
        style={"pad": 4, "gap": 0, "surface": "dialog", "placement": "menu", "scrim": False, "radius": 6, "max_w": max_w},
    )
