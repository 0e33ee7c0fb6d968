"""The corpus as records: each file with its provenance, its label and its split."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Optional

import yaml

from experiments.real_screens.labels import ScreenLabel

CORPUS_DIR = Path(__file__).resolve().parent
SPLITS = ("dev", "test")


@dataclass
class Screen:
    """One corpus file."""

    manifest: dict[str, Any]
    label: ScreenLabel
    split: str
    root: Path = CORPUS_DIR
    round: Optional[int] = None  # the collection round that brought its repository (rounds.yaml)

    @property
    def id(self) -> str:
        return self.label.id

    @property
    def path(self) -> Path:
        return self.root / self.manifest["file"]

    @property
    def repo(self) -> str:
        return self.manifest["repo"]

    @cached_property
    def data(self) -> bytes:
        return self.path.read_bytes()

    def observation(self) -> Any:
        """The parsed screen; the foreground is the task's app (what ``dumpsys activity``
        reports as resumed under a dialog)."""
        from ttir.core.types import Observation

        return Observation.from_xml(self.data, foreground=self.label.task_app or None)


@dataclass
class Sequence:
    """Consecutive dumps of one recorded run, in order."""

    id: str
    screens: list[str]  # corpus ids
    actions: list[Optional[dict[str, Any]]]  # the recorded action between consecutive screens (or None)
    source: str
    cases: list[dict[str, Any]]  # labelled steps of the run (see sequences.jsonl)


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not a JSON object: {exc}") from None


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping of the corpus (splits.yaml, rounds.yaml); {} when the file is absent."""
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top, got {type(data).__name__}")
    return data


def load_splits(root: Path = CORPUS_DIR) -> dict[str, str]:
    path = root / "splits.yaml"
    data = read_yaml(path)
    out: dict[str, str] = {}
    for split in SPLITS:
        for repo in data.get(split) or []:
            if repo in out:
                raise ValueError(f"{path}: repository {repo!r} is in both {out[repo]} and {split}")
            out[repo] = split
    return out


def load_rounds(root: Path = CORPUS_DIR) -> dict[str, int]:
    """Repository -> the collection round that brought it (rounds.yaml)."""
    path = root / "rounds.yaml"
    data = read_yaml(path)
    out: dict[str, int] = {}
    for number, entry in (data.get("rounds") or {}).items():
        if not isinstance(number, int) or not isinstance(entry, dict):
            raise ValueError(f"{path}: round {number!r} must be a number holding 'about' and 'repositories'")
        for repo in entry.get("repositories") or []:
            if repo in out:
                raise ValueError(f"{path}: repository {repo!r} is in round {out[repo]} and round {number}")
            out[repo] = number
    return out


def load_corpus(split: str = "all", root: Path = CORPUS_DIR) -> list[Screen]:
    """Every labelled file of the corpus (``split``: dev, test or all), in manifest order."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split={split!r}: expected one of dev, test, all")
    manifest = {row["id"]: row for row in _jsonl(root / "manifest.jsonl")}
    splits = load_splits(root)
    rounds = load_rounds(root)
    out = []
    for row in _jsonl(root / "labels.jsonl"):
        label = ScreenLabel(**row)
        m = manifest.get(label.id)
        if m is None:
            raise ValueError(f"labels.jsonl: id={label.id!r} has no manifest row")
        s = splits.get(m["repo"])
        if s is None:
            raise ValueError(f"splits.yaml: repository {m['repo']!r} (file {label.id}) is in no split")
        if split in ("all", s):
            out.append(Screen(manifest=m, label=label, split=s, root=root, round=rounds.get(m["repo"])))
    return out


def load_sequences(root: Path = CORPUS_DIR) -> list[Sequence]:
    return [Sequence(id=r["id"], screens=r["screens"], actions=r.get("actions") or [], source=r.get("source", ""),
                     cases=r.get("cases") or [])
            for r in _jsonl(root / "sequences.jsonl")]
