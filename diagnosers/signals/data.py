"""Loading the YAML data files of ``diagnosers/data`` (lexicons, system ids, stopwords)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ttir.core.validation import load_yaml_mapping

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def load_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping; the error names the file and what was expected."""
    return load_yaml_mapping(path, "data")


@lru_cache(maxsize=None)
def builtin(name: str) -> dict[str, Any]:
    """One of the built-in data files by stem (``system``, ``stopwords``, ``interruption``)."""
    return load_yaml(DATA_DIR / f"{name}.yaml")


def lower_set(values: Optional[list[Any]]) -> frozenset[str]:
    return frozenset(str(v).strip().lower() for v in (values or []))
