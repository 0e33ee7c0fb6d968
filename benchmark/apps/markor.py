"""Markor (modelled on net.gsantner.markor, the Markdown notes app AndroidWorld uses).

Notes are plain files in the phone's shared storage (``device.storage``) under the
notebook folder /sdcard/Documents/Markor, so other apps (Files) see them too. The
file browser lists folders then files; the "+" button opens the new-document
dialog (name, extension; OK creates a file and opens the editor, Folder creates a
folder). A long press starts selection (Select all, Delete with a "Confirm Delete"
dialog). The editor is one multi-line field; Save or leaving the editor writes
the file, as Markor auto-saves.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Optional

from benchmark.apps.base import App, UI
from benchmark.sim.storage import Storage, StoredFile
from benchmark.ui.widgets import (
    Screen,
    Widget,
    button,
    dialog,
    field_,
    icon_button,
    list_item,
    row,
    scroll,
    spacer,
    text,
    top_bar,
)

NOTEBOOK = "/sdcard/Documents/Markor"
TEXT_EXTENSIONS = (".md", ".txt", ".markdown", ".todo.txt", ".json", ".csv", ".html")
EDITOR_ID = "document__fragment__edit__highlighting_editor"


def note_filename(name: str, ext: str) -> str:
    """What the new-document dialog creates: the typed name plus the extension field,
    unless the name already carries a text extension (then it is used as typed)."""
    name = name.strip()
    if any(name.lower().endswith(e) for e in TEXT_EXTENSIONS):
        return name
    ext = ext.strip() or ".md"
    return name + (ext if ext.startswith(".") else "." + ext)


class MarkorApp(App):
    package = "net.gsantner.markor"
    label = "Markor"
    aliases = ("markor notes",)
    icon = "note"
    accent = (52, 101, 164)
    order = 35

    @property
    def storage(self) -> Storage:
        return self.device.storage

    def snapshot(self) -> dict[str, object]:
        """Markor's user data is its notebook: folders and files (content, modified)."""
        prefix = NOTEBOOK + "/"
        return {
            "folders": sorted(f for f in self.storage.folders if f.startswith(prefix)),
            "files": {p: (f.content, f.modified) for p, f in sorted(self.storage.files.items()) if p.startswith(prefix)},
        }

    def launch(self) -> None:
        self.storage.mkdir(NOTEBOOK)  # Markor creates its notebook folder on first start
        super().launch()

    # -- file browser ---------------------------------------------------------------------
    def _folder(self, ui: UI) -> str:
        return ui.params.get("folder", NOTEBOOK)

    def _modified_label(self, ui: UI, f: StoredFile) -> str:
        t = self.device.clock.start + dt.timedelta(seconds=f.modified)
        return f"{ui.fmt_date(t.date())}, {ui.fmt_time(t)}"

    def screen_main(self, ui: UI) -> Screen:
        folder = self._folder(ui)
        subs, files = self.storage.listdir(folder)
        entries = [posixpath.join(folder, s) for s in subs] + [f.path for f in files]
        selected = [p for p in ui.get("selected", []) if self.storage.exists(p)]
        selecting = bool(selected)

        def toggle(path: str) -> None:
            cur = list(ui.get("selected", []))
            if path in cur:
                cur.remove(path)
            else:
                cur.append(path)
            ui.set("selected", cur)

        def activate(path: str, is_dir: bool) -> None:
            if ui.get("selected", []):
                toggle(path)
            elif is_dir:
                ui.push("main", folder=path)
            else:
                ui.push("editor", path=path)

        def select(path: str) -> None:
            if path not in ui.get("selected", []):
                toggle(path)

        items: list[Widget] = []
        if folder != NOTEBOOK:
            items.append(list_item("..", "", icon="folder", id="opoc_filesystem_item__root", on_click=ui.pop,
                                   title_id="opoc_filesystem_item__title"))
        for path in entries:
            is_dir = path not in self.storage.files
            f = self.storage.files.get(path)
            items.append(list_item(
                posixpath.basename(path), "" if is_dir else self._modified_label(ui, f),  # type: ignore[arg-type]
                icon="check" if path in selected else ("folder" if is_dir else "file"),
                id="opoc_filesystem_item__root", title_id="opoc_filesystem_item__title",
                subtitle_id="opoc_filesystem_item__description", selected=path in selected,
                on_click=(lambda p=path, d=is_dir: activate(p, d)), on_long_click=(lambda p=path: select(p)),
            ))
        if not entries:
            items.append(text("Empty directory", id="empty_hint", size=16, color="muted", text_align="center", vpad=48))
        items.append(spacer(80))

        overlay: Optional[Widget] = None
        info = ui.dialog_info
        if info is not None and info["kind"] == "new":
            overlay = self._new_file_dialog(ui, folder)
        elif info is not None and info["kind"] == "delete":
            overlay = self._delete_dialog(ui, selected)

        if selecting:
            n = len(selected)
            bar = top_bar("One item selected" if n == 1 else f"{n} items selected",
                          back=lambda: ui.set("selected", []), id="toolbar", actions=[
                              icon_button("check", "Select all", lambda: ui.set("selected", list(entries)),
                                          id="action_select_all"),
                              icon_button("delete", "Delete", lambda: ui.open_dialog("delete"), id="action_delete_selected_items"),
                          ])
        else:
            bar = top_bar("Markor" if folder == NOTEBOOK else posixpath.basename(folder),
                          back=ui.pop if folder != NOTEBOOK else None, id="toolbar")
        return Screen(
            top=bar,
            body=scroll(*items, id="ui__filesystem_dialog__list"),
            fab=None if selecting else Widget("icon_button", id="fab_add_new_item", desc="Create new document",
                                              on_click=lambda: self._open_new_dialog(ui), style={"icon": "add"}),
            dialog=overlay,
            activity=".activity.MainActivity",
        )

    @staticmethod
    def _open_new_dialog(ui: UI) -> None:
        ui.set("new_name", "")
        ui.set("new_ext", ".md")
        ui.open_dialog("new")

    def _new_file_dialog(self, ui: UI, folder: str) -> Widget:
        def create_file() -> None:
            name = str(ui.get("new_name", "")).strip()
            if not name:
                return
            path = posixpath.join(folder, note_filename(name, str(ui.get("new_ext", ".md"))))
            if path not in self.storage.files:  # an existing file is kept and opened
                self.storage.write(path, "", modified=self.device.clock.elapsed)
            ui.close_dialog()
            ui.push("editor", path=path)

        def create_folder() -> None:
            name = str(ui.get("new_name", "")).strip().strip("/")
            if not name:
                return
            self.storage.mkdir(posixpath.join(folder, name))
            ui.close_dialog()

        return dialog("", "", [
            button("Folder", create_folder, id="android:id/button3", variant="text"),
            button("Cancel", ui.close_dialog, id="android:id/button2", variant="text"),
            button("OK", create_file, id="android:id/button1", variant="text"),
        ], body=[
            text("Name", size=13, color="muted"),
            row(field_("new_name", "Title", id="new_file_dialog__name", weight=7),
                field_("new_ext", ".md", id="new_file_dialog__ext", weight=3), gap=8),
        ])

    def _delete_dialog(self, ui: UI, selected: list[str]) -> Widget:
        def delete() -> None:
            for p in selected:
                self.storage.delete(p)
            ui.set("selected", [])

        what = f"this {posixpath.basename(selected[0])}" if len(selected) == 1 else f"these {len(selected)} items"
        return ui.confirm("Confirm Delete", f"Do you really want to delete {what}?", "OK", delete)

    # -- editor ----------------------------------------------------------------------------
    def screen_editor(self, ui: UI) -> Screen:
        path = ui.params["path"]
        if not ui.get("_loaded", False):
            f = self.storage.read(path)
            ui.set("content", f.content if f else "")
            ui.set("_loaded", True)
        return Screen(
            top=top_bar(posixpath.basename(path), back=lambda: self._leave_editor(ui), id="toolbar", actions=[
                icon_button("check", "Save", lambda: self._save(ui), id="action_save"),
            ]),
            body=scroll(
                field_("content", "", id=EDITOR_ID, multiline=True, min_lines=18, size=16, plain=True,
                       highlight="markdown"),
                id="document__fragment__edit__scroll", pad=0,
            ),
            bottom=self._text_actions(ui),
            activity=".activity.DocumentActivity",
        )

    @staticmethod
    def _text_actions(ui: UI) -> Widget:
        """Markor's formatting bar under the editor (the markdown text actions)."""
        actions = [("[ ]", "Checkbox"), ("B", "Bold"), ("I", "Italic"), ("H", "Header"), ("•", "Unordered list"),
                   ("1.", "Ordered list"), ("</>", "Code"), ("“", "Quote")]
        return row(*[Widget("column", cls="android.widget.ImageView", desc=desc, on_click=lambda: None,
                            children=[text(glyph, size=17, bold=glyph in ("B", "H"), color="muted", text_align="center",
                                           a11y=False)],
                            style={"weight": 1, "min_h": 44, "align": "center", "pad": 10})
                     for glyph, desc in actions],
                   id="document__fragment__edit__text_actions_bar", gap=0, bg="surface", emit=True)

    def _save(self, ui: UI) -> None:
        path = ui.params["path"]
        content = str(ui.get("content", ""))
        f = self.storage.read(path)
        if f is None or f.content != content:  # Markor only writes changed text
            self.storage.write(path, content, modified=self.device.clock.elapsed)

    def _leave_editor(self, ui: UI) -> None:
        self._save(ui)
        ui.pop()

    def on_back(self, ui: UI) -> bool:
        if super().on_back(ui):
            return True
        if ui.route.name == "editor":
            self._save(ui)  # leaving the editor auto-saves
            return False
        if ui.route.name == "main" and ui.get("selected", []):
            ui.set("selected", [])
            return True
        return False
