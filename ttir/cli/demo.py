"""``ttir demo [TASK]``: run a task's reference solution on the simulated phone."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ttir.cli.arguments import output_folder

DEFAULT_TASK = "ContactsAddContact"


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Solve TASK on the simulated phone by executing its semantic reference solution, "
        "and write each step's screenshot (PNG) and uiautomator dump (XML) to --out.",
    )
    p.add_argument("task", nargs="?", default=DEFAULT_TASK, help=f"task name (default {DEFAULT_TASK}; see `ttir tasks`)")
    p.add_argument("--seed", type=int, default=0, help="suite seed for the task's parameters (default 0)")
    p.add_argument("--out", type=output_folder, default=None, help="output folder (default ./demo_out/TASK)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import ReferenceAgent

    task = make_task(args.task, seed=args.seed)
    out: Path = args.out or Path("demo_out") / task.name
    out.mkdir(parents=True, exist_ok=True)

    def save(i: int, obs: Any) -> str:
        obs.screenshot.save(out / f"step_{i:02d}.png")
        (out / f"step_{i:02d}.xml").write_text(obs.xml or obs.to_xml(), encoding="utf-8")
        return f"step_{i:02d}.png"

    device = SimDevice()
    print(f"task: {task.name}\ngoal: {task.goal}")
    result = run_episode(device, task, ReferenceAgent(task.reference_solution()), on_observation=save)
    # one counting everywhere (this output, episodes.jsonl, the viewer): a step is an action on the
    # phone; the agent's closing declaration ("complete") ends the episode and is not one
    for s in result.trajectory:
        action = s.agent_step.get("action") or {}
        label = "end" if action.get("action_type") == "status" else f"step {s.index:>2}"
        print(f"  {label:>7}: {s.agent_step.get('summary', '')}")
    if result.termination not in ("done", "infeasible"):  # no closing declaration: keep the last screen too
        save(len(result.trajectory), device.observe())
    print(f"{'SUCCESS' if result.success else 'FAILED'} in {result.steps} steps (verified from app state)")
    print(f"screenshots and XML dumps: {out.resolve()}")
    return 0 if result.success else 1
