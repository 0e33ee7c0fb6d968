"""Helpers over a trajectory's step log: who acted, what was done, repeated attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from experiments.metrics.screens import steps_same_screen
from experiments.records import ActionView, TrajectoryStep
from ttir.core.types import ENDING_TYPES, TARGETED_TYPES

Step = TrajectoryStep
STUCK_MIN_REPEATS = 3
PASSIVE = frozenset({"wait"})  # ignored between repeats: retry, wait, retry is still retrying


def action_of(step: Step) -> Optional[ActionView]:
    """The step's action (None when it has none)."""
    return step.action


def is_recovery_step(step: Step) -> bool:
    """The step's action came from a guard recovery session (not from the agent)."""
    return any(g.event == "recovery_step" for g in step.guard_events)


def format_action(action: Optional[ActionView]) -> str:
    fields = action.fields() if action is not None else {}
    body = ", ".join(f"{k}={v!r}" for k, v in fields.items() if k != "action_type" and v is not None)
    return f"{action.action_type if action is not None else None}({body})"


def repeat_runs(steps: list[Step], episode_dir: Optional[Path] = None) -> list[list[int]]:
    """Runs of the agent issuing the identical action (type, coordinates, text …) again and
    again while the screen stays the same between attempts. ``wait`` steps in between are
    skipped; a guard recovery step, a different action or a changed screen ends a run.
    Each run is the list of its step indices (length 1 = no repeat)."""
    runs: list[list[int]] = []
    current: list[int] = []
    for i, st in enumerate(steps):
        a = action_of(st)
        if st.action_type in PASSIVE and not is_recovery_step(st):
            continue
        if a is None or a.action_type in ENDING_TYPES or is_recovery_step(st):
            if current:
                runs.append(current)
            current = []
            continue
        if current and action_of(steps[current[-1]]) == a and steps_same_screen(steps[current[-1]], st, episode_dir):
            current.append(i)
        else:
            if current:
                runs.append(current)
            current = [i]
    if current:
        runs.append(current)
    return runs


def first_stuck_run(steps: list[Step], episode_dir: Optional[Path] = None,
                    min_repeats: int = STUCK_MIN_REPEATS) -> Optional[list[int]]:
    return next((r for r in repeat_runs(steps, episode_dir) if len(r) >= min_repeats), None)


def stuck_before(steps: list[Step], step: int, episode_dir: Optional[Path] = None,
                 min_repeats: int = STUCK_MIN_REPEATS, runs: Optional[list[list[int]]] = None) -> Optional[list[int]]:
    """A run of >= ``min_repeats`` identical attempts still going on right before ``step``
    (``runs``: ``repeat_runs(steps)``, passed in to compute it once per episode)."""
    runs = repeat_runs(steps, episode_dir) if runs is None else runs
    active = [i for i in range(step) if steps[i].action_type not in PASSIVE or is_recovery_step(steps[i])]
    if not active:
        return None
    last = active[-1]
    run = next((r for r in runs if last in r), None)
    if run is None:
        return None
    before = [i for i in run if i < step]
    return before if len(before) >= min_repeats else None


def no_effect(steps: list[Step], step: int, episode_dir: Optional[Path] = None) -> Optional[str]:
    """Why the action before ``step`` evidently had no effect (the device refused it, or a
    tap / typing left the screen unchanged), else None."""
    if step < 1 or step > len(steps):
        return None
    prev = steps[step - 1]
    if prev.action_error:
        return f"the device refused the action of step {step - 1}"
    if step < len(steps) and prev.action_type in TARGETED_TYPES and \
            steps_same_screen(prev, steps[step], episode_dir):
        return f"{format_action(action_of(prev))} at step {step - 1} left the screen unchanged"
    return None
