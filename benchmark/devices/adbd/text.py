"""Fixed texts the served phone prints (usage messages, dumpsys and monkey output
templates): files in data/text/, read once."""

from __future__ import annotations

import functools
from pathlib import Path

TEXTS = Path(__file__).with_name("data") / "text"


@functools.lru_cache(maxsize=None)
def _read(name: str) -> str:
    return (TEXTS / f"{name}.txt").read_text(encoding="utf-8")


def text(name: str, **fields: object) -> bytes:
    """The text ``name`` with ``{field}`` placeholders filled in, as bytes."""
    body = _read(name)
    return (body.format(**fields) if fields else body).encode("utf-8")
