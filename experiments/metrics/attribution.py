"""Automatic attribution of failed episodes to AndroidReality's four error categories (§4.3).

The paper tagged failures by hand from screenshots, action logs and reasoning traces.
Here every failed episode (``success`` false) gets exactly one category from its
trajectory and its perturbation event log, by these rules:

③ **off-task engagement** — the event log shows the agent engaging with injected
  content (``overlay_engaged``; ``page_advanced`` not caused by a timer;
  ``overlay_text_entered``; ``overlay_input``), and the episode then failed.
① **stale-coordinate stuck** — the agent issues the identical action (same type,
  coordinates, text …) ``steps.STUCK_MIN_REPEATS`` (3) or more times in a row while the
  screen stays the same between attempts (``steps.repeat_runs``: ``wait`` steps in
  between are skipped, a guard recovery step or a changed screen ends the run; screens
  are compared by ``screens.steps_same_screen``: the harness's ground-truth screen key
  when recorded, else stored screenshots, else the observation summary).
② **silent action failure** — the agent's action at step s was silently altered by a
  perturbation (``dropped``, ``delayed``, ``delayed_lost``, ``deadlock_step``,
  ``offset``, ``remapped``, ``replaced``, or ``blocked_action`` by an invisible blocker:
  a frozen frame, a spinner, a skeleton, a hung app whose dialog was waited away —
  ``where`` screen / placeholder / app_not_responding),
  or a tap swallowed by an overlay button the agent did not aim at (``aimed_at``: its
  summary / thought names neither the button's label nor an interruption), and the
  agent's next step (``wait`` skipped; not a guard recovery step) issues a
  *different* action: it did not notice and continued (retrying the same action is noticing).
④ **goal drift after distraction** — an interruption ended at step s (an overlay was
  dismissed on purpose — see ``aimed_at`` —, auto-dismissed or closed, an app hang
  recovered) or the task context was taken away (``reset_home``, ``context_disrupted``,
  ``loop_back``, ``went_home``),
  and afterwards the agent claimed completion (termination ``done`` on a failed
  task), restarted (``open_app`` / ``navigate_home`` after s) or wandered until the
  budget ran out — with no engagement.
**other** — none of these (e.g. a plain agent mistake on a clean run), or the episode raised.

Order: ③ first (engagement is direct evidence), then whichever of ① and ② starts
earlier (a silent failure often precedes the retries it causes), then ④. Every matched
rule is kept in ``matches`` with its evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel

from experiments.metrics.episodes import Record, RunData, perturbation_label, succeeded, termination_of
from experiments.metrics.eventlog import CONTEXT_LOSS_EVENTS, INTERRUPTION_ENDED_EVENTS, Event, EventLog
from experiments.metrics.steps import Step, action_of, first_stuck_run, format_action, is_recovery_step
from experiments.records import EpisodeLike, Trajectory, TrajectoryLike, as_episode, as_trajectory

Category = Literal["off_task_engagement", "stale_coordinate_stuck", "silent_action_failure", "goal_drift", "other"]
CATEGORY_LABELS: dict[str, str] = {
    "stale_coordinate_stuck": "① stale-coordinate stuck",
    "silent_action_failure": "② silent action failure",
    "off_task_engagement": "③ off-task engagement",
    "goal_drift": "④ goal drift after distraction",
    "other": "other",
}
CATEGORY_ORDER = ("stale_coordinate_stuck", "silent_action_failure", "off_task_engagement", "goal_drift", "other")
SILENT_EVENTS = frozenset({"dropped", "delayed", "delayed_lost", "deadlock_step", "offset", "remapped", "replaced"})
INVISIBLE_BLOCKERS = frozenset({"screen", "placeholder", "app_not_responding"})
_DRIFT_STARTS = INTERRUPTION_ENDED_EVENTS | (CONTEXT_LOSS_EVENTS - {"app_launched", "url_opened", "app_closed"})


class Attribution(BaseModel):
    id: str
    agent: str
    agent_kind: str
    guard: str
    perturbation: str
    component: str
    category: Category
    step: Optional[int] = None
    reason: str
    matches: dict[str, str] = {}
    termination: str = ""  # how the failed episode ended: done / infeasible / budget / error


def find_stuck(steps: list[Step], episode_dir: Optional[Path] = None) -> Optional[tuple[int, int, str]]:
    """(first step, attempts, action) of the first run of identical attempts on an unchanging screen."""
    run = first_stuck_run(steps, episode_dir)
    if run is None:
        return None
    return run[0], len(run), format_action(action_of(steps[run[0]]))


def aimed_at(step: Step, label: Optional[str]) -> bool:
    """Did the agent mean to press this overlay button? Its summary or thought names the label,
    or speaks of the interruption (the reference agents and the guard say so when they dismiss)."""
    said = f"{step.agent_step.summary or ''} {step.agent_step.thought or ''}".lower()
    if is_recovery_step(step):
        return True
    return bool(label and label.lower() in said) or any(w in said for w in ("dismiss", "interruption", "pop-up",
                                                                              "popup", "notification", "dialog"))


def _silent(e: Event, steps: list[Step]) -> Optional[str]:
    """Why the event silently defeated the agent's action of its step, else None."""
    kind, s = e.event, e.step
    d = e.details
    if kind in SILENT_EVENTS:
        return kind
    if kind == "blocked_action" and d.get("where") in INVISIBLE_BLOCKERS:
        return f"blocked_action by an invisible blocker ({d.get('where')})"
    if kind in ("overlay_dismissed", "overlay_button") and d.get("via", "button") == "button" and s < len(steps) \
            and not aimed_at(steps[s], d.get("label")):
        return f"absorbed by an overlay's {d.get('label')!r} button the agent did not aim at"
    return None


