"""Markor tasks (AndroidWorld: MarkorCreateNote, MarkorEditNote, MarkorDeleteNote,
MarkorDeleteNewestNote, MarkorDeleteAllNotes, MarkorCreateFolder).

Markor's notes are files in the shared storage under /sdcard/Documents/Markor;
verifiers read ``device.storage`` (AndroidWorld reads the same folder over adb).
Content comparisons are whitespace- and case-insensitive, like AndroidWorld's
fuzzy match.
"""

from __future__ import annotations

import posixpath
import random
from typing import Any, ClassVar, Collection

from benchmark import data
from benchmark.apps.markor import EDITOR_ID, NOTEBOOK, MarkorApp
from benchmark.plan import PlanStep, T, enter, long_press, open_app, tap, type_into
from benchmark.sim.storage import Storage
from benchmark.tasks._rows import norm
from benchmark.tasks.base import Task

HOUR = 3600.0


def random_note_name(rng: random.Random, exclude: Collection[str] = ()) -> str:
    """A note file name (.md or .txt) whose stem is not used by any name in ``exclude``."""
    taken = {posixpath.splitext(x)[0] for x in exclude}
    while True:
        stem = rng.choice(data.lines("markor_note_names"))
        if stem not in taken:
            return stem + rng.choice([".md", ".txt"])


def random_sentence(rng: random.Random) -> str:
    return rng.choice(data.lines("markor_sentences"))


def _path(name: str) -> str:
    return posixpath.join(NOTEBOOK, name)


def _notebook_files(storage: Storage) -> dict[str, tuple[str, float]]:
    """Every file under the notebook (recursively): path -> (content, modified)."""
    return {p: (f.content, f.modified) for p, f in storage.files.items() if p.startswith(NOTEBOOK + "/")}


class _MarkorTask(Task):
    abstract = True
    apps = (MarkorApp.package,)
    n_noise: ClassVar[int] = 4
    tags: ClassVar[tuple[str, ...]] = ("markor", "files")

    def __init__(self, params: dict[str, Any], seed: int = 0):
        super().__init__(params, seed)
        self._before: dict[str, tuple[str, float]] = {}

    def _write_noise(self, device: Any, n: int, exclude: Collection[str]) -> list[str]:
        """Distractor notes with older modification times, as in a notebook in use."""
        rng = random.Random(self.seed)
        device.storage.mkdir(NOTEBOOK)
        names: list[str] = []
        for k in range(n):
            name = random_note_name(rng, [*exclude, *names])
            device.storage.write(_path(name), random_sentence(rng), modified=-HOUR * rng.randint(2, 400) - k)
            names.append(name)
        return names

    def _others_untouched(self, device: Any, skip: Collection[str]) -> bool:
        now = _notebook_files(device.storage)
        return all(now.get(p) == v for p, v in self._before.items() if p not in skip)


class MarkorCreateNote(_MarkorTask):
    template = "Create a new note in Markor named {file_name} with the following text: {text}"
    reference_steps = 7

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"file_name": random_note_name(rng), "text": random_sentence(rng)}

    def setup(self, device: Any) -> None:
        device.storage.mkdir(NOTEBOOK)
        self._write_noise(device, self.n_noise, [self.params["file_name"]])
        self._before = _notebook_files(device.storage)

    def verify(self, device: Any) -> bool:
        f = device.storage.read(_path(self.params["file_name"]))
        return f is not None and norm(f.content) == norm(self.params["text"]) and self._others_untouched(device, ())

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Markor"),
            tap(T(desc="Create new document")),
            type_into(T(id="new_file_dialog__name"), self.params["file_name"]),
            enter(),  # hides the keyboard so the dialog's buttons show even in landscape
            tap(T("OK", id="android:id/button1")),
            type_into(T(id=EDITOR_ID), self.params["text"]),
            tap(T(desc="Save"), silent=True),  # Markor gives no feedback on save
        ]


class MarkorEditNote(_MarkorTask):
    """Add a header or footer line, or replace the whole text (AndroidWorld's three edit types)."""

    reference_steps = 4
    TEMPLATES: ClassVar[dict[str, str]] = {
        "header": "Edit {file_name} in Markor. Add to the top of the note {header}",
        "footer": "Edit {file_name} in Markor. Add to the bottom of the note {footer}",
        "replace": "Edit {file_name} in Markor. Replace the text with {replace_text}",
    }

    @property
    def goal(self) -> str:
        return self.TEMPLATES[self.params["edit_type"]].format(**self.params)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        original = random_sentence(rng)
        p: dict[str, Any] = {"file_name": random_note_name(rng), "original": original,
                             "edit_type": rng.choice(sorted(cls.TEMPLATES))}
        other = [s for s in data.lines("markor_sentences") if s != original]
        if p["edit_type"] == "header":
            p["header"] = rng.choice(other)
        elif p["edit_type"] == "footer":
            p["footer"] = rng.choice(other)
        else:
            p["replace_text"] = " ".join(rng.sample(other, 2))
        return p

    def expected(self) -> str:
        p = self.params
        if p["edit_type"] == "header":
            return p["header"] + "\n" + p["original"]
        if p["edit_type"] == "footer":
            return p["original"] + "\n" + p["footer"]
        return p["replace_text"]

    def setup(self, device: Any) -> None:
        self._write_noise(device, self.n_noise, [self.params["file_name"]])
        device.storage.write(_path(self.params["file_name"]), self.params["original"], modified=-HOUR)
        self._before = _notebook_files(device.storage)

    def verify(self, device: Any) -> bool:
        f = device.storage.read(_path(self.params["file_name"]))
        return (f is not None and norm(f.content) == norm(self.expected())
                and self._others_untouched(device, [_path(self.params["file_name"])]))

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Markor"),
            tap(T(self.params["file_name"], id="opoc_filesystem_item__title")),
            type_into(T(id=EDITOR_ID), self.expected()),
            tap(T(desc="Save"), silent=True),  # Markor gives no feedback on save
        ]


