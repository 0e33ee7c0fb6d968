"""Chrome (com.android.chrome): tabs, an omnibox, the new tab page and web pages
rendered from HTML files in shared storage (see :mod:`benchmark.apps.web`).

Page behaviour is a registered Python page script whose state lives in the tab
(``ChromeData.tabs[i].state``), so verifiers read it from app state.
"""

from __future__ import annotations

import html
import posixpath
from typing import Any, Optional
from urllib.parse import quote_plus, unquote, urlparse

from pydantic import BaseModel, Field

from benchmark import data
from benchmark.apps.base import App, UI
from benchmark.apps.web import Document, RenderContext, parse, parse_call, render_page, script_for
from benchmark.ui.widgets import (
    Screen,
    Widget,
    card,
    column,
    field_,
    icon_button,
    list_item,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

NTP_URL = "chrome://newtab/"
PAGE_SUFFIXES = (".html", ".htm")


class Tab(BaseModel):
    id: int
    url: str = NTP_URL
    title: str = "New tab"
    source: str = ""  # the page's HTML as loaded (a deleted file stays on screen, as in Chrome)
    state: dict[str, Any] = Field(default_factory=dict)  # the page script's state
    back_stack: list[str] = Field(default_factory=list)


class ChromeData(BaseModel):
    tabs: list[Tab] = Field(default_factory=list)
    current: int = 0  # id of the selected tab (0: none)
    next_id: int = 1
    history: list[str] = Field(default_factory=list)

    def tab(self, tab_id: Optional[int] = None) -> Optional[Tab]:
        want = self.current if tab_id is None else tab_id
        return next((t for t in self.tabs if t.id == want), None)


def storage_path(url: str) -> Optional[str]:
    """The /sdcard path a file URL (or bare path) points at; None for web URLs."""
    u = url.strip()
    if u.startswith("file://"):
        return posixpath.normpath(unquote(u[len("file://"):]))
    if u.startswith("/"):
        return posixpath.normpath(u)
    return None


def display_url(url: str) -> str:
    path = storage_path(url)
    return f"file://{path}" if path is not None else url


def normalise_input(typed: str) -> str:
    """What the omnibox makes of typed text: a URL, a file, or a Google search."""
    t = typed.strip()
    if not t or storage_path(t) is not None or "://" in t:
        return t
    if "." in t and " " not in t:
        return f"https://{t}"
    return f"https://www.google.com/search?q={quote_plus(t)}"


class ChromeApp(App):
    package = "com.android.chrome"
    label = "Chrome"
    aliases = ("Browser", "Google Chrome")
    icon = "globe"
    accent = (26, 115, 232)
    order = 30
    data_model = ChromeData
    data: ChromeData

    # -- loading ---------------------------------------------------------------------------
    def open_url(self, url: str) -> None:
        """Open ``url`` in a new tab, as Chrome does for a VIEW intent from another app."""
        if not self.stack:
            self.launch()
        self.stack = self.stack[:1]
        tab = self._new_tab()
        self._load(tab, url)

    def _new_tab(self) -> Tab:
        tab = Tab(id=self.data.next_id)
        self.data.next_id += 1
        self.data.tabs.append(tab)
        self._select(tab)
        return tab

    def _select(self, tab: Tab) -> None:
        self.data.current = tab.id
        if self.stack:
            self.stack[0].state["omnibox"] = "" if tab.url == NTP_URL else display_url(tab.url)

    def _load(self, tab: Tab, url: str, *, remember: bool = True) -> None:
        url = url.strip() or NTP_URL
        if remember and tab.url != NTP_URL:
            tab.back_stack.append(tab.url)
        tab.url, tab.state, tab.source = display_url(url), {}, ""
        if url == NTP_URL:
            tab.title = "New tab"
        else:
            tab.source = self._fetch(url)
            doc = parse(tab.source)
            script, params = script_for(doc)
            tab.title = doc.title or tab.url
            if script is not None:
                tab.state = script.init_state(params)
            self.data.history.append(tab.url)
        if self.stack:  # a (re)loaded page starts with empty inputs, scrolled to the top
            main = self.stack[0].state
            for key in [k for k in main if k.startswith(f"web:{tab.id}:")]:
                del main[key]
            main.pop(f"web_scroll_{tab.id}", None)
        self._select(tab)

    def _fetch(self, url: str) -> str:
        """The page source for ``url``: a stored .html file, a text file, or an error page."""
        path = storage_path(url)
        if path is not None:
            f = self.device.storage.read(path)
            if f is None:
                return _error_page("ERR_FILE_NOT_FOUND", posixpath.basename(path))
            if f.name.lower().endswith(PAGE_SUFFIXES):
                return f.content
            return f"<html><head><title>{html.escape(f.name)}</title></head><body><p>{html.escape(f.content)}</p></body></html>"
        host = urlparse(url).netloc or url
        s = self.device.system
        code = "ERR_INTERNET_DISCONNECTED" if s.airplane or not s.wifi else "ERR_NAME_NOT_RESOLVED"
        return _error_page(code, host)

    def _navigate(self, ui: UI, typed: str) -> None:
        url = normalise_input(typed)
        if not url:
            return
        tab = self.data.tab() or self._new_tab()
        self._load(tab, url)
        ui.close_dialog()

    # -- page events ---------------------------------------------------------------------------
    def _call(self, tab: Tab, code: str) -> None:
        fn, args = parse_call(code)
        if fn == "reload":
            self._load(tab, tab.url, remember=False)
            return
        script, _ = script_for(parse(tab.source))
        if script is None:
            return
        prefix = f"web:{tab.id}:"
        values = {k[len(prefix):]: str(v) for k, v in self.stack[0].state.items() if k.startswith(prefix)}
        script.call(tab.state, fn, args, values)

    def _document(self, tab: Tab) -> Document:
        doc = parse(tab.source)
        script, _ = script_for(doc)
        if script is not None:
            script.render(doc, tab.state)
        return doc

    # -- screens -----------------------------------------------------------------------------------
    def _toolbar(self, ui: UI) -> Widget:
        n = len(self.data.tabs)
        # Chrome's toolbar is 56 dp (48 dp in landscape, where height is scarce) around a pill omnibox
        landscape = self.device.orientation == "landscape"
        return Widget("top_bar", id="toolbar", children=[
            icon_button("home", "Open the home page", lambda: self._go_home_page(ui), id="home_button"),
            # Chrome's omnibox shows its hint only while empty (no floating label over the URL)
            field_("omnibox", "" if ui.get("omnibox", "") else "Search or type web address", id="url_bar",
                   on_submit=lambda: self._navigate(ui, str(ui.get("omnibox", ""))), weight=1, pill=True,
                   size=15 if landscape else 16, input_type="url", ime_action="go"),
            icon_button("recents", f"{n} open tab{'s' if n != 1 else ''}, tap to switch tabs",
                        lambda: ui.push("tabs"), id="tab_switcher_button"),
            icon_button("more", "Customize and control Google Chrome", lambda: ui.open_dialog("menu"), id="menu_button"),
        ], style={"pad": 4, "gap": 4, "min_h": 56, "align": "center"})

    def _go_home_page(self, ui: UI) -> None:
        tab = self.data.tab() or self._new_tab()
        self._load(tab, NTP_URL)

    def screen_main(self, ui: UI) -> Screen:
        tab = self.data.tab()
        if tab is None or tab.url == NTP_URL:
            body = self._new_tab_page(ui)
        else:
            doc = self._document(tab)
            ctx = RenderContext(
                on_call=lambda _eid, code, t=tab: self._call(t, code),
                field_key=lambda key, t=tab: f"web:{t.id}:{key}",
                on_link=lambda href: self._navigate(ui, href),
            )
            # a web page is the site's content: the phone's language does not touch it
            body = Widget("scroll", cls="android.webkit.WebView", text=doc.title, children=[render_page(doc, ctx)],
                          style={"pad": 0, "gap": 0, "i18n": False}, state={"key": f"web_scroll_{tab.id}"})
            if self._toolbar_scrolled_away(ui, tab):
                return Screen(body=body, dialog=self._menu(ui), activity="com.google.android.apps.chrome.Main",
                              bg="web_bg")
        return Screen(top=self._toolbar(ui), body=body, dialog=self._menu(ui),
                      activity="com.google.android.apps.chrome.Main", bg="web_bg")

    def _toolbar_scrolled_away(self, ui: UI, tab: Tab) -> bool:
        """Chrome slides its toolbar away while a page scrolls down and brings it back as
        soon as it scrolls up (the page gets the room: what makes a page usable in landscape)."""
        off = float(ui.get(f"web_scroll_{tab.id}", 0.0) or 0.0)
        last = float(ui.get(f"_toolbar_offset_{tab.id}", 0.0) or 0.0)
        hidden = bool(ui.get(f"_toolbar_hidden_{tab.id}", False))
        if off <= 0 or off < last - 0.5:
            hidden = False
        elif off > last + 0.5:
            hidden = True
        ui.set(f"_toolbar_offset_{tab.id}", off)
        ui.set(f"_toolbar_hidden_{tab.id}", hidden)
        focus = self.device.focus
        editing = focus is not None and focus.store is ui.state and focus.key == "omnibox"
        return hidden and ui.dialog_info is None and not editing

    def _new_tab_page(self, ui: UI) -> Widget:
        return scroll(
            spacer(40),
            text("Google", id="logo", size=44, bold=True, color="accent", text_align="center"),
            field_("ntp_query", "Search or type web address", id="search_box_text",
                   on_submit=lambda: self._navigate(ui, str(ui.get("ntp_query", ""))), pill=True, input_type="url",
                   ime_action="go"),
            text("Discover - Turned off", id="feed_header", size=14, color="muted"),
            id="ntp_content", pad=16, gap=16,
        )

    def _menu(self, ui: UI) -> Optional[Widget]:
        info = ui.dialog_info
        if info is None or info.get("kind") != "menu":
            return None

        tab = self.data.tab()
        entries: list[tuple[str, Any]] = [("New tab", lambda: self._load(self._new_tab(), NTP_URL))]
        if tab is not None and tab.url != NTP_URL:
            entries.append(("Reload", lambda: self._load(tab, tab.url, remember=False)))
        entries.append(("History", lambda: ui.push("history")))
        return popup_menu([(label, (lambda fn=fn: (ui.close_dialog(), fn()))) for label, fn in entries])

    def screen_tabs(self, ui: UI) -> Screen:
        def pick(tab: Tab) -> None:
            self._select(tab)
            ui.pop()

        def close(tab: Tab) -> None:
            self.data.tabs = [t for t in self.data.tabs if t.id != tab.id]
            if self.data.current == tab.id:
                self.data.current = self.data.tabs[-1].id if self.data.tabs else 0
                if self.data.tabs:
                    self._select(self.data.tabs[-1])

        def new_tab() -> None:
            self._load(self._new_tab(), NTP_URL)
            ui.pop()

        cards = [
            card(row(text(t.title, id="tab_title", size=16, weight=1, max_lines=1),
                     icon_button("close", f"Close {t.title} tab", (lambda t=t: close(t)), id="action_button")),
                 text(t.url if t.url != NTP_URL else "New tab", size=13, color="muted", max_lines=1),
                 id="tab_view", on_click=(lambda t=t: pick(t)), bg="selected" if t.id == self.data.current else "surface")
            for t in self.data.tabs
        ] or [text("No open tabs", id="empty_view", size=16, color="muted", text_align="center")]
        n = len(self.data.tabs)
        return Screen(
            top=top_bar(f"{n} open tab{'s' if n != 1 else ''}", back=ui.pop,
                        actions=[icon_button("add", "New tab", new_tab, id="new_tab_view_button")]),
            body=scroll(*cards, id="tab_list_recycler_view", pad=16, gap=12),
            activity="com.google.android.apps.chrome.Main",
        )

    def screen_history(self, ui: UI) -> Screen:
        items = [list_item(url, icon="globe", id="history_item", title_id="title",
                           on_click=(lambda u=url: (self._navigate(ui, u), ui.pop())))
                 for url in reversed(self.data.history)]
        if not items:
            items = [column(spacer(32), text("No history", id="empty_view", size=16, color="muted", text_align="center"))]
        return Screen(top=top_bar("History", back=ui.pop), body=scroll(*items, id="history_page_recycler_view"),
                      activity="org.chromium.chrome.browser.history.HistoryActivity")

    # -- back --------------------------------------------------------------------------------------
    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        if ui.route.name != "main":
            return False
        tab = self.data.tab()
        if tab is not None and tab.back_stack:
            self._load(tab, tab.back_stack.pop(), remember=False)
            return True
        if tab is not None and tab.url != NTP_URL:
            # a tab opened by another app closes and hands back (here: to the home screen)
            self.data.tabs = [t for t in self.data.tabs if t.id != tab.id]
            self.data.current = self.data.tabs[-1].id if self.data.tabs else 0
            if self.data.tabs:
                self._select(self.data.tabs[-1])
        return False

    # -- for verifiers -----------------------------------------------------------------------------
    def page_states(self, script_name: Optional[str] = None) -> list[dict[str, Any]]:
        """Script states of the open tabs (optionally only tabs running ``script_name``)."""
        out = []
        for t in self.data.tabs:
            if not t.source:
                continue
            script, _ = script_for(parse(t.source))
            if script is not None and (script_name is None or script.name == script_name):
                out.append(t.state)
        return out


def _error_page(code: str, host: str) -> str:
    texts = data.table("chrome_errors")[code]
    page = data.text("pages/chrome_error.html")
    for key, value in (("%%HOST%%", host), ("%%HEADING%%", texts["heading"]),
                       ("%%DETAILS%%", texts["details"].format(host=host)), ("%%CODE%%", code)):
        page = page.replace(key, html.escape(value))
    return page
