"""The reserved real screens: files kept for an independent evaluation, never in the corpus.

The list (git blob id and sha256 per file) is ``reserved.txt`` in this folder: the
repository reads nothing from outside itself, so the check runs the same in any clone.
A newer list handed out by whoever keeps the evaluation can be added with the
``TTIR_RESERVED_LIST`` environment variable (a path); both are then read.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
LOCAL_LIST = HERE / "reserved.txt"


def extra_list() -> Optional[Path]:
    raw = os.environ.get("TTIR_RESERVED_LIST")
    return Path(raw) if raw else None


@dataclass
class Reserved:
    blobs: set[str] = field(default_factory=set)
    sha256s: set[str] = field(default_factory=set)
    sources: list[Path] = field(default_factory=list)

    def is_reserved(self, blob: str, sha256: str) -> bool:
        return blob in self.blobs or sha256 in self.sha256s


def git_blob_id(data: bytes) -> str:
    """What ``git hash-object`` prints for these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def rejection(blob: str, sha256: str, reserved: Reserved, have: set[str]) -> Optional[str]:
    """Why a candidate file cannot join the corpus ('reserved', 'duplicate'), or None."""
    if reserved.is_reserved(blob, sha256):
        return "reserved"
    if sha256 in have:
        return "duplicate"
    return None


def parse_list(text: str) -> tuple[set[str], set[str]]:
    blobs, shas = set(), set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        blobs.add(parts[0].lower())
        if len(parts) > 1:
            shas.add(parts[1].lower())
    return blobs, shas


def load_reserved() -> Reserved:
    out = Reserved()
    for path in (LOCAL_LIST, extra_list()):
        if path is None:
            continue
        if path.exists():
            blobs, shas = parse_list(path.read_text(encoding="utf-8"))
            out.blobs |= blobs
            out.sha256s |= shas
            out.sources.append(path)
    return out
