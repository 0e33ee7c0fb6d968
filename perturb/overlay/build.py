"""Page → widgets (benchmark.ui toolkit) for each surface style, split into the
parts the card layout needs: a fixed head, a scrollable body, a fixed foot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from benchmark.ui.widgets import Widget, button, checkbox, column, field_, icon_button, image, radio, row, text, title_inset
from perturb.overlay.spec import ButtonSpec, PageSpec, Style

# default resource ids per style: what the real framework / apps report
DIALOG_IDS = {"title": "android:id/alertTitle", "message": "android:id/message", "scroll": "android:id/scrollView",
              "panel": "android:id/parentPanel", "buttons": "android:id/buttonPanel", "icon": "android:id/icon"}
DIALOG_BUTTON_IDS = {"engage": "android:id/button1", "dismiss": "android:id/button2", "neutral": "android:id/button3"}
PLAIN_IDS = {"title": "title", "message": "message", "scroll": "scroll_view", "panel": "content", "buttons": "button_bar",
             "icon": "icon"}
PLAIN_BUTTON_IDS = {"engage": "positive_button", "dismiss": "negative_button", "neutral": "neutral_button"}
# the framework's "isn't responding" dialog (an AlertDialog whose custom panel holds
# app_anr_dialog.xml's buttons), as real dumps show it
ANR_IDS = {"top": "android:id/topPanel", "title_template": "android:id/title_template",
           "custom_panel": "android:id/customPanel", "custom": "android:id/custom",
           "content_panel": "android:id/contentPanel"}
BANNER_IDS = {"title": "title", "message": "text", "scroll": "notification_main_column", "panel": "expandableNotificationRow",
              "buttons": "actions", "icon": "icon"}


@dataclass
class Controls:
    """Callbacks the overlay gives the builder (they change the overlay's state)."""

    press: Callable[[ButtonSpec], None]
    toggle: Callable[[str], None]
    choose: Callable[[int], None]
    focus: Callable[[str], None]
    rate: Callable[[int], None]
    tap_card: Optional[Callable[[], None]] = None


@dataclass
class PageState:
    checked: set[str] = field(default_factory=set)
    choice: Optional[int] = None
    values: dict[str, str] = field(default_factory=dict)
    focus: Optional[str] = None
    stars: int = 0


@dataclass
class CardParts:
    placement: str  # center | bottom | full | top (the toolkit's dialog placements)
    card_id: str
    card_cls: str
    head: list[Widget]
    body: list[Widget]
    foot: list[Widget]
    scroll_id: str
    pad: float = 24
    gap: float = 16
    scrim: bool = True
    on_click: Optional[Callable[[], Any]] = None
    desc: str = ""
    max_w: float = 560
    radius: float = 28


def _ids(style: Style) -> dict[str, str]:
    if style in ("dialog", "anr"):
        return DIALOG_IDS
    if style == "banner":
        return BANNER_IDS
    return PLAIN_IDS


def _enabled(b: ButtonSpec, page: PageSpec, st: PageState) -> bool:
    if b.requires == "all_checked":
        return all((c.id or c.label) in st.checked for c in page.checks)
    if b.requires == "choice":
        return st.choice is not None
    if b.requires == "fields":
        return all(st.values.get(f.key, "").strip() for f in page.fields)
    if b.requires == "stars":
        return st.stars > 0
    return True


def button_id(b: ButtonSpec, style: Style) -> str:
    if b.id:
        return b.id
    if b.icon and not b.label:
        return "close_button"
    return (DIALOG_BUTTON_IDS if style in ("dialog", "anr") else PLAIN_BUTTON_IDS)[b.role]


def make_button(b: ButtonSpec, page: PageSpec, st: PageState, style: Style, ctl: Controls, *, fill: bool = False,
                variant: Optional[str] = None) -> Widget:
    handler = (lambda spec=b: ctl.press(spec))
    bid = button_id(b, style)
    if b.icon and not b.label:
        return icon_button(b.icon, b.desc or b.label, handler, id=bid)
    w = button(b.label, handler, id=bid, variant=variant or b.variant, desc=b.desc, enabled=_enabled(b, page, st))
    if fill:
        w.style["fill"] = True
    return w


def _progress_bar(fraction: float, pid: str) -> Widget:
    frac = min(0.999, max(0.001, fraction))
    return row(
        column(weight=frac, bg="accent", min_h=6, radius=3, a11y=False),
        column(weight=1 - frac, bg="tile_off", min_h=6, radius=3, a11y=False),
        id=pid, gap=0, cls="android.widget.ProgressBar", emit=True, desc=f"{round(fraction * 100)}%",
    )


def body_widgets(page: PageSpec, st: PageState, style: Style, ctl: Controls) -> list[Widget]:
    ids = _ids(style)
    out: list[Widget] = []
    if page.message and style != "banner":
        out.append(text(page.message, id=page.message_id or ids["message"], size=15, color="muted"))
    for b in page.bullets:
        # a BulletSpan is drawn, not part of the text; it sits on the first line (same size: same line box)
        out.append(row(text("•", size=15, color="muted", a11y=False), text(b, id="summary", size=15, weight=1),
                       gap=12, align="start"))
    for c in page.checks:
        key = c.id or c.label
        out.append(checkbox(c.label, key in st.checked, (lambda _v, k=key: ctl.toggle(k)), id=c.id or "checkbox"))
    for i, label in enumerate(page.choices):
        out.append(radio(label, st.choice == i, (lambda k=i: ctl.choose(k)), id=page.choice_id or "radio_button"))
    for f in page.fields:
        w = field_(f.key, f.hint, id=f.id or f.key, password=f.password)
        w.text = st.values.get(f.key, "")
        if st.focus == f.key:
            w.state["focused"] = True
        w.on_click = (lambda k=f.key: ctl.focus(k))
        out.append(w)
    if page.stars:
        stars = [icon_button("star", f"{k} star{'s' if k > 1 else ''}", (lambda k=k: ctl.rate(k)), id="rating_star",
                             color="accent" if k <= st.stars else "divider") for k in range(1, 6)]
        out.append(row(*stars, id="rating_bar", gap=4, justify="center", cls="android.widget.RatingBar", emit=True))
    if page.progress is not None:
        out.append(_progress_bar(page.progress, "progress_bar"))
        out.append(text(f"{round(page.progress * 100)}%", id="progress_percent", size=14, color="muted"))
    if page.spinner:
        out.append(column(Widget("progress", id="progress", desc=""), align="center"))
    return out


def _buttons(page: PageSpec, st: PageState, style: Style, ctl: Controls, bar_id: str,
             position: Optional[tuple[int, int]] = None) -> list[Widget]:
    if position is not None and page.indicator:
        return [_indicator_bar(page, st, style, ctl, bar_id, position)]
    if not page.buttons:
        return []
    if page.button_layout == "stack":
        return [column(*[make_button(b, page, st, style, ctl, fill=True) for b in page.buttons], id=bar_id, gap=4)]
    if page.button_layout == "split":  # equal shares of the bar, side by side (K-9's Import settings | Next)
        return [row(*[column(make_button(b, page, st, style, ctl, fill=True), weight=1) for b in page.buttons],
                    id=bar_id, gap=8)]
    return [row(*[make_button(b, page, st, style, ctl) for b in page.buttons], id=bar_id, gap=8, justify="end")]


def _indicator_bar(page: PageSpec, st: PageState, style: Style, ctl: Controls, bar_id: str,
                   position: tuple[int, int]) -> Widget:
    """An onboarding carousel's bottom bar: the way out (Skip) on the left, the page dots
    in the middle, the way on (Next) on the right."""
    index, total = position
    if page.indicator_style == "bullets":  # one TextView "•" per dot, in a layoutDots row
        dots = row(*[text("•", size=28, color="accent" if k == index else "divider") for k in range(total)],
                   id="layoutDots", gap=0, justify="center", cls="android.widget.LinearLayout", emit=True)
    else:
        dots = row(*[image("record", size=8, color="accent" if k == index else "divider", a11y=False) for k in range(total)],
                   id="page_indicator", gap=8, justify="center", cls="android.widget.LinearLayout", emit=True,
                   desc=f"Page {index + 1} of {total}")
    left = [make_button(b, page, st, style, ctl) for b in page.buttons if b.role == "dismiss"]
    right = [make_button(b, page, st, style, ctl) for b in page.buttons if b.role != "dismiss"]
    return row(*left, column(dots, weight=1, align="center"), *right, id=bar_id, gap=8)


def _anr_card(page: PageSpec, st: PageState, ctl: Controls, ids: dict[str, str]) -> CardParts:
    """The framework's ANR dialog laid out like AOSP's: parentPanel > topPanel >
    title_template > alertTitle, then customPanel > custom > the buttons (a stacked
    app_anr_dialog) or contentPanel's message and buttonPanel (the pre-Android 7 dialog).
    Same geometry as a plain dialog card: the extra containers only nest."""
    head: list[Widget] = []
    if page.title:
        title = text(page.title, id=page.title_id or ids["title"], size=20, bold=False, text_align="left")
        head = [column(column(title, id=ANR_IDS["title_template"], cls="android.widget.LinearLayout"),
                       id=ANR_IDS["top"], cls="android.widget.LinearLayout")]
    body = body_widgets(page, st, "anr", ctl)
    if page.button_layout == "stack":
        buttons = [make_button(b, page, st, "anr", ctl, fill=True) for b in page.buttons]
        listing = column(*buttons, gap=4, cls="android.widget.LinearLayout", emit=True)
        foot = [column(column(listing, id=ANR_IDS["custom"], cls="android.widget.FrameLayout"),
                       id=ANR_IDS["custom_panel"], cls="android.widget.FrameLayout")] if buttons else []
    else:
        foot = _buttons(page, st, "anr", ctl, ids["buttons"])
    return CardParts("center", ids["panel"], "android.widget.LinearLayout", head, body, foot, ids["scroll"], pad=24,
                     gap=12 if page.button_layout == "stack" else 16)


def _close_corner(page: PageSpec, st: PageState, style: Style, ctl: Controls) -> list[Widget]:
    """A dialog's icon-only close button in its top-right corner (feature announcements)."""
    if page.close_button is None:
        return []
    return [row(make_button(page.close_button, page, st, style, ctl), justify="end", gap=0)]


def _title(page: PageSpec, ids: dict[str, str], size: float, center: bool = False, bold: bool = False) -> list[Widget]:
    out: list[Widget] = []
    if page.eyebrow:
        out.append(text(page.eyebrow, id="eyebrow", size=13, color="accent"))
    if page.title:
        out.append(text(page.title, id=page.title_id or ids["title"], size=size, bold=bold,
                        text_align="center" if center else "left"))
    return out


def _icon(page: PageSpec, ids: dict[str, str], size: float = 32, hero: bool = False) -> list[Widget]:
    if not page.icon:
        return []
    if hero:  # full-screen pages: the icon on a tinted disc, like a hero illustration
        return [column(image(page.icon, id=page.icon_id or ids["icon"], size=size, color="accent", circle=True, bg="tonal"),
                       align="center")]
    return [column(image(page.icon, id=page.icon_id or ids["icon"], size=size, color="accent"), align="center")]


def card_parts(page: PageSpec, st: PageState, style: Style, ctl: Controls,
               ids_override: Optional[dict[str, str]] = None, compact: bool = False,
               position: Optional[tuple[int, int]] = None) -> CardParts:
    """The widgets of one page in one surface style (``ids_override``: container ids;
    ``compact``: a short screen, e.g. landscape — smaller illustrations; ``position``:
    (index, count) of the page among its flow's pages, for page dots)."""
    ids = {**_ids(style), **(ids_override or {})}
    if style == "anr":
        return _anr_card(page, st, ctl, ids)
    if style == "dialog":
        stacked = page.button_layout == "stack"
        head = _close_corner(page, st, style, ctl) + _icon(page, ids) + _title(page, ids, 22, center=bool(page.icon))
        return CardParts("center", ids["panel"], "android.widget.FrameLayout", head, body_widgets(page, st, style, ctl),
                         _buttons(page, st, style, ctl, ids["buttons"]), ids["scroll"], pad=24, gap=12 if stacked else 16)
    if style == "bottom_sheet":
        head = [column(height_spacer(8))] + _icon(page, ids, 36) + _title(page, ids, 22, center=bool(page.icon))
        return CardParts("bottom", ids.get("sheet", "design_bottom_sheet"), "android.widget.FrameLayout", head,
                         body_widgets(page, st, style, ctl), _buttons(page, st, style, ctl, ids["buttons"]),
                         ids["scroll"], pad=24, gap=12)
    if style == "banner":
        meta = row(image(page.icon or "message", size=18, color="accent", a11y=False),
                   text(page.header, id="app_name_text", size=12, color="muted"),
                   text("now", id="time", size=12, color="muted"), gap=8)
        head = [meta, *([text(page.title, id=page.title_id or ids["title"], size=15, bold=True)] if page.title else [])]
        body = [text(page.message, id=page.message_id or ids["message"], size=14, color="muted", max_lines=2)] if page.message else []
        foot = ([row(*[make_button(b, page, st, style, ctl, variant="text") for b in page.buttons], id=ids["buttons"], gap=4)]
                if page.buttons else [])
        return CardParts("top", ids["panel"], "android.widget.FrameLayout", head, body, foot, ids["scroll"], pad=14, gap=4,
                         scrim=False, on_click=ctl.tap_card, desc=f"{page.header} notification: {page.title}", radius=20)
    # full-screen pages: a top bar, a scrolling body, a bottom button bar
    bar_kids: list[Widget] = [text(page.header, id=page.header_id or "toolbar_title", size=20, weight=1)]
    if page.close_button is not None:
        # with a title the close / up button leads the bar; an ad's bare close button sits top-right
        close = make_button(page.close_button, page, st, style, ctl)
        bar_kids.insert(0, close) if page.header else bar_kids.append(close)
    bar_style = {"pad": 4, "gap": 4, "min_h": 64, "align": "center"}
    if not (page.close_button is not None and page.header):
        bar_style.update(title_inset())  # the headline 16 dp from the edge
    head = [Widget("top_bar", id="toolbar", children=bar_kids, style=bar_style)]
    body = _icon(page, ids, 56 if compact else 112, hero=True) + _title(page, ids, 26, center=bool(page.icon)) + body_widgets(page, st, style, ctl)
    foot = _buttons(page, st, style, ctl, ids["buttons"], position)
    return CardParts("full", ids["panel"], "android.widget.FrameLayout", head, body, foot, ids["scroll"], pad=0, gap=0,
                     scrim=False)


def height_spacer(h: float) -> Widget:
    return Widget("spacer", style={"h": h})
