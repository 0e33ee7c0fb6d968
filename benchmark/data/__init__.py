"""Content pools (names, recipes, expenses, …) shipped as data files, loaded by name."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ttir.core.validation import load_package_yaml


@lru_cache(maxsize=None)
def lines(name: str) -> tuple[str, ...]:
    """Non-empty, non-comment lines of ``benchmark/data/<name>.txt``."""
    text = resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return tuple(ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


@lru_cache(maxsize=None)
def table(name: str) -> Any:
    """The parsed ``benchmark/data/<name>.yaml``."""
    text = resources.files(__package__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    return load_package_yaml(text)


def text(name: str) -> str:
    """A raw data file (e.g. an HTML page) by file name."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
