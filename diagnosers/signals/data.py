"""Loading the YAML data files of ``diagnosers/data`` (lexicons, system ids, stopwords)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ttir.core.validation import load_package_yaml, load_yaml_mapping

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def load_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping a user named (size, nesting and alias limits); the error names the file
    and what was expected."""
    return load_yaml_mapping(path, "data")


def load_builtin_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping of ``diagnosers/data`` itself (the project's own file: libyaml's parser,
    :func:`ttir.core.validation.load_package_yaml`)."""
    data = load_package_yaml(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


@lru_cache(maxsize=None)
def builtin(name: str) -> dict[str, Any]:
    """One of the built-in data files by stem (``system``, ``stopwords``, ``interruption``)."""
    return load_builtin_yaml(DATA_DIR / f"{name}.yaml")


def lower_set(values: Optional[list[Any]]) -> frozenset[str]:
    return frozenset(str(v).strip().lower() for v in (values or []))
