"""The ten AnTrap trap operators, one module per STAR layer (state, thinking, action,
round), and the AnTrap trigger policy (schedule). Build them by name through the
registry: ``perturb.make("trap_grounding_error")``; profiles in
``perturb/profiles/antrap.yaml``."""

from perturb.traps.action import GroundingError, IntentDeviation, TypeMismatch
from perturb.traps.base import Trap
from perturb.traps.round import ContextDisruption, Loop, StateDeadlock
from perturb.traps.schedule import (
    ANTRAP_SEED,
    BUDGET_FACTOR,
    MAX_ATTEMPTS,
    P_TRAP,
    WINDOW_FRACTION,
    TrapSchedule,
    attempt_seed,
    extended_budget,
    trap_events,
)
from perturb.traps.state import ExternalInterruption, VisualObscuration
from perturb.traps.thinking import TemporalConflict, VisualHallucination

__all__ = [
    "ANTRAP_SEED",
    "BUDGET_FACTOR",
    "ContextDisruption",
    "ExternalInterruption",
    "GroundingError",
    "IntentDeviation",
    "Loop",
    "MAX_ATTEMPTS",
    "P_TRAP",
    "StateDeadlock",
    "TemporalConflict",
    "Trap",
    "TrapSchedule",
    "TypeMismatch",
    "VisualHallucination",
    "VisualObscuration",
    "WINDOW_FRACTION",
    "attempt_seed",
    "extended_budget",
    "trap_events",
]