class MarkorDeleteNote(_MarkorTask):
    template = "Delete the note in Markor named {file_name}."
    reference_steps = 4
    tags = ("markor", "files", "deletion")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"file_name": random_note_name(rng)}

    def setup(self, device: Any) -> None:
        self._write_noise(device, self.n_noise, [self.params["file_name"]])
        device.storage.write(_path(self.params["file_name"]), random_sentence(random.Random(self.seed + 1)),
                             modified=-HOUR * 30)
        self._before = _notebook_files(device.storage)

    def verify(self, device: Any) -> bool:
        target = _path(self.params["file_name"])
        return not device.storage.exists(target) and self._others_untouched(device, [target]) \
            and len(_notebook_files(device.storage)) == len(self._before) - 1

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Markor"),
            long_press(T(self.params["file_name"], id="opoc_filesystem_item__title")),
            tap(T(desc="Delete")),
            tap(T("OK", id="android:id/button1")),
        ]


def _random_notes(rng: random.Random, n: int) -> list[list[Any]]:
    """``n`` notes as [name, content, modified] with distinct names and times."""
    notes: list[list[Any]] = []
    for k in range(n):
        name = random_note_name(rng, [x[0] for x in notes])
        notes.append([name, random_sentence(rng), -HOUR * rng.randint(2, 400) - k])
    return notes


class _MarkorNotesTask(_MarkorTask):
    """The notebook holds exactly the notes in ``params["notes"]``."""

    abstract = True
    n_range: ClassVar[tuple[int, int]] = (3, 6)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"notes": _random_notes(rng, rng.randint(*cls.n_range))}

    def setup(self, device: Any) -> None:
        device.storage.mkdir(NOTEBOOK)
        for name, content, modified in self.params["notes"]:
            device.storage.write(_path(name), content, modified=modified)
        self._before = _notebook_files(device.storage)


class MarkorDeleteNewestNote(_MarkorNotesTask):
    """The newest note is the one modified last (the list shows each note's time)."""

    template = "Delete the newest note in Markor."
    reference_steps = 4
    tags = ("markor", "files", "deletion")

    def _newest(self) -> str:
        return max(self.params["notes"], key=lambda note: note[2])[0]

    def verify(self, device: Any) -> bool:
        newest = _path(self._newest())
        return not device.storage.exists(newest) and self._others_untouched(device, [newest]) \
            and len(_notebook_files(device.storage)) == len(self._before) - 1

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Markor"),
            long_press(T(self._newest(), id="opoc_filesystem_item__title")),
            tap(T(desc="Delete")),
            tap(T("OK", id="android:id/button1")),
        ]


class MarkorDeleteAllNotes(_MarkorNotesTask):
    template = "Delete all my notes in Markor."
    reference_steps = 5
    n_range = (2, 6)
    tags = ("markor", "files", "deletion", "multi_select")

    def verify(self, device: Any) -> bool:
        return not _notebook_files(device.storage)

    def reference_solution(self) -> list[PlanStep]:
        first = sorted((note[0] for note in self.params["notes"]), key=str.lower)[0]
        return [
            open_app("Markor"),
            long_press(T(first, id="opoc_filesystem_item__title")),
            tap(T(desc="Select all")),
            tap(T(desc="Delete")),
            tap(T("OK", id="android:id/button1")),
        ]


class MarkorCreateFolder(_MarkorTask):
    template = "Create a new folder in Markor named {folder_name}."
    reference_steps = 5
    tags = ("markor", "files")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        base = rng.choice(data.lines("markor_folders"))
        return {"folder_name": f"{base}_{rng.randint(2019, 2024)}"}

    def setup(self, device: Any) -> None:
        self._write_noise(device, self.n_noise, ())
        rng = random.Random(self.seed)
        for name in rng.sample([f for f in data.lines("markor_folders") if not self.params["folder_name"].startswith(f)], 2):
            device.storage.mkdir(_path(name))
        self._before = _notebook_files(device.storage)

    def verify(self, device: Any) -> bool:
        target = _path(self.params["folder_name"])
        return target in device.storage.folders and self._others_untouched(device, ())

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Markor"),
            tap(T(desc="Create new document")),
            type_into(T(id="new_file_dialog__name"), self.params["folder_name"]),
            enter(),
            tap(T("Folder", id="android:id/button3")),
        ]
