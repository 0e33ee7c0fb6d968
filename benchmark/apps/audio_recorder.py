"""Audio Recorder (com.dimowner.audiorecorder): record with a timer that follows the
simulated clock, pause / stop, name the recording in the "New name" dialog, list,
rename and delete recordings.

Recordings are .m4a files in ``/sdcard/Recordings`` (shared storage, so the Files
app sees them); a file's duration follows from its size at the 128 kbps bitrate.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Optional

from pydantic import BaseModel

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
    popup_menu,
    row,
    scroll,
    spacer,
    text,
)

RECORDINGS_DIR = f"{ROOT}/Recordings"
EXTENSION = ".m4a"
BYTES_PER_SECOND = 16_000  # AAC at 128 kbps
RECORD_INFO = "M4a, 44.1kHz, 128kbps, Stereo"
RECORD_RED = (229, 57, 53)
AUDIO_SUFFIXES = (".m4a", ".mp3", ".wav", ".3gp", ".aac", ".ogg")


def size_for(seconds: float) -> int:
    return max(1, int(round(seconds * BYTES_PER_SECOND)))


def duration_of(f: StoredFile) -> float:
    return f.size / BYTES_PER_SECOND


def format_duration(seconds: float) -> str:
    s = int(seconds)
    h, rem = divmod(s, 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}" if h else f"{rem // 60:02d}:{rem % 60:02d}"


class RecordingSession(BaseModel):
    """A recording in progress; ``started`` is the clock's elapsed seconds at the last (re)start."""

    name: str
    started: float
    accumulated: float = 0.0
    paused: bool = False

    def duration(self, now: float) -> float:
        return self.accumulated + (0.0 if self.paused else max(0.0, now - self.started))


class RecorderData(BaseModel):
    session: Optional[RecordingSession] = None
    counter: int = 1  # the N of the next default name "Record-N"
    active: str = ""  # path of the recording shown on the main screen


