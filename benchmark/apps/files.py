"""Files (com.google.android.documentsui): browse the shared storage, select by
long-press, delete, move / copy to a folder, rename, open .html files in Chrome.

The storage (``device.storage``) is the single source of truth, so files written
by other apps (Audio Recorder, Markor …) show up here and vice versa.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Any, Callable, Optional

from benchmark.apps.base import App, UI
from benchmark.sim.storage import ROOT, StoredFile
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    column,
    dialog,
    field_,
    icon_button,
    image,
    list_item,
    popup_menu,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

ROOT_LABEL = "Pixel 6"  # DocumentsUI names the internal storage root after the device (Settings > About phone)
PAGE_SUFFIXES = (".html", ".htm")

# the drawer's roots: label, icon, (folder path | category name)
ROOTS: tuple[tuple[str, str, str], ...] = (
    ("Recent", "clock", "recent"),
    ("Images", "star", "images"),
    ("Videos", "play", "videos"),
    ("Audio", "mic", "audio"),
    ("Documents", "file", "documents"),
    ("Downloads", "download", f"{ROOT}/Download"),
    (ROOT_LABEL, "sd", ROOT),
)
CATEGORY_SUFFIXES: dict[str, tuple[str, ...]] = {
    "images": (".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic"),
    "videos": (".mp4", ".mkv", ".webm", ".3gp", ".mov"),
    "audio": (".mp3", ".m4a", ".wav", ".ogg", ".aac", ".flac"),
    "documents": (".pdf", ".doc", ".docx", ".txt", ".md", ".html", ".htm", ".xls", ".xlsx", ".ppt", ".pptx", ".csv"),
}
RECENT_LIMIT = 30


def format_size(size: int) -> str:
    """Android's short file size: 512 B, 4.2 kB, 18 MB (SI units, as since Android O)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            if unit == "B":
                return f"{int(value)} B"
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
        value /= 1000
    return f"{value:.0f} GB"


def mime_icon(name: str) -> str:
    low = name.lower()
    for category, icon in (("images", "star"), ("videos", "play"), ("audio", "mic")):
        if low.endswith(CATEGORY_SUFFIXES[category]):
            return icon
    return "globe" if low.endswith(PAGE_SUFFIXES) else "file"


