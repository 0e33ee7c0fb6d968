"""Tasks: AndroidWorld-style goals with seeded parameters and state-based verifiers."""

from __future__ import annotations

from benchmark.tasks import contacts, system  # noqa: F401  (registers the tasks)
from benchmark.tasks.base import TASKS, Task, instance_seed


def make_task(name: str, seed: int = 0, i: int = 0) -> Task:
    """Instantiate task ``name`` with AndroidWorld's instance seeding."""
    if name not in TASKS:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}")
    return TASKS[name].create(seed=seed, i=i)


def task_names() -> list[str]:
    return sorted(TASKS)


__all__ = ["TASKS", "Task", "instance_seed", "make_task", "task_names"]
