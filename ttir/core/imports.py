"""Resolve a ``package.module:attribute`` string from a config or spec to the object it names.

Used for a spec's own agents (``kind: python``) and for user-defined guard checks.
The module is imported with ``folder`` (the spec's or config's folder) and the current
directory on ``sys.path``, so a ``my_check.py`` beside the file needs no install.
Naming a factory runs that module, as ``python -m`` would.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any, Optional

from ttir.core.errors import ImportTargetError
from ttir.core.validation import short_repr

IMPORT_FORM = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
"""The form of an import string: ``package.module:attribute`` (dotted on both sides)."""

_IMPORTED: dict[tuple[str, Optional[str]], Any] = {}  # (string, folder) -> the callable it named


def import_callable(spec: str, folder: Optional[str] = None, *, what: str = "factory", expected: str = "",
                    error: type[ImportTargetError] = ImportTargetError) -> Any:
    """The callable ``spec`` (``package.module:attribute``) names; ``error`` (naming ``what``
    and, for the wrong kind of object, ``expected``) when it cannot be had."""
    key = (spec, folder)
    if key in _IMPORTED:
        return _IMPORTED[key]
    if not isinstance(spec, str) or not IMPORT_FORM.fullmatch(spec):
        raise error(f"{what}={short_repr(spec)} is not of the form 'package.module:function'")
    module_name, attr = spec.split(":")
    for where in (".", folder):  # the folder ends up first
        if where and str(Path(where).resolve()) not in [str(Path(p or ".").resolve()) for p in sys.path]:
            sys.path.insert(0, str(Path(where).resolve()))
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module may fail in any way while importing
        looked = f" (looked in {folder} and the current directory, then sys.path)" if folder else ""
        raise error(f"{what} {spec!r}: cannot import module {module_name!r}{looked}: "
                    f"{type(exc).__name__}: {exc}") from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise error(f"{what} {spec!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        tail = f"; expected {expected}" if expected else ""
        raise error(f"{what} {spec!r} is a {type(obj).__name__}, not a function{tail}")
    _IMPORTED[key] = obj
    return obj


__all__ = ["IMPORT_FORM", "import_callable"]