class FilesApp(App):
    package = "com.google.android.documentsui"
    label = "Files"
    icon = "folder"
    accent = (25, 103, 210)
    order = 40

    # -- storage helpers -----------------------------------------------------------------------
    @property
    def storage(self) -> Any:
        return self.device.storage

    def modified_date(self, f: StoredFile) -> dt.datetime:
        return self.device.clock.start + dt.timedelta(seconds=f.modified)

    def _relocate(self, src: str, dst: str, *, keep_source: bool = False) -> None:
        """Move (or copy) a file or a whole folder from path ``src`` to path ``dst``."""
        st = self.storage
        if src in st.files:
            f = st.files[src] if keep_source else st.files.pop(src)
            st.write(dst, f.content, size=f.size, modified=f.modified if not keep_source else self.device.clock.elapsed)
            return
        for folder in sorted(x for x in st.folders if x == src or x.startswith(src + "/")):
            st.mkdir(dst + folder[len(src):])
        for path in sorted(p for p in st.files if p.startswith(src + "/")):
            f = st.files[path]
            st.write(dst + path[len(src):], f.content, size=f.size, modified=f.modified)
        if not keep_source:
            st.delete(src)

    def _listing(self, where: str) -> tuple[list[str], list[StoredFile]]:
        """(sub-folder paths, files) for a folder path or a category root."""
        st = self.storage
        if where.startswith("/"):
            subs, files = st.listdir(where)
            return [posixpath.join(where, s) for s in subs], files
        if where == "recent":
            return [], sorted(st.files.values(), key=lambda f: (-f.modified, f.name.lower()))[:RECENT_LIMIT]
        suffixes = CATEGORY_SUFFIXES.get(where, ())
        return [], sorted((f for f in st.files.values() if f.name.lower().endswith(suffixes)), key=lambda f: f.name.lower())

    @staticmethod
    def _label(where: str) -> str:
        for label, _, target in ROOTS:
            if target == where and not where.startswith("/"):
                return label
        return ROOT_LABEL if where == ROOT else posixpath.basename(where)

    # -- shared widgets ---------------------------------------------------------------------------
    def _row(self, ui: UI, title: str, icon: str, *, details: Optional[list[Widget]] = None,
             on_click: Optional[Callable[[], Any]] = None, on_long_click: Optional[Callable[[], Any]] = None,
             selected: bool = False, enabled: bool = True) -> Widget:
        lines = [text(title, id="android:id/title", size=16, max_lines=2, color="text" if enabled else "muted")]
        if details:
            lines.append(row(*details, gap=12))
        return Widget(
            "row", id="item_root", on_click=on_click, on_long_click=on_long_click,
            children=[image("check" if selected else icon, size=40, id="icon_mime", color="accent" if enabled else "muted"),
                      column(*lines, gap=2, weight=1)],
            style={"pad": 16, "gap": 16, "min_h": 64, "align": "center"}, state={"selected": selected},
        )

    def _file_details(self, ui: UI, f: StoredFile) -> list[Widget]:
        when = self.modified_date(f)
        shown = ui.fmt_time(when) if when.date() == ui.now().date() else ui.fmt_date(when.date())
        return [text(shown, id="date", size=14, color="muted"), text(format_size(f.size), id="size", size=14, color="muted")]

    def _breadcrumb(self, path: str, go: Callable[[str], Any]) -> Widget:
        parts, cur = [ROOT], ROOT
        for segment in [s for s in path[len(ROOT):].split("/") if s]:
            cur = f"{cur}/{segment}"
            parts.append(cur)
        kids: list[Widget] = []
        for i, p in enumerate(parts):
            if i:
                kids.append(text("›", size=16, color="muted", a11y=False))
            crumb = text(self._label(p), id="breadcrumb_text", size=15, color="accent" if p != path else "text", max_lines=1)
            crumb.on_click = (lambda p=p: go(p))
            kids.append(crumb)
        return row(*kids, id="horizontal_breadcrumb", pad=12, gap=8, emit=True)

    # -- browsing -----------------------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        where = ui.params.get("path", ROOT)
        selected: list[str] = ui.state.setdefault("selected", [])
        selected[:] = [p for p in selected if self.storage.exists(p)]
        folders, files = self._listing(where)

        def toggle(path: str) -> None:
            selected.remove(path) if path in selected else selected.append(path)

        def open_folder(path: str) -> None:
            ui.push("main", path=path)

        def open_file(f: StoredFile) -> None:
            if f.name.lower().endswith(PAGE_SUFFIXES):
                self.device.open_url(f.path)
            else:
                ui.toast("Can't open file")

        items: list[Widget] = []
        for path in folders:
            sel = path in selected
            items.append(self._row(ui, posixpath.basename(path), "folder", selected=sel,
                                   on_click=(lambda p=path: toggle(p)) if selected else (lambda p=path: open_folder(p)),
                                   on_long_click=lambda p=path: toggle(p)))
        for f in files:
            sel = f.path in selected
            items.append(self._row(ui, f.name, mime_icon(f.name), details=self._file_details(ui, f), selected=sel,
                                   on_click=(lambda p=f.path: toggle(p)) if selected else (lambda f=f: open_file(f)),
                                   on_long_click=lambda p=f.path: toggle(p)))
        if not items:
            items.append(column(spacer(48), image("folder", size=72, color="muted"),
                                text("No items", id="message", size=18, color="muted", text_align="center"), align="center"))
        head: list[Widget] = []
        if where.startswith("/"):
            head.append(self._breadcrumb(where, lambda p: self._go_to(ui, p)))
        return Screen(
            top=self._selection_bar(ui, selected, where) if selected else self._browse_bar(ui, where),
            body=scroll(*head, *items, id="dir_list"),
            dialog=self._dialog(ui, selected, where),
            activity="com.android.documentsui.files.FilesActivity",
        )

    def _go_to(self, ui: UI, path: str) -> None:
        """Breadcrumb: back to an ancestor already on the stack, else open it fresh."""
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i].name == "main" and self.stack[i].params.get("path", ROOT) == path:
                del self.stack[i + 1:]
                return
        ui.push("main", path=path)

    def _browse_bar(self, ui: UI, where: str) -> Widget:
        return Widget("top_bar", id="toolbar", children=[
            icon_button("menu", "Show roots", lambda: ui.push("roots"), id="roots_button"),
            text(self._label(where), id="title", size=22, weight=1, max_lines=1),
            icon_button("search", "Search", lambda: None, id="option_menu_search"),
            icon_button("more", "More options", lambda: ui.open_dialog("browse_menu")),
        ], style={"pad": 4, "gap": 4, "min_h": 64, "align": "center"})

    def _selection_bar(self, ui: UI, selected: list[str], where: str) -> Widget:
        return Widget("top_bar", id="action_mode_bar", children=[
            icon_button("close", "Done", selected.clear, id="action_mode_close_button"),
            text(f"{len(selected)} selected", id="action_bar_title", size=20, weight=1, max_lines=1),
            icon_button("share", "Share", lambda: ui.toast("Sharing isn't available"), id="action_menu_share"),
            icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="action_menu_delete"),
            icon_button("more", "More options", lambda: ui.open_dialog("selection_menu")),
        ], style={"pad": 4, "gap": 4, "min_h": 64, "align": "center", "bg": "selected"})

    # -- dialogs and menus ------------------------------------------------------------------------------
    def _menu(self, ui: UI, entries: list[tuple[str, Callable[[], Any]]]) -> Widget:
        """An overflow PopupMenu; picking an item closes it first."""
        return popup_menu([(label, (lambda fn=fn: (ui.close_dialog(), fn()))) for label, fn in entries])

    def _dialog(self, ui: UI, selected: list[str], where: str) -> Optional[Widget]:
        info = ui.dialog_info
        if info is None:
            return None
        kind = info["kind"]
        if kind == "browse_menu":
            entries: list[tuple[str, Callable[[], Any]]] = [("Select all", lambda: self._select_all(ui, selected, where))]
            if where.startswith("/"):
                entries.insert(0, ("New folder", lambda: ui.open_dialog("new_folder")))
            return self._menu(ui, entries)
        if kind == "selection_menu":
            entries = [
                ("Select all", lambda: self._select_all(ui, selected, where)),
                ("Copy to…", lambda: self._pick(ui, "copy", selected)),
                ("Move to…", lambda: self._pick(ui, "move", selected)),
            ]
            if len(selected) == 1:
                entries.append(("Rename", lambda: self._start_rename(ui, selected[0])))
            return self._menu(ui, entries)
        if kind == "delete":
            what = f'"{posixpath.basename(selected[0])}"' if len(selected) == 1 else f"{len(selected)} items"
            return ui.confirm("", f"Delete {what}?", "OK", lambda: self._delete(ui, selected))
        if kind in ("rename", "new_folder"):
            title = "Rename" if kind == "rename" else "New folder"
            action = (lambda: self._rename(ui, selected)) if kind == "rename" else (lambda: self._new_folder(ui, where))
            return dialog(title, body=[field_("dialog_name", "Name", id="android:id/text1")], buttons=[
                button("Cancel", ui.close_dialog, id="android:id/button2", variant="text"),
                button("OK", action, id="android:id/button1", variant="text"),
            ])
        return None

    def _select_all(self, ui: UI, selected: list[str], where: str) -> None:
        folders, files = self._listing(where)
        selected[:] = folders + [f.path for f in files]

    def _delete(self, ui: UI, selected: list[str]) -> None:
        n = len(selected)
        for path in list(selected):
            self.storage.delete(path)
        selected.clear()
        ui.toast(f"Deleted {n} item{'s' if n != 1 else ''}")

    def _start_rename(self, ui: UI, path: str) -> None:
        ui.set("dialog_name", posixpath.basename(path))
        ui.open_dialog("rename")

    def _rename(self, ui: UI, selected: list[str]) -> None:
        name = str(ui.get("dialog_name", "")).strip()
        src = selected[0]
        dst = posixpath.join(posixpath.dirname(src), name)
        if not name or "/" in name:
            ui.toast("Invalid file name")
            return
        if dst != src and self.storage.exists(dst):
            ui.toast("A file with that name already exists")
            return
        ui.close_dialog()
        if dst != src:
            self._relocate(src, dst)
        selected.clear()

    def _new_folder(self, ui: UI, where: str) -> None:
        name = str(ui.get("dialog_name", "")).strip()
        if not name or "/" in name or self.storage.exists(posixpath.join(where, name)):
            ui.toast("Couldn't create folder")
            return
        ui.close_dialog()
        ui.set("dialog_name", "")
        self.storage.mkdir(posixpath.join(where, name))

    # -- the destination picker (Move to… / Copy to…) ------------------------------------------------------
    def _pick(self, ui: UI, mode: str, selected: list[str]) -> None:
        ui.push("pick", path=ROOT, mode=mode, sources=list(selected))

    def screen_pick(self, ui: UI) -> Screen:
        path: str = ui.params["path"]
        mode: str = ui.params["mode"]
        sources: list[str] = ui.params["sources"]
        folders, files = self._listing(path)

        def finish() -> None:
            for src in sources:
                if self.storage.exists(src):
                    self._relocate(src, posixpath.join(path, posixpath.basename(src)), keep_source=mode == "copy")
            ui.pop_to("main")
            self.route.state["selected"] = []
            n = len(sources)
            ui.toast(f"{'Copied' if mode == 'copy' else 'Moved'} {n} item{'s' if n != 1 else ''} to {self._label(path)}")

        def cancel() -> None:
            ui.pop_to("main")

        items = [self._row(ui, posixpath.basename(p), "folder",
                           on_click=(lambda p=p: ui.push("pick", path=p, mode=mode, sources=sources)))
                 for p in folders if p not in sources]
        items += [self._row(ui, f.name, mime_icon(f.name), details=self._file_details(ui, f), enabled=False) for f in files]
        blocked = all(posixpath.dirname(s) == path for s in sources) or any(path == s or path.startswith(s + "/") for s in sources)
        label = "Copy here" if mode == "copy" else "Move here"

        def go(p: str) -> None:
            while len(self.stack) > 1 and self.stack[-1].name == "pick" and self.stack[-1].params["path"] != p:
                self.stack.pop()
            if self.stack[-1].name != "pick":
                ui.push("pick", path=p, mode=mode, sources=sources)

        return Screen(
            top=top_bar(f"{'Copy' if mode == 'copy' else 'Move'} to {self._label(path)}", back=ui.pop),
            body=scroll(self._breadcrumb(path, go), *items, id="dir_list"),
            bottom=row(button("Cancel", cancel, id="button_cancel", variant="text"),
                       button(label, finish, id="button_move", enabled=not blocked),
                       id="container_save", pad=8, gap=8, justify="end", bg="surface"),
            activity="com.android.documentsui.picker.PickActivity",
        )

    # -- roots (the navigation drawer) ----------------------------------------------------------------------
    def screen_roots(self, ui: UI) -> Screen:
        def open_root(target: str) -> None:
            del self.stack[1:]  # the start route browses the storage root
            self.stack[0].state["selected"] = []
            if target != ROOT:
                ui.push("main", path=target)

        items = [list_item(label, icon=icon, id="root_item", title_id="android:id/title",
                           on_click=(lambda t=target: open_root(t))) for label, icon, target in ROOTS]
        return Screen(top=top_bar("Files", back=ui.pop), body=scroll(*items, id="roots_list"),
                      activity="com.android.documentsui.files.FilesActivity")

    # -- back ---------------------------------------------------------------------------------------------------
    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        selected = ui.state.get("selected")
        if ui.route.name == "main" and selected:
            selected.clear()
            return True
        return False
