"""Bad input gets a clear error: the key, the value and what was expected.

Shared by every YAML / JSON input that pydantic validates (guard config, experiment
specs, tuning datasets, model replies)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

import yaml
from pydantic import ValidationError


def error_lines(exc: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem: ``[prefix: ]key.path: message (got value)``."""
    head = f"{prefix}: " if prefix else ""
    return [f"{head}{'.'.join(str(x) for x in e['loc']) or '(root)'}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()]


def load_yaml_mapping(path: Union[str, Path], what: str) -> dict[str, Any]:
    """The top-level mapping of a YAML file (``what`` names the file's role in errors)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} file {p} does not exist")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{p}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return data
