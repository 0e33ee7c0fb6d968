"""The model tier against a real endpoint: does every path hold, and what does it cost?

    ttir serve-model &                       # or any endpoint: TTIR_VLM_BASE_URL / _MODEL / _API_KEY
    python -m experiments.model_bench --screens 20 --episodes 4

Measured, for structured replies on (``vlm.structured: auto``) and off (plain text):
judge replies parsed (%), requests and model calls per guarded step in ``vlm`` mode,
the median latency per call, and the judge's precision / recall for
``interference_present`` on labelled simulator screens. The labels come from the
harness (an injected overlay drawn on the screen, or not), never from a diagnoser.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

POPUPS = ("popup_permission", "popup_security", "rate_dialog", "bottom_sheet_consent", "update_app_sheet",
          "notification_message")
TASKS = ("SystemWifiTurnOn", "ContactsAddContact", "ClockStopWatchRunning", "MarkorCreateFolder",
         "SimpleSmsSend", "ExpenseDeleteSingle", "FilesDeleteFile", "RecipeDeleteSingleRecipe")


@dataclass
class LabelledScreen:
    """One decision point: what the judge sees, and whether an injected interruption was on screen."""

    goal: str
    observation: Any
    history: list[Any]
    interference: bool
    source: str  # task / perturbation / step, for the log


@dataclass
class JudgeRow:
    screen: LabelledScreen
    judgment: Optional[Any]
    model_calls: int
    requests: int
    latency_s: float
    error: Optional[str] = None
    reasked: bool = False


@dataclass
class GuardedRun:
    steps: int = 0
    model_calls: int = 0
    model_errors: int = 0
    requests: int = 0
    successes: int = 0
    episodes: int = 0
    latencies: list[float] = field(default_factory=list)


def labelled_screens(n: int, seed: int = 0, *, history: bool = True) -> list[LabelledScreen]:
    """``n`` screens from the simulator, alternating (where the episodes allow) between
    screens with an injected interruption and without, each with its episode's history
    (``history=False``: none, so a text-only prompt holds one tree, not two)."""
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import ReferenceAgent
    from perturb import PerturbedDevice, make
    from ttir.core.types import AgentStep, StepRecord

    with_overlay: list[LabelledScreen] = []
    without: list[LabelledScreen] = []
    i = 0
    while min(len(with_overlay), len(without)) < n and i < 8 * n:
        task = make_task(TASKS[i % len(TASKS)], seed=seed, i=i // len(TASKS))
        pert = POPUPS[i % len(POPUPS)]
        i += 1
        env = PerturbedDevice(SimDevice(), [make(pert)], seed=seed + i)
        drawn: list[bool] = []
        try:
            result = run_episode(env, task, ReferenceAgent(task.reference_solution()), budget=task.reference_steps + 2,
                                 keep_observations=True,
                                 on_observation=lambda _i, _obs: drawn.append(env.overlays._drawn) or None)
        finally:
            env.close()
        past: list[Any] = []
        taken = {True: 0, False: 0}  # at most one screen of each kind per episode: variety
        for k, obs in enumerate(result.observations):
            if not taken[drawn[k]] and k > 0:
                taken[drawn[k]] += 1
                screen = LabelledScreen(goal=task.goal, observation=obs, history=list(past) if history else [],
                                        interference=drawn[k],
                                        source=f"{task.name}/{pert}/step {k}")
                (with_overlay if drawn[k] else without).append(screen)
            if k < len(result.trajectory) and result.trajectory[k].agent_step:
                past.append(StepRecord(observation=obs, step=AgentStep.model_validate(result.trajectory[k].agent_step),
                                       source="agent"))
    out: list[LabelledScreen] = []
    for k in range(max(len(with_overlay), len(without))):
        for pool in (with_overlay, without):
            if k < len(pool) and len(out) < n:
                out.append(pool[k])
    return out


def judge_screens(screens: Sequence[LabelledScreen], config: Any, reasks: int = 1) -> list[JudgeRow]:
    """The judge on each screen, one guarded step each (one deadline, ``reasks`` re-asks)."""
    from ttir.core.diagnosis import DiagnosisContext
    from diagnosers.vlm_judge import VLMJudge
    from ttir.model.deadline import model_deadline
    from ttir.model.client import VLMClient, VLMError

    client = VLMClient(config)
    judge = VLMJudge(client)
    rows: list[JudgeRow] = []
    for screen in screens:
        ctx = DiagnosisContext(goal=screen.goal, observation=screen.observation, history=screen.history)
        reasks_before = client.usage.reasks
        with model_deadline(config.step_deadline_s, reasks=reasks):
            try:
                judgment, cost = judge.judge(ctx)
                error = None
            except VLMError as exc:
                judgment, cost, error = None, judge.charge_failure(ctx), f"{type(exc).__name__}: {exc}"[:300]
        rows.append(JudgeRow(screen=screen, judgment=judgment, model_calls=cost.model_calls, requests=cost.requests,
                             latency_s=cost.latency_s, error=error, reasked=client.usage.reasks > reasks_before))
    client.close()
    return rows


def guarded_episodes(config: Any, episodes: int, seed: int = 0) -> GuardedRun:
    """Short episodes under ``ttir.guard`` in ``vlm`` mode (rule recoveries): what a guarded step costs."""
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import PlannerAgent, PlannerParams
    from perturb import PerturbedDevice, make
    from ttir import TTIRConfig, guard
    from ttir.model.client import VLMClient

    out = GuardedRun()
    cfg = TTIRConfig.with_mode("vlm")
    cfg.vlm = config
    client = VLMClient(config)
    for k in range(episodes):
        task = make_task(TASKS[k % 2], seed=seed)  # two short tasks (3 and 6 reference steps)
        agent = guard(PlannerAgent(task.reference_solution(), PlannerParams(seed=seed + k)), config=cfg, vlm=client)
        env = PerturbedDevice(SimDevice(), [make(POPUPS[k % len(POPUPS)])] if k % 2 else [], seed=seed + k)
        try:
            result = run_episode(env, task, agent, budget=2 * task.reference_steps)
        finally:
            env.close()
        report = agent.report
        out.episodes += 1
        out.successes += result.success
        out.steps += report.steps
        out.model_calls += report.model_calls
        out.model_errors += report.model_errors
        out.requests += report.model_requests
        out.latencies += [u.model_latency_s / u.model_calls for u in report.usage if u.model_calls]
    client.close()
    return out


def precision_recall(rows: Sequence[JudgeRow]) -> tuple[Optional[float], Optional[float], int]:
    """interference_present against the harness's label, over the parsed rows."""
    tp = fp = fn = 0
    scored = 0
    for r in rows:
        if r.judgment is None:
            continue
        scored += 1
        said, truth = bool(r.judgment.interference_present), r.screen.interference
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall, scored


