"""AnTrap's trigger policy as a schedule.

Per step, a trap fires with probability ``P_TRAP`` = 0.16, at most once per episode,
only within the first ``WINDOW_FRACTION`` = 80 % of the ORIGINAL step budget, and the
episode's budget is extended ×1.15 (:func:`extended_budget`) so the agent has room to
recover. All stochastic choices follow one seed (``ANTRAP_SEED`` = 42 in the paper).

Each trap's profile carries that timing, so ``perturb.make("trap_loop")`` alone is
already AnTrap-timed. :class:`TrapSchedule` is the mixture for AnTrap-style runs: per
episode it picks (seeded) which trap is armed and delegates every hook to it::

    schedule = TrapSchedule()                                  # all ten traps
    env = PerturbedDevice(SimDevice(), [schedule], seed=ANTRAP_SEED)
    run_episode(env, task, agent, budget=extended_budget(task.budget))

(the PerturbedDevice keeps the task's original budget, so the 80 % window and the
deadlock's ⌊T/4⌋ refer to T, while the loop runs 1.15 T steps).
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any, Iterable, Optional, Sequence

from pydantic import Field, model_validator

from perturb.base import Magnitude, Params, Perturbation
from perturb.device import PerturbationContext
from perturb.timing import Persistence, Timing
from ttir.core.types import Action, Observation

ANTRAP_SEED = 42
P_TRAP = 0.16
WINDOW_FRACTION = 0.8
MAX_TRAPS_PER_EPISODE = 1
BUDGET_FACTOR = 1.15
MAX_ATTEMPTS = 10  # episodes with no trap after this many attempts are not reported


def extended_budget(budget: int, factor: float = BUDGET_FACTOR) -> int:
    """The episode budget with AnTrap's recovery allowance (×1.15, rounded up)."""
    if budget < 1:
        raise ValueError(f"budget={budget} must be a positive number of steps")
    if factor < 1.0:
        raise ValueError(f"factor={factor} must be >= 1 (the budget is extended, never cut)")
    return int(math.ceil(round(budget * factor, 6)))


def attempt_seed(seed: int, attempt: int) -> int:
    """The perturbation seed of retry ``attempt`` (0 = the seed itself) for an episode
    in which no trap fired."""
    if attempt < 0:
        raise ValueError(f"attempt={attempt} must be >= 0")
    if attempt == 0:
        return seed
    return int(hashlib.sha256(f"antrap:{seed}:{attempt}".encode()).hexdigest(), 16) % (2**31)


def trap_events(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``trap_fired`` events of an event log (``PerturbedDevice.event_log()``)."""
    return [e for e in events if e.get("event") == "trap_fired"]


def antrap_names() -> list[str]:
    from perturb.registry import ANTRAP

    return list(ANTRAP)


class ScheduleMagnitude(Magnitude):
    traps: list[str] = Field(default_factory=antrap_names, min_length=1, description="Traps to choose from.")
    weights: Optional[list[float]] = Field(None, description="Relative choice weights (uniform when unset).")

    @model_validator(mode="after")
    def _ok(self) -> "ScheduleMagnitude":
        from perturb.registry import REGISTRY

        unknown = [t for t in self.traps if t not in REGISTRY or REGISTRY[t].layer is None]
        if unknown:
            raise ValueError(f"traps={unknown} are not AnTrap traps; expected names from: {', '.join(antrap_names())}")
        if self.weights is not None and (len(self.weights) != len(self.traps) or any(w < 0 for w in self.weights)
                                         or sum(self.weights) <= 0):
            raise ValueError(f"weights={self.weights} must be {len(self.traps)} non-negative numbers with a positive sum")
        return self


class TrapSchedule(Perturbation):
    """A mixture of traps: per episode one is chosen (seeded) and armed; it fires under
    its own timing (AnTrap: p = 0.16 per step, first 80 % of the budget, once).

    ``overrides`` apply to every member, e.g. ``{"probability": 1.0}`` or
    ``{"timing.trigger_step": 3}``."""

    component = "transition"
    magnitude_model = ScheduleMagnitude

    def __init__(self, traps: Optional[Sequence[str]] = None, *, weights: Optional[Sequence[float]] = None,
                 name: str = "antrap_schedule", overrides: Optional[dict[str, Any]] = None):
        from perturb.registry import make

        magnitude = ScheduleMagnitude(**({"traps": list(traps)} if traps is not None else {}),
                                      weights=list(weights) if weights is not None else None)
        super().__init__(name, Params.model_construct(magnitude=magnitude, timing=Timing(), persistence=Persistence()),
                         description="AnTrap trigger policy: one trap per episode, chosen by the seed.")
        self.overrides = dict(overrides or {})
        self.members: dict[str, Perturbation] = {t: make(t, **self.overrides) for t in magnitude.traps}
        self.active: Optional[Perturbation] = None

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["overrides"] = self.overrides
        return out

    def on_reset(self, device: Any, rng: random.Random, ctx: PerturbationContext) -> None:
        m = self.magnitude
        chosen = rng.choices(m.traps, weights=m.weights)[0]
        member = self.members[chosen]
        member.fired = 0
        member.rng = random.Random(f"{chosen}:{rng.getrandbits(64)}")
        self.active = member
        ctx.emit(self.name, "trap_selected", trap=chosen, layer=member.layer)
        member.on_reset(device, member.rng, ctx)

    def on_close(self, device: Any, ctx: PerturbationContext) -> None:
        if self.active is not None:
            self.active.on_close(device, ctx)

    def before_execute(self, action: Action, ctx: PerturbationContext) -> Optional[Action]:
        return self.active.before_execute(action, ctx) if self.active is not None else action

    def after_execute(self, ctx: PerturbationContext) -> None:
        if self.active is not None:
            self.active.after_execute(ctx)

    def transform(self, obs: Observation, ctx: PerturbationContext) -> Observation:
        return self.active.transform(obs, ctx) if self.active is not None else obs
