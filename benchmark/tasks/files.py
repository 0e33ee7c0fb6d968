"""Files tasks (AndroidWorld: FilesDeleteFile, FilesMoveFile, …) on the shared storage."""

from __future__ import annotations

import posixpath
import random
from typing import Any

from benchmark.apps.files import ROOT_LABEL, FilesApp
from benchmark.plan import PlanStep, T, enter, long_press, open_app, tap, type_into
from benchmark.sim.storage import ROOT
from benchmark.tasks import _storage_seed as seed
from benchmark.tasks.base import Task


def _other_folders(rng: random.Random, exclude: set[str], n: int) -> list[str]:
    return rng.sample([f for f in seed.folder_names() if f not in exclude], n)


def _snapshot(device: Any, folder: str) -> dict[str, int]:
    """Name -> size of the files directly in ``/sdcard/<folder>``."""
    _, files = device.storage.listdir(f"{ROOT}/{folder}")
    return {f.name: f.size for f in files}


class _FilesTask(Task):
    abstract = True
    apps = (FilesApp.package,)
    tags = ("files",)

    def _seed(self, device: Any, rng: random.Random, folder: str, distractors: int, exclude: set[str]) -> None:
        seed.seed_folder(device, rng, folder, distractors, exclude)
        seed.seed_storage(device, rng, folders=_other_folders(rng, {folder}, 3), exclude=exclude)


class FilesDeleteFile(_FilesTask):
    template = ("Delete the file {file_name} from the Android filesystem located in the {subfolder} folder "
                "within the {storage} storage area.")
    reference_steps = 5
    tags = ("files", "deletion")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        subfolder = rng.choice(seed.folder_names())
        ext = posixpath.splitext(seed.folder_files(subfolder)[0])[1]
        return {"file_name": seed.random_file_name(rng, ext), "subfolder": subfolder, "storage": ROOT_LABEL}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        p = self.params
        self._seed(device, rng, p["subfolder"], rng.randint(3, 6), {p["file_name"]})
        seed.write_file(device, rng, f"{ROOT}/{p['subfolder']}/{p['file_name']}")
        self._others = {k: v for k, v in _snapshot(device, p["subfolder"]).items() if k != p["file_name"]}

    def verify(self, device: Any) -> bool:
        now = _snapshot(device, self.params["subfolder"])
        others = getattr(self, "_others", None)
        return self.params["file_name"] not in now and (others is None or all(now.get(k) == v for k, v in others.items()))

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Files"),
            tap(self.params["subfolder"]),
            long_press(T(self.params["file_name"])),
            tap(T(desc="Delete")),
            tap(T("OK", id="android:id/button1")),
        ]


class FilesDeleteMultipleFiles(FilesDeleteFile):
    template = "Delete the files {file_list} from the {subfolder} folder within the {storage} storage area."
    reference_steps = 7

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        subfolder = rng.choice(seed.folder_names())
        names = seed.unique_names(rng, seed.folder_files(subfolder), rng.randint(2, 3))
        return {"file_names": names, "file_list": ", ".join(names), "subfolder": subfolder, "storage": ROOT_LABEL}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        p = self.params
        self._seed(device, rng, p["subfolder"], rng.randint(3, 5), set(p["file_names"]))
        for name in p["file_names"]:
            seed.write_file(device, rng, f"{ROOT}/{p['subfolder']}/{name}")
        self._others = {k: v for k, v in _snapshot(device, p["subfolder"]).items() if k not in p["file_names"]}

    def verify(self, device: Any) -> bool:
        now = _snapshot(device, self.params["subfolder"])
        others = getattr(self, "_others", None)
        return not any(n in now for n in self.params["file_names"]) and (
            others is None or all(now.get(k) == v for k, v in others.items()))

    def reference_solution(self) -> list[PlanStep]:
        first, *rest = self.params["file_names"]
        return [
            open_app("Files"),
            tap(self.params["subfolder"]),
            long_press(T(first)),
            *[tap(T(name)) for name in rest],
            tap(T(desc="Delete")),
            tap(T("OK", id="android:id/button1")),
        ]


class FilesMoveFile(_FilesTask):
    template = ("Move the file {file_name} from {source_folder} within the {storage} storage area to the "
                "{destination_folder} within the same {storage} storage area in the Android filesystem.")
    reference_steps = 7
    tags = ("files",)

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        source, destination = rng.sample(seed.folder_names(), 2)
        # as in AndroidWorld, the file is one that belongs in its destination
        return {"file_name": seed.variant_name(rng, rng.choice(seed.folder_files(destination))),
                "source_folder": source, "destination_folder": destination, "storage": ROOT_LABEL}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        p = self.params
        self._seed(device, rng, p["source_folder"], rng.randint(2, 5), {p["file_name"]})
        seed.seed_folder(device, rng, p["destination_folder"], rng.randint(1, 4), {p["file_name"]})
        path = f"{ROOT}/{p['source_folder']}/{p['file_name']}"
        seed.write_file(device, rng, path)
        self._size = device.storage.read(path).size

    def verify(self, device: Any) -> bool:
        p = self.params
        moved = device.storage.read(f"{ROOT}/{p['destination_folder']}/{p['file_name']}")
        still_there = device.storage.exists(f"{ROOT}/{p['source_folder']}/{p['file_name']}")
        return moved is not None and not still_there and moved.size == getattr(self, "_size", moved.size)

    def reference_solution(self) -> list[PlanStep]:
        p = self.params
        return [
            open_app("Files"),
            tap(p["source_folder"]),
            long_press(T(p["file_name"])),
            tap(T(desc="More options")),
            tap("Move to…"),
            tap(T(p["destination_folder"], id="android:id/title")),
            tap("Move here"),
        ]


class FilesRenameFile(_FilesTask):
    template = "Rename the file {file_name} in the {subfolder} folder of the {storage} storage area to {new_name}."
    reference_steps = 8
    tags = ("files", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        subfolder = rng.choice(seed.folder_names())
        (old,) = seed.unique_names(rng, seed.folder_files(subfolder), 1)
        new = old
        while new == old:
            new = seed.variant_name(rng, rng.choice(seed.folder_files(subfolder)))
        return {"file_name": old, "new_name": new, "subfolder": subfolder, "storage": ROOT_LABEL}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        p = self.params
        self._seed(device, rng, p["subfolder"], rng.randint(2, 5), {p["file_name"], p["new_name"]})
        path = f"{ROOT}/{p['subfolder']}/{p['file_name']}"
        seed.write_file(device, rng, path)
        self._size = device.storage.read(path).size

    def verify(self, device: Any) -> bool:
        p = self.params
        renamed = device.storage.read(f"{ROOT}/{p['subfolder']}/{p['new_name']}")
        return (renamed is not None and not device.storage.exists(f"{ROOT}/{p['subfolder']}/{p['file_name']}")
                and renamed.size == getattr(self, "_size", renamed.size))

    def reference_solution(self) -> list[PlanStep]:
        p = self.params
        return [
            open_app("Files"),
            tap(p["subfolder"]),
            long_press(T(p["file_name"])),
            tap(T(desc="More options")),
            tap("Rename"),
            type_into(T(id="android:id/text1"), p["new_name"]),
            enter(),  # hides the keyboard, which covers the dialog's buttons in landscape
            tap(T("OK", id="android:id/button1")),
        ]
