"""Seeding realistic files into the simulated shared storage (used by the Files,
Browser and Audio Recorder tasks): names per folder, sizes per type, past dates,
and AndroidWorld-style name variants for targets and distractors."""

from __future__ import annotations

import datetime as dt
import posixpath
import random
import string
from typing import Any, Iterable

from benchmark import data
from benchmark.sim.storage import ROOT

DAY = 86_400.0


def pool() -> dict[str, Any]:
    return data.table("storage_files")


def folder_names() -> list[str]:
    return sorted(pool()["folders"])


def folder_files(folder: str) -> list[str]:
    files = pool()["folders"]
    if folder not in files:
        raise KeyError(f"folder={folder!r} has no file pool; expected one of {', '.join(sorted(files))}")
    return list(files[folder])


def file_size(rng: random.Random, name: str) -> int:
    lo, hi = pool()["sizes"].get(posixpath.splitext(name)[1].lower(), [1_000, 500_000])
    return rng.randint(lo, hi)


def past_time(rng: random.Random, max_days: float = 90.0) -> float:
    """A modification time (simulated seconds, negative = before the clock's start)."""
    return -round(rng.uniform(DAY / 2, max_days * DAY))


def variant_name(rng: random.Random, base: str) -> str:
    """A plausible variant of ``base``: a date prefix, a random suffix or a word like "backup"."""
    stem, ext = posixpath.splitext(base)
    kind = rng.choice(["date", "random", "word"])
    if kind == "date":
        day = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(280))
        mod = day.strftime("%Y_%m_%d")
    elif kind == "random":
        mod = "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(4))
    else:
        mod = rng.choice(pool()["name_modifiers"])
    return f"{mod}_{stem}{ext}" if rng.random() < 0.5 else f"{stem}_{mod}{ext}"


def random_file_name(rng: random.Random, ext: str) -> str:
    return f"{rng.choice(pool()['adjectives'])}_{rng.choice(pool()['nouns'])}{ext}"


def unique_names(rng: random.Random, candidates: list[str], count: int, exclude: Iterable[str] = ()) -> list[str]:
    """``count`` distinct variant names of ``candidates`` avoiding ``exclude``."""
    taken = set(exclude)
    out: list[str] = []
    while len(out) < count:
        name = rng.choice(candidates) if rng.random() < 0.4 else variant_name(rng, rng.choice(candidates))
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def write_file(device: Any, rng: random.Random, path: str) -> None:
    device.storage.write(path, "", size=file_size(rng, path), modified=past_time(rng))


def seed_folder(device: Any, rng: random.Random, folder: str, count: int, exclude: Iterable[str] = ()) -> list[str]:
    """Write ``count`` distractor files into ``/sdcard/<folder>``; returns their names."""
    names = unique_names(rng, folder_files(folder), count, exclude)
    for name in names:
        write_file(device, rng, f"{ROOT}/{folder}/{name}")
    return names


def seed_storage(device: Any, rng: random.Random, *, folders: Iterable[str] = (), per_folder: tuple[int, int] = (1, 4),
                 exclude: Iterable[str] = ()) -> None:
    """Fill several folders with distractors so the phone looks lived-in."""
    for folder in folders:
        seed_folder(device, rng, folder, rng.randint(*per_folder), exclude)
