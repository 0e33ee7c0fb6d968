"""Tasks: AndroidWorld-style goals with seeded parameters and state-based verifiers.

Every module of this package is imported, which registers its Task subclasses;
adding tasks is adding a module here."""

from __future__ import annotations

import importlib
import pkgutil

from benchmark.tasks.base import TASKS, Task, instance_seed
from ttir.core.errors import resolve_name

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_") and _info.name != "base":
        importlib.import_module(f"{__name__}.{_info.name}")


def make_task(name: str, seed: int = 0, i: int = 0) -> Task:
    """Instantiate task ``name`` (exact, or the one task of that name ignoring case) with
    AndroidWorld's instance seeding.

    Args:
        name: the task's name (any case), e.g. ``"SystemWifiTurnOn"`` (:func:`task_names` lists them).
        seed: the suite seed.
        i: the instance number.

    Returns:
        The task, its parameters drawn from the seed.

    Raises:
        ttir.core.errors.UnknownNameError: no task is called ``name`` (the message suggests the
            closest names; also a ``KeyError``).
    """
    return TASKS[resolve_name("task", name, TASKS, see="ttir tasks")].create(seed=seed, i=i)


def task_names() -> list[str]:
    """Every registered task's name, sorted."""
    return sorted(TASKS)


__all__ = ["TASKS", "Task", "instance_seed", "make_task", "task_names"]
