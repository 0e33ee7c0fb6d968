"""Queries over one episode's perturbation event log (the ground truth of what was injected).

Step convention of the log (``perturb.device``): ``ctx.step`` counts the actions issued
so far, so an event with step ``s`` either altered the agent's action of trajectory
step ``s`` (``before_execute``: dropped, delayed, offset, remapped, replaced, blocked
…, and taps routed to an overlay: overlay_dismissed, overlay_engaged …) or shaped the
observation the agent decides on at step ``s`` (``after_execute`` / transforms:
overlay_shown, reset_home, frame_stale …).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional

from experiments.records import EventLike, EventRecord, as_event

Event = EventRecord

# The agent engaged with injected content (tapped an engage-role button, moved a multi-page
# flow forward by itself, typed into or chose inside an overlay).
ENGAGEMENT_EVENTS = frozenset({"overlay_engaged", "overlay_text_entered", "overlay_input"})
# The agent's action did not do what it asked for, silently.
ACTION_FAILURE_EVENTS = frozenset({"dropped", "delayed", "delayed_lost", "blocked_action", "deadlock_step", "offset",
                                   "remapped", "replaced", "hang_persists"})
# What the agent saw was transformed (AnTrap S/T layers); active for the trap's duration.
STATE_TRANSFORM_EVENTS = frozenset({"frame_stale", "labels_swapped", "obscured"})
# The task context was taken away from the agent.
CONTEXT_LOSS_EVENTS = frozenset({"reset_home", "context_disrupted", "loop_back", "went_home", "app_launched",
                                 "url_opened", "app_closed"})
# An interruption ended (by the agent, the guard, or by itself).
INTERRUPTION_ENDED_EVENTS = frozenset({"overlay_dismissed", "overlay_auto_dismissed", "overlay_closed",
                                       "hang_recovered"})
OPEN_EVENTS = frozenset({"overlay_shown", "app_hang"})
# closing event -> steps to subtract: events emitted in ``tick`` (after the step counter moved)
# mean the overlay was already gone from the observation of that step.
CLOSE_EVENTS = {"overlay_dismissed": 0, "overlay_closed": 0, "app_closed": 0, "hang_recovered": 1,
                "overlay_auto_dismissed": 1, "loading_finished": 1, "frozen_finished": 1, "skeleton_cleared": 1,
                "finished": 1}
INTERRUPTING_STYLES = frozenset({"dialog", "sheet", "bottom_sheet", "banner", "fullscreen", "interstitial", "anr"})


def is_engagement(e: EventLike) -> bool:
    e = as_event(e)
    if e.event in ENGAGEMENT_EVENTS:
        return True
    return e.event == "page_advanced" and not e.details.get("auto", False)


@dataclass
class OverlaySpan:
    """An overlay on screen for the observations of steps ``start`` … ``end`` (inclusive)."""

    key: str
    start: int
    end: float  # math.inf while never closed
    style: Optional[str] = None
    title: Optional[str] = None

    def covers(self, step: int) -> bool:
        return self.start <= step <= self.end


def _overlay_key(e: Event) -> str:
    d = e.details
    return str(d.get("overlay") or d.get("package") or e.perturbation)


class EventLog:
    """An episode's event log, in step order (``events``: the trajectory's ``events``, typed or plain dicts)."""

    def __init__(self, events: Optional[Iterable[EventLike]]):
        self.events: list[Event] = sorted((as_event(e) for e in events or []), key=lambda e: e.step)

    def of(self, kinds: Iterable[str], lo: float = -math.inf, hi: float = math.inf) -> list[Event]:
        ks = set(kinds)
        return [e for e in self.events if e.event in ks and lo <= e.step <= hi]

    def engagements(self, lo: float = -math.inf, hi: float = math.inf) -> list[Event]:
        return [e for e in self.events if is_engagement(e) and lo <= e.step <= hi]

    def overlay_spans(self) -> list[OverlaySpan]:
        open_: dict[str, OverlaySpan] = {}
        spans: list[OverlaySpan] = []
        for e in self.events:
            kind, step = e.event, e.step
            if kind in OPEN_EVENTS:
                key = _overlay_key(e)
                if key not in open_:
                    d = e.details
                    span = OverlaySpan(key=key, start=step, end=math.inf,
                                       style=d.get("style") or ("anr" if kind == "app_hang" else None),
                                       title=d.get("title") or d.get("text"))
                    open_[key] = span
                    spans.append(span)
            elif kind in CLOSE_EVENTS:
                span = open_.pop(_overlay_key(e), None)
                if span is not None:
                    span.end = max(span.start, step - CLOSE_EVENTS[kind])
        return spans

    def overlay_at(self, step: int) -> Optional[OverlaySpan]:
        return next((s for s in self.overlay_spans() if s.covers(step)), None)

    def state_perturbation_at(self, step: int) -> Optional[str]:
        """What transformed the screen at ``step``: a setting applied by a state
        perturbation (it lasts until restored), or an AnTrap S/T trap inside its window."""
        applied = [e for e in self.events if e.event == "applied" and e.step <= step]
        restored = [e for e in self.events if e.event == "restored" and e.step <= step]
        if applied and (not restored or restored[-1].step < applied[-1].step):
            return f"{applied[-1].perturbation} applied at step {applied[-1].step}"
        for e in self.events:
            if e.event in STATE_TRANSFORM_EVENTS:
                fired = next((f for f in self.events if f.event == "trap_fired"
                              and f.perturbation == e.perturbation and f.step <= e.step), e)
                duration = int(fired.details.get("duration_steps") or 1)
                start = fired.step
                if start <= step <= max(e.step, start + duration - 1):
                    return f"{e.perturbation}: {e.event} at step {e.step}"
        return None
