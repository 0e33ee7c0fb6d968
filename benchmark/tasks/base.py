"""The task interface: seeded parameters, setup, a state-based verifier and a
semantic reference solution. Named and worded like AndroidWorld's tasks."""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Any, ClassVar

from benchmark.plan import PlanStep

if TYPE_CHECKING:  # pragma: no cover
    from benchmark.sim.device import SimDevice

TASKS: dict[str, type["Task"]] = {}
"""Every task class by name, filled as the task modules are imported (``import benchmark.tasks``)."""


def instance_seed(suite_seed: int, name: str, i: int) -> int:
    """AndroidWorld's instance seed: sha256 of "{suite_seed}_{name}_{i}"."""
    digest = hashlib.sha256(f"{suite_seed}_{name}_{i}".encode()).hexdigest()
    return int(digest, 16) % (2**32)


class Task:
    """Base class. Subclasses set the class attributes and implement
    ``generate_params``, ``setup``, ``verify`` and ``reference_solution``.

    ``verify`` reads app / device STATE only, never the screen or the agent's claim.
    """

    template: ClassVar[str] = ""
    apps: ClassVar[tuple[str, ...]] = ()  # packages the task uses
    reference_steps: ClassVar[int] = 5  # the human reference length
    tags: ClassVar[tuple[str, ...]] = ()
    abstract: ClassVar[bool] = False
    supports_real_device: ClassVar[bool] = False  # setup/verify need only the Device protocol

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("abstract", False):
            if cls.__name__ in TASKS and TASKS[cls.__name__] is not cls:
                raise ValueError(f"task name {cls.__name__!r} is registered twice")
            TASKS[cls.__name__] = cls

    def __init__(self, params: dict[str, Any], seed: int = 0):
        self.params = dict(params)
        self.seed = seed

    # -- identity ----------------------------------------------------------------------
    @classmethod
    def task_name(cls) -> str:
        """The task's name: its class name (what ``make_task`` and specs use)."""
        return cls.__name__

    @property
    def name(self) -> str:
        """The task's name: its class name."""
        return type(self).__name__

    @property
    def goal(self) -> str:
        """The instruction for the agent: ``template`` filled with the parameters."""
        return self.template.format(**self.params)

    @classmethod
    def create(cls, seed: int = 0, i: int = 0) -> "Task":
        """Instance ``i`` of this task for the suite seed ``seed`` (AndroidWorld's seeding).

        Args:
            seed: the suite seed.
            i: the instance number.

        Returns:
            The task with parameters drawn from ``random.Random(instance_seed(seed, name, i))``.
        """
        s = instance_seed(seed, cls.__name__, i)
        return cls(cls.generate_params(random.Random(s)), seed=s)

    def describe(self) -> dict[str, Any]:
        """The task as a JSON-serialisable dict: name, goal, params, seed, apps, reference steps."""
        return {"name": self.name, "goal": self.goal, "params": self.params, "seed": self.seed,
                "apps": list(self.apps), "reference_steps": self.reference_steps}

    def __repr__(self) -> str:
        return f"{self.name}(goal={self.goal!r})"

    # -- to implement -------------------------------------------------------------------
    @classmethod
    def generate_params(cls, rng: random.Random) -> dict[str, Any]:
        """Draw the task's parameters (names, numbers, settings to reach) from ``rng``.

        Args:
            rng: the seeded generator; every random choice comes from it.

        Returns:
            The parameters ``template`` and ``verify`` use.
        """
        return {}

    def setup(self, device: "SimDevice") -> None:
        """Seed app data; the device starts on the home screen."""

    def verify(self, device: "SimDevice") -> bool:
        """Whether the task is done, read from the device's state (never the screen or the agent's claim).

        Args:
            device: the device at the end of the episode (unwrapped from any perturbation layer).
        """
        raise NotImplementedError

    def reference_solution(self) -> list[PlanStep]:
        """The task's solution as semantic steps (tap the control called X, type Y …) that a planner grounds on screen."""
        raise NotImplementedError

    @property
    def budget(self) -> int:
        """The paper's step budget: 20 x the human reference length."""
        return 20 * self.reference_steps
