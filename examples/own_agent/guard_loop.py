"""The guard loop written out: your agent, guarded, on the simulated phone or on a real one.

    python examples/own_agent/guard_loop.py                      # simulated phone, a permission pop-up injected
    python examples/own_agent/guard_loop.py --serial emulator-5554 --goal "Turn on Wi-Fi"   # a real phone (adb)

On the simulated phone the task is set up and verified from the app's state; on a real
phone ttir cannot know your app's state, so the loop ends when the agent says it is done.
The phone's settings are snapshotted when the device opens and restored when it closes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

import ttir
from my_agent import GoalWordsAgent


def guarded_loop(phone: Any, agent: ttir.GuardedAgent, goal: str, first_obs: ttir.Observation,
                 budget: int = 15) -> str:
    """Step the guarded agent until it ends the episode or the budget is spent.

    Args:
        phone: a Device (``SimDevice``, ``AdbDevice``, or either wrapped in ``PerturbedDevice``).
        agent: the guarded agent.
        goal: the instruction.
        first_obs: the screen the episode starts from.
        budget: the most steps.

    Returns:
        How the episode ended: ``done``, ``infeasible`` or ``budget``.
    """
    obs = first_obs
    agent.reset(goal)
    for _ in range(budget):
        step = agent.step(obs)                     # the guard looks first; it may answer with its recovery step
        action = step.action
        if action.action_type == "status":        # the agent ended the episode
            return "done" if action.goal_status == "complete" else "infeasible"
        phone.execute(action)
        obs = phone.observe()
    return "budget"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serial", help="a real phone or emulator (adb serial); default: the simulated phone")
    parser.add_argument("--goal", default="Turn on Wi-Fi", help="the instruction, with --serial")
    parser.add_argument("--task", default="SystemWifiTurnOn", help="the task, on the simulated phone")
    parser.add_argument("--perturb", default="popup_permission", help="a perturbation, on the simulated phone")
    parser.add_argument("--no-guard", action="store_true", help="the agent alone, for the baseline")
    args = parser.parse_args(argv)

    # enabled=False: the same interface and report, the checks off (the unguarded baseline)
    agent = ttir.guard(GoalWordsAgent("Settings"), config=ttir.TTIRConfig(enabled=not args.no_guard))
    if args.serial:
        from benchmark import AdbDevice

        with AdbDevice(args.serial) as phone:
            ended = guarded_loop(phone, agent, args.goal, phone.observe())
        print(f"ended: {ended}; guard: {agent.report.summary()}")
        return 0

    from benchmark import SimDevice, make_task
    from perturb import PerturbedDevice, make

    task = make_task(args.task, seed=0)
    with PerturbedDevice(SimDevice(), [make(args.perturb)], seed=0) as phone:
        ended = guarded_loop(phone, agent, task.goal, phone.reset(task))
        verified = task.verify(phone.unwrapped)   # read from the app's state, never the agent's claim
    print(f"{task.name} under {args.perturb}: ended {ended}, verified {verified}")
    print("guard:", agent.report.summary())
    return 0 if verified and ended == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