def find_silent_failure(steps: list[Step], log: EventLog) -> Optional[tuple[int, str]]:
    for e in log.events:
        s = e.step
        why = _silent(e, steps)
        if why is None or s >= len(steps) or is_recovery_step(steps[s]):
            continue
        nxt = next((t for t in steps[s + 1:] if t.action_type != "wait" or is_recovery_step(t)), None)
        if nxt is None or is_recovery_step(nxt):
            continue  # the episode ended, or the guard took over
        now, then = action_of(steps[s]), action_of(nxt)
        if now and then and now != then:
            return s, (f"{e.perturbation} at step {s}: {why} ({format_action(now)}); the agent went on with "
                       f"{format_action(then)} at step {nxt.index}")
    return None


def find_drift(rec: Record, traj: Trajectory, steps: list[Step], log: EventLog) -> Optional[tuple[int, str]]:
    starts = [e for e in log.of(_DRIFT_STARTS) if _deliberate(e, steps)]
    if not starts:
        return None
    e = starts[0]
    s = e.step
    what = f"{e.perturbation}: {e.event} at step {s}"
    termination = termination_of(rec)
    if termination == "done":
        return s, f"{what}; then the agent claimed completion of an unfinished task"
    restart = next((st for st in steps[s + 1:] if st.action_type in ("open_app", "navigate_home")
                    and not is_recovery_step(st)), None)
    if restart is not None:
        how = f"{format_action(action_of(restart))} at step {restart.index}"
        return s, f"{what}; then the agent restarted ({how})"
    return s, f"{what}; then the agent wandered until {termination}"


def _deliberate(e: Event, steps: list[Step]) -> bool:
    """A dismissal by a button counts only when the agent (or the guard) aimed at it; an accidental
    one is a silent failure of the action it swallowed."""
    d = e.details
    s = e.step
    if e.event == "overlay_dismissed" and d.get("via", "button") == "button" and s < len(steps):
        return aimed_at(steps[s], d.get("label"))
    return True


def attribute(rec: EpisodeLike, traj: Optional[TrajectoryLike], episode_dir: Optional[Path] = None) -> Attribution:
    """The category of one failed episode (see the module docstring)."""
    rec, traj = as_episode(rec), as_trajectory(traj)
    base = dict(id=rec.id, agent=rec.agent, agent_kind=rec.agent_kind, guard=rec.guard,
                perturbation=perturbation_label(rec), component=rec.component_label, termination=termination_of(rec))
    if succeeded(rec):
        raise ValueError(f"record {rec.id!r}: success=True; only failed episodes are attributed")
    if rec.status == "error" or traj is None:
        why = "the episode raised" if rec.status == "error" else "no trajectory was stored"
        return Attribution(**base, category="other", reason=why)
    steps = traj.trajectory
    log = EventLog(traj.events)
    matches: dict[str, str] = {}
    onset: dict[str, int] = {}
    eng = log.engagements()
    if eng:
        e = eng[0]
        d = e.details
        onset["off_task_engagement"] = e.step
        matches["off_task_engagement"] = (f"{e.perturbation}: {e.event} at step {e.step}"
                                          f" ({d.get('label') or d.get('to_page') or d.get('field') or ''} on "
                                          f"{d.get('title') or d.get('overlay')!r}); {len(eng)} engagement event(s)")
    stuck = find_stuck(steps, episode_dir)
    if stuck:
        onset["stale_coordinate_stuck"] = stuck[0]
        matches["stale_coordinate_stuck"] = (f"{stuck[2]} issued {stuck[1]} times in a row from step {stuck[0]} "
                                             "(waits in between not counted) with no screen change")
    silent = find_silent_failure(steps, log)
    if silent:
        onset["silent_action_failure"], matches["silent_action_failure"] = silent
    drift = find_drift(rec, traj, steps, log) if not eng else None
    if drift:
        onset["goal_drift"], matches["goal_drift"] = drift
    if "off_task_engagement" in matches:
        cat = "off_task_engagement"
    elif "stale_coordinate_stuck" in matches or "silent_action_failure" in matches:
        cands = [c for c in ("silent_action_failure", "stale_coordinate_stuck") if c in matches]
        cat = min(cands, key=lambda c: onset[c])
    elif "goal_drift" in matches:
        cat = "goal_drift"
    else:
        return Attribution(**base, category="other", reason=_other_reason(rec, traj), matches=matches)
    return Attribution(**base, category=cat, step=onset[cat], reason=matches[cat], matches=matches)


def _other_reason(rec: Record, traj: Trajectory) -> str:
    termination = termination_of(rec)
    n = len(traj.events)
    return f"no rule matched (termination {termination}, {n} perturbation event(s))"


def attribute_run(run: RunData) -> list[Attribution]:
    out = []
    for rec in run.records:
        if succeeded(rec):
            continue
        out.append(attribute(rec, run.trajectory(rec), run.episode_dir(rec) if run.root else None))
    return out
