"""The first error of a failed episode (AndroidFlux §3, §4.1.1, §C.7), placed from the run's records.

The first error is the earliest agent step that fails to advance the task, unaffected by an
earlier error. Its class follows AndroidFlux's taxonomy, applied in the fixed priority
stagnation → direction → execution when several rules match the same step:

- **stagnation** — established repetition without visible progress: the same action issued
  again on an unchanged screen (``steps.repeat_runs``, 3+ attempts; the first error is the first
  *repeat*: a first unsuccessful attempt is not stagnation), a two-step oscillation (A, B, A, B on
  the same two screens: the error is where the cycle starts again), or 3+ waits in a row on an
  unchanged screen (the second wait);
- **direction** — an action that executed as intended but moved away from the goal: engaging
  with injected content (the event log's engagement events at an agent step), starting over
  from the home screen after an interruption ended (``navigate_home``), or claiming completion
  of a task the verifier rejects (the claim itself; an error that ends the episode);
- **execution** — the intended action realised incorrectly: silently defeated by a perturbation
  while the agent went on with a different action (``attribution.find_silent_failure``), or (runs
  with ground truth) a touch that missed the control its summary names.

Steps of the guard's recovery sessions are never first errors. Precision over recall: a failed
episode no rule places (or one that raised, or has no trajectory) is left out and counted with
its reason. ttir's own category (``attribution.attribute``) is kept beside the class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional, get_args

from pydantic import BaseModel

from experiments.metrics.attribution import attribute, find_silent_failure
from experiments.metrics.episodes import succeeded, termination_of
from experiments.metrics.eventlog import INTERRUPTION_ENDED_EVENTS, CONTEXT_LOSS_EVENTS, EventLog, is_engagement
from experiments.metrics.screens import steps_same_screen
from experiments.metrics.steps import Step, action_of, format_action, is_recovery_step, repeat_runs
from experiments.records import EpisodeLike, TrajectoryLike, as_episode, as_trajectory

ErrorClass = Literal["stagnation", "direction", "execution"]
ERROR_CLASSES: tuple[str, ...] = get_args(ErrorClass)  # in the priority order
STAGNATION_REPEATS = 3  # identical attempts (or waits) on one screen that establish a repetition
ENDING = ("status",)


class FirstError(BaseModel):
    """The first error of one failed episode (``placed``), or why none was placed."""

    id: str
    task: str
    perturbation: str
    agent: str
    guard: str
    seed: int
    placed: bool
    step: Optional[int] = None  # the trajectory index of the erroneous action
    error_class: Optional[ErrorClass] = None
    reason: str = ""
    ends_episode: bool = False  # the error is the episode's last action (a completion claim)
    ttir_category: str = "other"  # experiments.metrics.attribution's category of the episode
    candidates: dict[str, int] = {}  # every class that matched, with its earliest step


def _agent_step(steps: list[Step], i: int) -> bool:
    return 0 <= i < len(steps) and not is_recovery_step(steps[i]) and action_of(steps[i]) is not None


def find_stagnation(steps: list[Step], episode_dir: Optional[Path] = None) -> Optional[tuple[int, str]]:
    """(step, evidence) of the earliest established repetition, oscillation or waiting."""
    found: list[tuple[int, str]] = []
    for run in repeat_runs(steps, episode_dir):
        if len(run) >= STAGNATION_REPEATS:
            found.append((run[1], f"{format_action(action_of(steps[run[0]]))} issued {len(run)} times from step "
                                  f"{run[0]} with no screen change"))
            break
    active = [i for i, s in enumerate(steps) if _agent_step(steps, i) and s.action_type not in ENDING]
    for k in range(len(active) - 3):
        a, b, c, d = (active[k + j] for j in range(4))
        if (action_of(steps[a]) == action_of(steps[c]) and action_of(steps[b]) == action_of(steps[d])
                and action_of(steps[a]) != action_of(steps[b])
                and steps_same_screen(steps[a], steps[c], episode_dir)
                and steps_same_screen(steps[b], steps[d], episode_dir)):
            found.append((c, f"{format_action(action_of(steps[a]))} and {format_action(action_of(steps[b]))} "
                             f"alternate from step {a} between the same two screens"))
            break
    waits: list[int] = []
    for i, s in enumerate(steps):
        if s.action_type == "wait" and not is_recovery_step(s) and (
                not waits or (waits[-1] == i - 1 and steps_same_screen(steps[waits[-1]], s, episode_dir))):
            waits.append(i)
            if len(waits) >= STAGNATION_REPEATS:
                found.append((waits[1], f"{len(waits)}+ waits in a row from step {waits[0]} with no screen change"))
                break
        else:
            waits = [i] if s.action_type == "wait" and not is_recovery_step(s) else []
    return min(found) if found else None


def find_direction(rec: EpisodeLike, steps: list[Step], log: EventLog) -> Optional[tuple[int, str, bool]]:
    """(step, evidence, ends_episode) of the earliest move away from the goal."""
    rec = as_episode(rec)
    found: list[tuple[int, str, bool]] = []
    for e in log.events:
        if is_engagement(e) and _agent_step(steps, e.step) and not aimed_at_dismissal(steps[e.step]):
            d = e.details
            found.append((e.step, f"{e.perturbation}: {e.event} at step {e.step} "
                                  f"({d.get('label') or d.get('to_page') or d.get('field') or ''})", False))
            break
    ended = [e.step for e in log.of(INTERRUPTION_ENDED_EVENTS | CONTEXT_LOSS_EVENTS)]
    if ended:
        for i in range(min(ended) + 1, len(steps)):
            if steps[i].action_type == "navigate_home" and _agent_step(steps, i):
                found.append((i, f"started over from the home screen at step {i} after an interruption "
                                 f"ended at step {min(ended)}", False))
                break
    last = len(steps) - 1
    if (termination_of(rec) == "done" and not rec.verified and last >= 0 and steps[last].action_type == "status"
            and _agent_step(steps, last)):
        found.append((last, f"claimed completion at step {last}; the verifier rejects the final state", True))
    return min(found, key=lambda f: f[0]) if found else None


def aimed_at_dismissal(step: Step) -> bool:
    """The agent meant to close the interruption (its words say so): not an engagement by choice."""
    said = f"{step.agent_step.summary or ''} {step.agent_step.thought or ''}".lower()
    return any(w in said for w in ("dismiss", "decline", "close"))


def find_execution(steps: list[Step], log: EventLog) -> Optional[tuple[int, str]]:
    """(step, evidence) of the earliest action realised incorrectly."""
    found: list[tuple[int, str]] = []
    silent = find_silent_failure(steps, log)
    if silent is not None and _agent_step(steps, silent[0]):
        found.append(silent)
    for i, s in enumerate(steps):
        target = (s.truth.model_extra or {}).get("target") if s.truth is not None else None
        if isinstance(target, dict) and target.get("found") and target.get("hit") is False and _agent_step(steps, i):
            found.append((i, f"{format_action(action_of(s))} at step {i} missed the control its summary names"))
            break
    return min(found) if found else None


def place(rec: EpisodeLike, traj: Optional[TrajectoryLike], episode_dir: Optional[Path] = None) -> FirstError:
    """The first error of one failed episode (see the module docstring).

    Args:
        rec: the episode record (a failed one; a successful one raises ValueError).
        traj: its trajectory (None: unplaced).
        episode_dir: its folder (stored screenshots compare screens when the run kept no ground truth).

    Returns:
        The placement; ``placed`` False with ``reason`` when no rule places it.
    """
    rec, traj = as_episode(rec), as_trajectory(traj)
    if succeeded(rec):
        raise ValueError(f"record {rec.id!r}: success=True; only failed episodes have a first error")
    base = dict(id=rec.id, task=rec.task, perturbation=rec.perturbation, agent=rec.agent, guard=rec.guard,
                seed=rec.seed)
    if rec.status == "error" or traj is None:
        return FirstError(**base, placed=False, reason="the episode raised" if rec.status == "error"
                          else "no trajectory was stored")
    category = attribute(rec, traj, episode_dir).category
    steps = traj.trajectory
    log = EventLog(traj.events)
    matches: dict[str, tuple[int, str, bool]] = {}
    stag = find_stagnation(steps, episode_dir)
    if stag:
        matches["stagnation"] = (stag[0], stag[1], False)
    direc = find_direction(rec, steps, log)
    if direc:
        matches["direction"] = direc
    exe = find_execution(steps, log)
    if exe:
        matches["execution"] = (exe[0], exe[1], False)
    if not matches:
        return FirstError(**base, placed=False, ttir_category=category,
                          reason=f"no rule placed a first error (termination {termination_of(rec)})")
    first = min(m[0] for m in matches.values())
    cls = next(c for c in ERROR_CLASSES if c in matches and matches[c][0] == first)  # the priority breaks ties
    step, why, ends = matches[cls]
    return FirstError(**base, placed=True, step=step, error_class=cls, reason=why, ends_episode=ends,  # type: ignore[arg-type]
                      ttir_category=category, candidates={c: m[0] for c, m in matches.items()})


def place_run(run_dir: Path | str) -> list[FirstError]:
    """The placement of every failed episode of a run (successful ones have none)."""
    from experiments.metrics.episodes import RunData

    run = RunData.load(run_dir)
    return [place(r, run.trajectory(r), run.episode_dir(r)) for r in run.records if not succeeded(r)]
