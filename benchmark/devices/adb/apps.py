"""App name → package table for ``open_app`` on a real phone (data: apps.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from pydantic import BaseModel, ConfigDict, field_validator

from benchmark.devices.adb.commands import check_component, check_package
from ttir.core.validation import load_yaml_file

DEFAULT_TABLE = Path(__file__).with_name("apps.yaml")


class AppEntry(BaseModel):
    """One app: the names agents use for it and the packages (or ``package/activity``
    components) that provide it, in order of preference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    names: tuple[str, ...]
    packages: tuple[str, ...]

    @field_validator("names")
    @classmethod
    def _names(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v or not all(isinstance(n, str) and n.strip() for n in v):
            raise ValueError(f"names={list(v)!r} must be a non-empty list of app names")
        return tuple(n.strip().lower() for n in v)

    @field_validator("packages")
    @classmethod
    def _packages(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("packages must list at least one package")
        for p in v:
            check_component(p) if "/" in p else check_package(p)
        return v


def _load(path: Path) -> list[AppEntry]:
    raw = load_yaml_file(path, "app table") or []  # bounded: a user's table is untrusted YAML
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of {{names, packages}} entries, got {type(raw).__name__}")
    entries = []
    for i, item in enumerate(raw):
        try:
            entries.append(AppEntry(**item))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: entry #{i} ({item!r}) is invalid: {exc}") from exc
    return entries


class AppTable:
    """Resolves what an agent calls an app to the packages to try, case-insensitively.

    ``extra`` maps more names to a package (or ``package/activity``); it takes
    precedence over the shipped table. A name that already looks like a package
    or component resolves to itself.
    """

    def __init__(
        self,
        extra: Optional[Mapping[str, Union[str, Sequence[str]]]] = None,
        *,
        path: Optional[Path] = None,
    ):
        self.entries: list[AppEntry] = []
        self.add(extra or {})
        self.entries.extend(_load(path or DEFAULT_TABLE))

    def add(self, extra: Mapping[str, Union[str, Sequence[str]]]) -> None:
        """More names (name -> package(s)); they take precedence over those already known."""
        added = []
        for name, target in extra.items():
            packages = (target,) if isinstance(target, str) else tuple(target)
            try:
                added.append(AppEntry(names=(name,), packages=packages))
            except ValueError as exc:
                raise ValueError(f"apps[{name!r}]={target!r} is invalid: {exc}") from exc
        self.entries[:0] = added

    def candidates(self, name: str) -> Optional[tuple[str, ...]]:
        """Packages/components to try for ``name``, or None if it is unknown."""
        key = (name or "").strip().lower()
        for entry in self.entries:
            if key in entry.names:
                return entry.packages
        raw = (name or "").strip()
        try:
            return ((check_component(raw),) if "/" in raw else (check_package(raw),))
        except ValueError:
            return None

    def names(self) -> list[str]:
        """The first (canonical) name of every known app."""
        return [e.names[0] for e in self.entries]
