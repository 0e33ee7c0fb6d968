"""Whether, and when, a perturbation really fired in an episode, read from its event log.

A perturbed episode whose perturbation never took effect (the agent finished before the
trigger step, no action was drawn for a drop) is a clean run under another name; the
metrics leave such episodes out of the perturbed figures and list them as "not reached".
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional

from perturb.events import BOOKKEEPING_EVENTS


def is_effect(event: Mapping[str, Any]) -> bool:
    return event.get("event") not in BOOKKEEPING_EVENTS and event.get("perturbation") != "device"


def first_effect_step(events: Iterable[Mapping[str, Any]]) -> Optional[int]:
    """The step of the first event in which a perturbation took effect; None when none did."""
    steps = [int(e.get("step", 0)) for e in events if is_effect(e)]
    return min(steps) if steps else None


def fired_from_counts(counts: Mapping[str, int]) -> bool:
    """The same test over an episode record's event counts (records that predate ``fired``)."""
    return any(n for kind, n in counts.items() if kind not in BOOKKEEPING_EVENTS)