class AudioRecorderApp(App):
    package = "com.dimowner.audiorecorder"
    label = "Audio Recorder"
    icon = "mic"
    accent = (69, 90, 100)  # the app's default "Blue Gray" theme
    order = 60
    data_model = RecorderData
    data: RecorderData

    # -- storage -----------------------------------------------------------------------------------
    def recordings(self) -> list[StoredFile]:
        """Recordings, newest first (the app's default "By date" order)."""
        _, files = self.device.storage.listdir(RECORDINGS_DIR)
        return sorted((f for f in files if f.name.lower().endswith(AUDIO_SUFFIXES)), key=lambda f: (-f.modified, f.name))

    def _when(self, f: StoredFile) -> dt.datetime:
        return self.device.clock.start + dt.timedelta(seconds=f.modified)

    def _next_name(self) -> str:
        while self.device.storage.exists(f"{RECORDINGS_DIR}/Record-{self.data.counter}{EXTENSION}"):
            self.data.counter += 1
        return f"Record-{self.data.counter}"

    # -- recording ------------------------------------------------------------------------------------
    def _now(self) -> float:
        return self.device.clock.elapsed

    def _record_button(self, ui: UI) -> None:
        s = self.data.session
        if s is None:
            self.data.session = RecordingSession(name=self._next_name(), started=self._now())
        elif s.paused:
            s.started, s.paused = self._now(), False
        else:
            s.accumulated, s.paused = s.duration(self._now()), True

    def _stop(self, ui: UI) -> None:
        s = self.data.session
        if s is None:
            return
        seconds = s.duration(self._now())
        self.data.session = None
        path = f"{RECORDINGS_DIR}/{s.name}{EXTENSION}"
        self.device.storage.write(path, "", size=size_for(seconds), modified=self._now())
        self.data.counter += 1
        self.data.active = path
        self._open_rename(ui, path)

    def _discard(self, ui: UI) -> None:
        self.data.session = None
        ui.toast("The record deleted successfully")

    # -- rename / delete --------------------------------------------------------------------------------
    def _open_rename(self, ui: UI, path: str) -> None:
        ui.set("input_name", posixpath.splitext(posixpath.basename(path))[0])
        ui.open_dialog("rename", path=path)

    def _rename(self, ui: UI, path: str) -> None:
        name = str(ui.get("input_name", "")).strip()
        if name.lower().endswith(EXTENSION):
            name = name[: -len(EXTENSION)].strip()
        if not name or "/" in name:
            ui.toast("Failed to rename the record!")
            return
        dst = f"{RECORDINGS_DIR}/{name}{EXTENSION}"
        if dst != path and self.device.storage.exists(dst):
            ui.toast("File with this name is already exists!")
            return
        ui.close_dialog()
        st = self.device.storage
        f = st.read(path)
        if f is not None and dst != path:
            st.delete(path)
            st.write(dst, f.content, size=f.size, modified=f.modified)
            if self.data.active == path:
                self.data.active = dst

    def _delete(self, ui: UI, path: str) -> None:
        self.device.storage.delete(path)
        if self.data.active == path:
            self.data.active = ""
        ui.toast("The record deleted successfully")

    def _dialog(self, ui: UI) -> Optional[Widget]:
        info = ui.dialog_info
        if info is None:
            return None
        path = info.get("path", "")
        name = posixpath.splitext(posixpath.basename(path))[0]
        kind = info["kind"]
        if kind == "rename":
            return Widget("card", id="android:id/parentPanel", children=[
                text("New name", id="dialog_title", size=20),
                field_("input_name", "", id="input_name"),
                row(button("Cancel", ui.close_dialog, id="dialog_negative_btn", variant="text"),
                    button("Save", lambda: self._rename(ui, path), id="dialog_positive_btn"),
                    gap=8, justify="end"),
            ], style={"pad": 20, "gap": 12, "surface": "dialog", "placement": "center", "scrim": True})
        if kind == "delete":
            return ui.confirm("Delete this record?", f"Delete record {name} forever?", "Yes",
                              lambda: self._delete(ui, path), cancel_label="No")
        if kind == "info":
            f = self.device.storage.read(path)
            if f is None:
                return None
            when = self._when(f)
            lines = (f"Name: {name}\nFormat: M4a\nDuration: {format_duration(duration_of(f))}\n"
                     f"Size: {f.size / 1_000_000:.2f} Mb\nCreated: {ui.fmt_date(when.date())} {ui.fmt_time(when)}\n"
                     f"File location: {f.path}")
            return dialog("Information", lines, [button("Ok", ui.close_dialog, id="android:id/button1", variant="text")])
        if kind == "record_menu":
            entries = [
                ("Share", lambda: ui.toast("Sharing isn't available")),
                ("Information", lambda: ui.open_dialog("info", path=path)),
                ("Rename", lambda: self._open_rename(ui, path)),
                ("Delete", lambda: ui.open_dialog("delete", path=path)),
            ]
            return popup_menu([(label, (lambda fn=fn: (ui.close_dialog(), fn()))) for label, fn in entries])
        return None

    # -- screens ---------------------------------------------------------------------------------------------
    def screen_main(self, ui: UI) -> Screen:
        s = self.data.session
        active = self.device.storage.read(self.data.active) if self.data.active else None
        if s is not None:
            seconds = s.duration(self._now())
            status = "Paused" if s.paused else "Recording…"
            name = s.name
        else:
            seconds = duration_of(active) if active is not None else 0.0
            status = ""
            name = posixpath.splitext(active.name)[0] if active is not None else ""
        info = [
            spacer(24),
            text(status, id="txt_status", size=16, color="accent", text_align="center") if status else None,
            text(format_duration(seconds), id="txt_progress", size=54, bold=True, text_align="center"),
            text(name, id="txt_name", size=22, text_align="center", max_lines=2) if name else None,
            text(RECORD_INFO, id="txt_record_info", size=15, color="muted", text_align="center"),
        ]
        recording = s is not None
        record_desc = "Start recording" if s is None else ("Resume recording" if s.paused else "Pause recording")
        controls = row(
            icon_button("settings", "Settings", lambda: ui.toast("Settings are not available"), id="btn_settings"),
            column(weight=1),
            icon_button("delete", "Delete", lambda: self._discard(ui), id="btn_record_delete") if recording else None,
            Widget("icon_button", id="btn_record", desc=record_desc, on_click=lambda: self._record_button(ui),
                   style={"icon": "pause" if recording and not s.paused else "record",  # type: ignore[union-attr]
                          "bg": RECORD_RED, "color": (255, 255, 255)}),
            icon_button("stop", "Stop recording", lambda: self._stop(ui), id="btn_record_stop") if recording else None,
            column(weight=1),
            icon_button("menu", "Records", lambda: ui.push("records"), id="btn_records_list"),
            id="pnl_controls", pad=12, gap=12, bg="surface",
        )
        return Screen(
            top=Widget("top_bar", id="toolbar", children=[
                icon_button("download", "Import", lambda: ui.toast("Can't import files"), id="btn_import"),
                text("Audio Recorder", size=22, weight=1, text_align="center"),
                icon_button("more", "More options", lambda: None, id="btn_share"),
            ], style={"pad": 4, "gap": 4, "min_h": 64, "align": "center"}),
            body=scroll(*info, id="main_scroll", gap=8, pad=16),
            bottom=controls,
            dialog=self._dialog(ui),
            activity=".app.main.MainActivity",
        )

    def screen_records(self, ui: UI) -> Screen:
        def play(path: str) -> None:
            self.data.active = path
            ui.pop()

        items: list[Widget] = []
        for f in self.recordings():
            when = self._when(f)
            day = "Today" if when.date() == ui.now().date() else ui.fmt_date(when.date())
            items.append(Widget("row", id="container", on_click=lambda p=f.path: play(p), children=[
                column(text(posixpath.splitext(f.name)[0], id="list_item_name", size=17, bold=True, max_lines=1),
                       text(f"{day}, {ui.fmt_time(when)}", id="list_item_date", size=14, color="muted"),
                       gap=2, weight=1),
                text(format_duration(duration_of(f)), id="list_item_duration", size=14, color="muted"),
                icon_button("more", f"More options for {posixpath.splitext(f.name)[0]}",
                            lambda p=f.path: ui.open_dialog("record_menu", path=p), id="list_item_more"),
            ], style={"pad": 16, "gap": 12, "min_h": 64, "align": "center"}))
        if not items:
            items.append(column(spacer(48), text("Records is empty", id="txtEmpty", size=18, color="muted",
                                                 text_align="center")))
        return Screen(
            top=Widget("top_bar", id="toolbar", children=[
                icon_button("back", "Navigate up", ui.pop, id="btn_back"),
                text("Records", id="txt_title", size=22, weight=1),
            ], style={"pad": 4, "gap": 4, "min_h": 64, "align": "center"}),
            body=scroll(*items, id="recycler_view"),
            dialog=self._dialog(ui),
            activity=".app.records.RecordsActivity",
        )
