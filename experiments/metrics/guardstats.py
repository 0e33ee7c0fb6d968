"""What the guard did, checked against the perturbation event log.

A *trigger* is a diagnoser finding with ``problem: true`` (the guard's per-step check,
and its check of a completion claim). A trigger at step s is a **true positive** when
the event log shows the matching kind of trouble at or just before s:

===============  =====================================================================
diagnoser        trouble that makes its trigger at step s a true positive
===============  =====================================================================
interference     an overlay on screen at s (``overlay_shown``/``app_hang`` not yet
                 closed: dialogs, sheets, banners, ads, loading/frozen screens, ANR)
action_effect    in steps s−2 … s: an action silently altered (``dropped``, ``delayed``,
                 ``delayed_lost``, ``blocked_action``, ``deadlock_step``, ``offset``,
                 ``remapped``, ``replaced``, ``hang_persists``), an overlay on screen,
                 or a state perturbation active at s (a setting applied and not
                 restored; an AnTrap S/T trap inside its window)
stuck_loop       the same as action_effect, over steps s−4 … s (its window is longer)
task_alignment   in steps s−3 … s: the context taken away (``reset_home``,
                 ``context_disrupted``, ``loop_back``, ``went_home``, ``app_launched``,
                 ``url_opened``, ``app_closed``) or an engagement with injected
                 content; or such an event earlier after which the foreground never
                 came back to the package the agent was in before it
===============  =====================================================================

A user-defined check (any other name) has no such ground truth: its triggers and
sessions are counted, its verdict is ``unjudged`` and its precision is not computed.

Everything else — including every trigger on a clean run — is a false positive,
unless the agent itself really failed, which the trajectory shows independently of the
guard (verdict ``agent`` rather than ``perturbation``):

- stuck_loop: the agent issued the identical action 3+ times in a row, up to s, on a
  screen that stayed the same (``steps.stuck_before``, screenshots compared);
- action_effect (and stuck_loop): the action of step s−1 was refused by the device
  (``action_error``) or was a tap / typing that left the screen unchanged;
- task_alignment: a completion claim on a task that ended unsolved (premature), or
  the home screen at s after the task had left it.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel

from experiments.metrics.episodes import RunData, verified
from experiments.metrics.eventlog import ACTION_FAILURE_EVENTS, CONTEXT_LOSS_EVENTS, EventLog
from experiments.metrics.steps import action_of, format_action, no_effect, repeat_runs, stuck_before
from experiments.records import EpisodeLike, GuardEvent, GuardSummary, Trajectory, TrajectoryLike, as_episode
from ttir.core.config import DEFAULT_PRIORITY, DiagnoserName

DIAGNOSERS = DEFAULT_PRIORITY  # the checks the event log can judge, in the reports' order
LOOKBACK: dict[DiagnoserName, int] = {"interference": 0, "action_effect": 2, "stuck_loop": 4, "task_alignment": 3}


# what a trigger is attributed to (not a diagnoser's ``ttir.core.diagnosis.Verdict``)
TriggerAttribution = Literal["perturbation", "agent", "false_positive", "unjudged"]


class TriggerCheck(BaseModel):
    id: str
    step: int
    diagnoser: str
    claim: bool = False
    clean: bool
    verdict: TriggerAttribution
    reason: str

    @property
    def true_positive(self) -> bool:
        return self.verdict in ("perturbation", "agent")


class DiagnoserStats(BaseModel):
    diagnoser: str
    triggers: int = 0
    true_positives: int = 0  # perturbation + agent
    tp_perturbation: int = 0
    tp_agent: int = 0
    precision: Optional[float] = None
    clean_triggers: int = 0
    sessions: int = 0
    outcomes: dict[str, int] = {}
    recovery_steps: int = 0


class GuardStatsRow(BaseModel):
    agent: str
    agent_kind: str
    guard: str
    episodes: int
    guarded_steps: int
    diagnosers: list[DiagnoserStats]
    sessions: int
    resolved: int
    budget_spent: int
    recovery_steps: int
    blocked_claims: int
    guard_errors: int
    model_calls: int
    model_calls_per_step: Optional[float] = None
    tokens: int
    tokens_per_step: Optional[float] = None
    guard_ms_median: Optional[float] = None
    guard_ms_p95: Optional[float] = None
    precision_available: bool = True


def _package(fg: Optional[str]) -> str:
    return (fg or "").split("/")[0]


def _foregrounds(traj: Trajectory) -> list[str]:
    return [_package(s.observation.foreground) for s in traj.trajectory]


def check_trigger(diagnoser: str, step: int, rec: EpisodeLike, traj: TrajectoryLike, claim: bool = False,
                  episode_dir: Optional[Path] = None,
                  runs: Optional[list[list[int]]] = None) -> tuple[TriggerAttribution, str]:
    """Why a trigger at ``step`` was right (``perturbation`` / ``agent``) or not — see the module docstring."""
    if diagnoser not in DIAGNOSERS:
        return "unjudged", f"{diagnoser!r} is a user-defined check: the event log does not say when it is right"
    rec, traj = as_episode(rec), Trajectory.parse(traj, "trajectory")
    log = EventLog(traj.events)
    steps = traj.trajectory
    lo = step - LOOKBACK.get(diagnoser, 2)
    if diagnoser == "interference":
        span = log.overlay_at(step)
        if span is not None:
            return "perturbation", f"overlay {span.key!r} ({span.style or 'overlay'}) on screen since step {span.start}"
        return "false_positive", "no overlay on screen"
    if diagnoser in ("action_effect", "stuck_loop"):
        hits = log.of(ACTION_FAILURE_EVENTS, lo, step)
        if hits:
            e = hits[-1]
            return "perturbation", f"{e.perturbation}: {e.event} at step {e.step}"
        for s in range(max(0, lo), step + 1):
            span = log.overlay_at(s)
            if span is not None:
                return "perturbation", f"overlay {span.key!r} ({span.style or 'overlay'}) on screen at step {s}"
        active = log.state_perturbation_at(step)
        if active:
            return "perturbation", f"state perturbation active: {active}"
        if diagnoser == "stuck_loop":
            run = stuck_before(steps, step, episode_dir, runs=runs)
            if run:
                return "agent", (f"the agent repeated {format_action(action_of(steps[run[0]]))} {len(run)} times "
                                 f"from step {run[0]} on an unchanged screen")
        why = no_effect(steps, step, episode_dir)
        if why:
            return "agent", why
        return "false_positive", "no altered action, overlay, state perturbation or failed action in the window"
    if diagnoser == "task_alignment":
        recent = log.of(CONTEXT_LOSS_EVENTS, lo, step) + log.engagements(lo, step)
        if recent:
            e = recent[0]
            return "perturbation", f"{e.perturbation}: {e.event} at step {e.step}"
        fgs = _foregrounds(traj)
        for e in log.of(CONTEXT_LOSS_EVENTS, hi=step) + log.engagements(hi=step):
            s = e.step
            before = fgs[s - 1] if 0 < s <= len(fgs) else None
            if before and all(fg != before for fg in fgs[s:step + 1]):
                return "perturbation", (f"{e.perturbation}: {e.event} at step {s}; "
                                        f"{before} not back in front since")
        if claim and not verified(rec):
            return "agent", "a completion claim on a task whose state was never verified"
        if step < len(fgs) and _is_launcher(fgs[step]) and any(fg and not _is_launcher(fg) for fg in fgs[:step]):
            return "agent", f"back on the home screen at step {step} after the task had left it"
        return "false_positive", "task context intact"
    return "false_positive", f"unknown diagnoser {diagnoser!r}"  # pragma: no cover - unjudged above


def _is_launcher(package: str) -> bool:
    return "launcher" in package


def triggers_of(traj: TrajectoryLike) -> list[GuardEvent]:
    traj = Trajectory.parse(traj, "trajectory")
    if traj.guard is not None and traj.guard.findings is not None:
        return [f for f in traj.guard.findings if f.problem]
    out = []
    for st in traj.trajectory:
        out.extend(g for g in st.guard_events if g.event == "finding" and g.problem)
    return out


def check_episode(rec: EpisodeLike, traj: TrajectoryLike, episode_dir: Optional[Path] = None) -> list[TriggerCheck]:
    rec, traj = as_episode(rec), Trajectory.parse(traj, "trajectory")
    out = []
    found = triggers_of(traj)
    runs = repeat_runs(traj.trajectory, episode_dir) if any(f.diagnoser == "stuck_loop" for f in found) else None
    for f in found:
        step, d = f.step, str(f.diagnoser)
        verdict, why = check_trigger(d, step, rec, traj, claim=bool(f.claim), episode_dir=episode_dir, runs=runs)
        out.append(TriggerCheck(id=rec.id, step=step, diagnoser=d, claim=bool(f.claim), clean=rec.is_clean,
                                verdict=verdict, reason=why))
    return out


def _pct(values: list[float], q: float) -> Optional[float]:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))]


def guard_stats(run: RunData) -> tuple[list[GuardStatsRow], list[TriggerCheck]]:
    rows: list[GuardStatsRow] = []
    checks_all: list[TriggerCheck] = []
    for agent in run.agents():
        for guard in run.guards():
            if guard == "off":
                continue
            recs = [r for r in run.records if r.agent == agent and r.guard == guard]
            if not recs:
                continue
            stats = {d: DiagnoserStats(diagnoser=d) for d in DIAGNOSERS}
            ms: list[float] = []
            calls = tokens = steps = blocked = errors = 0
            precision_ok = True
            for rec in recs:
                traj = run.trajectory(rec)
                report = traj.guard if traj is not None else None
                if traj is None or report is None:
                    precision_ok = False
                    summary = rec.guard_summary or GuardSummary()
                    for d, n in summary.triggers.items():
                        stats.setdefault(d, DiagnoserStats(diagnoser=d)).sessions += n
                    calls += summary.model_calls
                    tokens += summary.tokens
                    steps += summary.steps
                    blocked += summary.blocked_claims
                    errors += summary.errors
                    continue
                checks = check_episode(rec, traj, run.episode_dir(rec) if run.root else None)
                checks_all.extend(checks)
                for c in checks:
                    st = stats.setdefault(c.diagnoser, DiagnoserStats(diagnoser=c.diagnoser))
                    st.triggers += 1
                    st.true_positives += c.true_positive
                    st.tp_perturbation += c.verdict == "perturbation"
                    st.tp_agent += c.verdict == "agent"
                    st.clean_triggers += c.clean
                for s in report.sessions:
                    st = stats.setdefault(s.diagnoser, DiagnoserStats(diagnoser=s.diagnoser))
                    st.sessions += 1
                    st.outcomes[s.outcome] = st.outcomes.get(s.outcome, 0) + 1
                    st.recovery_steps += len(s.actions)
                usage = report.usage
                steps += len(usage)
                calls += sum(u.model_calls for u in usage)
                tokens += sum(u.prompt_tokens + u.completion_tokens for u in usage)
                ms.extend(u.guard_ms for u in usage)
                blocked += report.blocked_claims
                errors += len(report.errors)
            for st in stats.values():
                judged = st.diagnoser in DIAGNOSERS
                st.precision = (st.true_positives / st.triggers) if st.triggers and precision_ok and judged else None
            diag = list(stats.values())
            rows.append(GuardStatsRow(
                agent=agent, agent_kind=run.agent_kind(agent), guard=guard, episodes=len(recs), guarded_steps=steps,
                diagnosers=diag, sessions=sum(d.sessions for d in diag),
                resolved=sum(d.outcomes.get("resolved", 0) for d in diag),
                budget_spent=sum(d.outcomes.get("budget_spent", 0) for d in diag),
                recovery_steps=sum(d.recovery_steps for d in diag), blocked_claims=blocked, guard_errors=errors,
                model_calls=calls, model_calls_per_step=calls / steps if steps else None, tokens=tokens,
                tokens_per_step=tokens / steps if steps else None,
                guard_ms_median=statistics.median(ms) if ms else None, guard_ms_p95=_pct(ms, 0.95),
                precision_available=precision_ok))
    return rows, checks_all
