"""One episode of your own agent, end to end: a simulated phone, a task, a perturbation, the guard.

    python examples/own_agent/single_episode.py [TASK] [PERTURBATION]
"""

from __future__ import annotations

import sys

import ttir
from benchmark import SimDevice, make_task, run_episode
from my_agent import GoalWordsAgent
from perturb import PerturbedDevice, make


def main(task_name: str = "SystemWifiTurnOn", perturbation: str = "popup_permission") -> int:
    task = make_task(task_name, seed=0)               # seeded parameters; task.goal is the instruction
    agent = ttir.guard(GoalWordsAgent("Settings" if task_name.startswith("System") else "Clock"))
    with PerturbedDevice(SimDevice(), [make(perturbation)], seed=0) as env:
        # run_episode: obs = env.reset(task); agent.reset(task.goal); then step -> execute -> observe
        # until the agent claims a status or the budget is spent; success is read from the app state
        result = run_episode(env, task, agent, budget=15)
    print(f"{task.name} under {perturbation}: success={result.success} after {result.steps} steps "
          f"({result.termination})")
    for s in result.trajectory:
        print(f"  {s.index}: {s.agent_step['action']}  {s.agent_step.get('summary', '')}")
    print("guard:", agent.report.summary())
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
