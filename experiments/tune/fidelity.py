"""How faithful is offline evaluation to the live guard?

``python -m experiments.tune.fidelity SPEC --episodes 60 --out DIR`` runs a seeded
sample of the spec's episodes in this process, with a *shadow* next to the agent:
at every decision it runs the four rule diagnosers exactly as the live guard
would (the observation the agent got — full-resolution screenshot, the device's
own tree — and the guard's 64-step history), without changing anything the agent
does. The same episodes are recorded as ``ttir run`` records them (downscaled
JPEG screenshots, XML dumps, ground truth), turned into rows by ``tune build``
and evaluated offline. It prints how often the offline verdict equals the live
one, per diagnoser.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from experiments.store import read_json
from ttir.core.types import AgentStep, Observation, StepRecord, as_agent, as_step


class Shadow:
    """Wraps an agent; records the rule verdicts of the four diagnosers per step."""

    def __init__(self, inner: Any, history_limit: int = 64):
        from diagnosers import DIAGNOSER_CLASSES

        self.inner = as_agent(inner)
        self.limit = history_limit
        self.diagnosers = {n: c(mode="rules") for n, c in DIAGNOSER_CLASSES.items()}
        self.verdicts: list[dict[str, str]] = []

    def reset(self, goal: str) -> None:
        self.goal = goal
        self.history: list[StepRecord] = []
        self.last: Any = None
        self.verdicts = []
        self.inner.reset(goal)

    def step(self, obs: Observation) -> AgentStep:
        from diagnosers import DiagnosisContext

        if self.last is not None:
            self.history.append(self.last)
            del self.history[:-self.limit]
        ctx = DiagnosisContext(goal=self.goal, observation=obs, history=list(self.history))
        out = as_step(self.inner.step(obs))
        claim = out.action.action_type == "status" and out.action.goal_status == "complete"
        cctx = DiagnosisContext(goal=self.goal, observation=obs, history=list(self.history), pending=out) if claim else None
        self.verdicts.append({n: d.rules(cctx if (cctx is not None and n == "task_alignment") else ctx).verdict
                              for n, d in self.diagnosers.items()})
        self.last = StepRecord(observation=obs, step=out, source="agent")
        return out


def run(spec_path: str, n: int, out: Path, seed: int = 0) -> dict[str, Any]:
    from experiments.spec import ExperimentSpec
    from experiments.tune.dataset import episode_rows
    from experiments.tune.evaluate import Variant, evaluate_rows
    from experiments.tune.schema import StepRow
    from experiments.worker import run_one
    import experiments.agents as agents_mod

    spec = ExperimentSpec.from_yaml(spec_path)
    episodes = spec.episodes()
    chosen = random.Random(seed).sample(episodes, min(n, len(episodes)))
    live: dict[str, list[dict[str, str]]] = {}
    original = agents_mod.build_agent

    def shadowed(ep: Any, task: Any) -> Any:
        agent = Shadow(original(ep, task))
        shadowed.current = agent  # type: ignore[attr-defined]
        return agent

    agents_mod.build_agent = shadowed
    try:
        for ep in chosen:
            run_one(ep, str(out), screenshots=spec.screenshots, width=spec.screenshot_width, save_xml=True)
            live[ep.id] = shadowed.current.verdicts  # type: ignore[attr-defined]
    finally:
        agents_mod.build_agent = original
    agree: dict[str, Counter] = defaultdict(Counter)
    confusion: dict[str, Counter] = defaultdict(Counter)
    for k, ep in enumerate(chosen):
        src = out / "episodes" / ep.id
        traj = read_json(src / "trajectory.json")
        record = {"id": ep.id, "task": ep.task, "perturbation": ep.perturbation, "agent": ep.agent.name}
        rows = [StepRow.model_validate(r) for r in episode_rows(traj, record, src, out / "dataset", f"e{k:05d}")]
        outcomes = evaluate_rows(rows, out / "dataset", [Variant("rules", "rules", _config())])
        for o, v in zip(outcomes, live[ep.id]):
            for d, verdict in v.items():
                off = o["results"]["rules"][d]["verdict"]
                agree[d]["same" if off == verdict else "different"] += 1
                if off != verdict:
                    confusion[d][f"live {verdict} / offline {off}"] += 1
    return {"episodes": len(chosen), "agreement": {d: dict(c) for d, c in agree.items()},
            "share_same": {d: round(c["same"] / max(1, sum(c.values())), 4) for d, c in agree.items()},
            "differences": {d: dict(c.most_common(8)) for d, c in confusion.items()}}


def _config() -> Any:
    from ttir.core.config import TTIRConfig

    return TTIRConfig()


def main(argv: Any = None) -> None:
    p = argparse.ArgumentParser(prog="python -m experiments.tune.fidelity", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", help="experiment spec, e.g. experiments/specs/tuning.yaml")
    p.add_argument("--episodes", type=int, default=60, help="seeded sample size (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="scratch run directory")
    args = p.parse_args(argv)
    print(json.dumps(run(args.spec, args.episodes, args.out, args.seed), indent=2))


if __name__ == "__main__":  # pragma: no cover
    main()
