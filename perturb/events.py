"""The perturbation event log's vocabulary, declared once: every ``event`` name a
perturbation writes (``PerturbedDevice.event_log()``), and the groups the firing test, the
metrics and the tuning truth read them by.

An event is ``{"step", "perturbation", "event", "details"}``; the names are
:data:`PerturbationEvent`. The groups are tuples of those names, so a name misspelt in a group
fails the vocabulary test (``tests/perturb/test_perturb_events.py``), and a perturbation that
emits a name not declared here raises at once.
"""

from __future__ import annotations

from typing import Literal, get_args

PerturbationEvent = Literal[
    # state: a setting applied and put back
    "applied", "restored",
    # action: what happened to the agent's action
    "dropped", "delayed", "delayed_applied", "delayed_lost", "offset", "remapped", "replaced", "blocked_action",
    # overlays: shown, used, gone
    "overlay_shown", "overlay_button", "overlay_input", "overlay_text_entered", "overlay_engaged",
    "overlay_dismissed", "overlay_auto_dismissed", "overlay_closed", "page_advanced", "page_back",
    # screens that end by themselves (loading, frozen, skeleton, a generic one)
    "finished", "loading_finished", "frozen_finished", "skeleton_cleared",
    # app hangs
    "app_hang", "hang_wait", "hang_persists", "hang_recovered", "hang_restarted",
    # transitions: the agent taken elsewhere
    "app_closed", "app_launched", "url_opened", "went_home", "reset_home", "context_disrupted",
    # AnTrap traps
    "trap_selected", "trap_fired", "frame_stale", "labels_swapped", "obscured", "loop_back", "loop_ended",
    "deadlock_step", "deadlock_released",
]
PERTURBATION_EVENTS: tuple[str, ...] = get_args(PerturbationEvent)

# a choice or a clean-up, not an effect on the agent's screen or actions
BOOKKEEPING_EVENTS: tuple[str, ...] = ("trap_selected", "restored")


def check_event(event: str) -> str:
    """``event`` itself, when it is a declared name.

    Args:
        event: the name a perturbation is about to write.

    Returns:
        ``event``.

    Raises:
        ValueError: the name is not in :data:`PERTURBATION_EVENTS` (declare it there, and in the
            groups that should count it).
    """
    if event not in PERTURBATION_EVENTS:
        raise ValueError(f"perturbation event {event!r} is not declared in perturb/events.py "
                         "(PerturbationEvent); declare it there and in the groups that count it")
    return event


__all__ = ["BOOKKEEPING_EVENTS", "PERTURBATION_EVENTS", "PerturbationEvent", "check_event"]
