"""Simulated apps, discovered from the modules of this package.

``APP_CLASSES`` is what a fresh SimDevice installs, in launcher order
(``App.order``, then label). Adding an app is adding a module here.
"""

from __future__ import annotations

import importlib
import pkgutil

from benchmark.apps.base import App, Route, UI


def _discover() -> list[type[App]]:
    found: dict[str, type[App]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, App) and obj is not App and obj.package and obj.__module__ == mod.__name__:
                found[obj.package] = obj
    return sorted(found.values(), key=lambda c: (c.order, c.label))


APP_CLASSES: list[type[App]] = _discover()

__all__ = ["APP_CLASSES", "App", "Route", "UI"]