def _fmt(x: Optional[float], digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    from ttir import enable_logging
    from ttir.core.config import VLMConfig
    from ttir.model.endpoint import forget

    p = argparse.ArgumentParser(prog="python -m experiments.model_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--screens", type=int, default=20, help="labelled simulator screens for the judge (default 20)")
    p.add_argument("--episodes", type=int, default=4, help="guarded vlm-mode episodes per setting (default 4)")
    p.add_argument("--modes", default="auto,off", help="vlm.structured settings to compare (default auto,off)")
    p.add_argument("--timeout", type=float, default=300.0, help="per-request timeout in seconds (default 300)")
    p.add_argument("--with-history", action="store_true",
                   help="judge each screen with its episode's history (a text-only prompt then holds two trees)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    enable_logging("WARNING")
    screens = labelled_screens(args.screens, args.seed, history=args.with_history)
    positives = sum(s.interference for s in screens)
    print(f"{len(screens)} labelled screens ({positives} with an injected interruption), "
          f"{args.episodes} guarded episode(s) per setting")
    print("| vlm.structured | judge replies parsed | re-asked | requests / guarded step | model calls / guarded step "
          "| median latency / call | interference P / R | guarded steps |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for mode in args.modes.split(","):
        forget()  # each setting pays its own probes
        config = VLMConfig(structured=mode, timeout_s=args.timeout, max_retries=1, step_deadline_s=10 * args.timeout,
                           max_tokens=256)
        t0 = time.perf_counter()
        rows = judge_screens(screens, config)
        run = guarded_episodes(config, args.episodes, args.seed)
        parsed = sum(r.judgment is not None for r in rows)
        precision, recall, _ = precision_recall(rows)
        latencies = [r.latency_s / r.model_calls for r in rows if r.model_calls] + run.latencies
        print(f"| {mode} | {parsed}/{len(rows)} ({100 * parsed / max(1, len(rows)):.0f} %) "
              f"| {sum(r.reasked for r in rows)} | {run.requests / max(1, run.steps):.2f} "
              f"| {run.model_calls / max(1, run.steps):.2f} "
              f"| {statistics.median(latencies) if latencies else 0:.1f} s | {_fmt(precision)} / {_fmt(recall)} "
              f"| {run.steps} ({run.model_errors} failed calls; {time.perf_counter() - t0:.0f} s) |", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
