"""Audio Recorder tasks (AndroidWorld: AudioRecorderRecordAudio,
AudioRecorderRecordAudioWithFileName; plus deleting and renaming a recording).
Recordings are files in /sdcard/Recordings, so verifiers read the storage."""

from __future__ import annotations

import random
from typing import Any, Sequence

from benchmark.apps.audio_recorder import EXTENSION, RECORDINGS_DIR, AudioRecorderApp, size_for
from benchmark.plan import PlanStep, T, enter, open_app, tap, type_into
from benchmark.tasks import _storage_seed as seed
from benchmark.tasks.base import Task


def _recordings(device: Any) -> dict[str, tuple[int, float]]:
    """File name -> (size, modified) of everything in the recordings folder."""
    _, files = device.storage.listdir(RECORDINGS_DIR)
    return {f.name: (f.size, f.modified) for f in files}


def recording_name(rng: random.Random) -> str:
    """A name like AndroidWorld's: a topic with a date, a word or a random suffix/prefix."""
    return seed.variant_name(rng, rng.choice(seed.pool()["recording_topics"]))


def _seed_recordings(device: Any, rng: random.Random, count: int, names: Sequence[str] = (),
                     exclude: Sequence[str] = ()) -> list[str]:
    """Existing recordings (``names`` first, then random ones avoiding ``exclude``); returns all stems."""
    stems = list(names)
    while len(stems) < count:
        stem = recording_name(rng)
        if stem not in stems and stem not in exclude:
            stems.append(stem)
    for stem in stems:
        device.storage.write(f"{RECORDINGS_DIR}/{stem}{EXTENSION}", "", size=size_for(rng.uniform(8, 900)),
                             modified=seed.past_time(rng, 30))
    return stems


class _RecorderTask(Task):
    abstract = True
    apps = (AudioRecorderApp.package,)
    tags = ("audio_recorder",)

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        _seed_recordings(device, rng, rng.randint(0, 3), exclude=list(self.params.values()))
        self._before = _recordings(device)

    def _new_recordings(self, device: Any) -> list[str]:
        """New or changed non-empty files since setup (old ones may be deleted or reused)."""
        before = getattr(self, "_before", {})
        return [name for name, (size, modified) in _recordings(device).items()
                if size > 0 and before.get(name) != (size, modified)]


class AudioRecorderRecordAudio(_RecorderTask):
    template = "Record an audio clip using Audio Recorder app and save it."
    reference_steps = 4

    def verify(self, device: Any) -> bool:
        return len(self._new_recordings(device)) == 1

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Audio Recorder"),
            tap(T(id="btn_record")),
            tap(T(id="btn_record_stop")),
            tap(T("Save", id="dialog_positive_btn")),
        ]


class AudioRecorderRecordAudioWithFileName(_RecorderTask):
    template = 'Record an audio clip and save it with name "{file_name}" using Audio Recorder app.'
    reference_steps = 6
    tags = ("audio_recorder", "form", "figure_8")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"file_name": recording_name(rng)}

    def verify(self, device: Any) -> bool:
        return f"{self.params['file_name']}{EXTENSION}" in self._new_recordings(device)

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Audio Recorder"),
            tap(T(id="btn_record")),
            tap(T(id="btn_record_stop")),
            type_into(T(id="input_name"), self.params["file_name"]),
            enter(),  # hides the keyboard, which covers the dialog's buttons in landscape
            tap(T("Save", id="dialog_positive_btn")),
        ]


class AudioRecorderDeleteRecording(_RecorderTask):
    template = "Delete the recording {name} in the Audio Recorder app."
    reference_steps = 5
    tags = ("audio_recorder", "deletion")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"name": recording_name(rng)}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        _seed_recordings(device, rng, rng.randint(3, 6), [self.params["name"]])
        self._before = _recordings(device)

    def verify(self, device: Any) -> bool:
        target = f"{self.params['name']}{EXTENSION}"
        now = _recordings(device)
        before = getattr(self, "_before", {})
        return target not in now and all(now.get(k) == v for k, v in before.items() if k != target)

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Audio Recorder"),
            tap(T(desc="Records")),
            tap(T(desc=f"More options for {self.params['name']}")),
            tap(T("Delete", id="android:id/title")),
            tap(T("Yes", id="android:id/button1")),
        ]


class AudioRecorderRenameRecording(_RecorderTask):
    template = "Rename the recording {name} to {new_name} in the Audio Recorder app."
    reference_steps = 7
    tags = ("audio_recorder", "form")

    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        name = recording_name(rng)
        new_name = recording_name(rng)
        while new_name == name:
            new_name = recording_name(rng)
        return {"name": name, "new_name": new_name}

    def setup(self, device: Any) -> None:
        rng = random.Random(self.seed)
        _seed_recordings(device, rng, rng.randint(2, 5), [self.params["name"]], exclude=[self.params["new_name"]])
        self._before = _recordings(device)

    def verify(self, device: Any) -> bool:
        now = _recordings(device)
        old = self._before.get(f"{self.params['name']}{EXTENSION}") if hasattr(self, "_before") else None
        renamed = now.get(f"{self.params['new_name']}{EXTENSION}")
        return (renamed is not None and f"{self.params['name']}{EXTENSION}" not in now
                and (old is None or renamed[0] == old[0]))

    def reference_solution(self) -> list[PlanStep]:
        return [
            open_app("Audio Recorder"),
            tap(T(desc="Records")),
            tap(T(desc=f"More options for {self.params['name']}")),
            tap(T("Rename", id="android:id/title")),
            type_into(T(id="input_name"), self.params["new_name"]),
            enter(),
            tap(T("Save", id="dialog_positive_btn")),
        ]
