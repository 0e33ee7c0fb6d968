"""Loading the YAML data files of ``diagnosers/data`` (lexicons, system ids, stopwords)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import yaml

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def load_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping; the error names the file and what was expected."""
    if not path.exists():
        raise FileNotFoundError(f"data file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


@lru_cache(maxsize=None)
def builtin(name: str) -> dict[str, Any]:
    """One of the built-in data files by stem (``system``, ``stopwords``, ``interruption``)."""
    return load_yaml(DATA_DIR / f"{name}.yaml")


def lower_set(values: Optional[list[Any]]) -> frozenset[str]:
    return frozenset(str(v).strip().lower() for v in (values or []))
