"""``python -m experiments.proxy_bench``: a scripted adb agent alone vs through ``ttir proxy``, on
served phones with an interruption, beside the in-process runner's outcome on the same cells.

The agent is the watch bench's (:mod:`experiments.watch_bench`): the clean run's actions,
sent through adb (``AdbDevice``: ``input tap``, ``input text``, ``monkey``) with a fixed think
time, never looking at the screen. Each (task, perturbation) runs on a fresh ``ttir serve-adb
--task T --perturb P --seed 0``: alone (the agent on the phone's serial), and through an
:class:`~ttir.guarded.proxy.AdbProxy` in front of the phone (the same agent on the proxy's
serial). The verdict is the phone's own (``cmd ttir task verify``, from app state).

The in-process column runs the same cell in one process, as the experiment runner does:
``run_episode(PerturbedDevice(SimDevice(), [P], seed=0), task, ttir.guard(ReplayAgent))``;
``verified`` is the task's verifier on the final state (the served verdict's equivalent).
What differs: the runner's ReplayAgent looks at each screen and retries a step whose screen
did not change, the scripted agent never looks; the runner's guard sees every screen, the
proxy's guard only the screens before the agent's ``input`` commands (not before ``monkey``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from typing import Any, Optional

from experiments.adb_perf import _free_port, private_adb_server
from experiments.watch_bench import PERTURBATIONS, TASKS, THINK_S, clean_actions, run_once


def run_proxied(adb: str, server_port: int, task_name: str, perturbation: str, actions: list[Any],
                seed: int = 0) -> dict[str, Any]:
    """One scripted run through a proxy on a fresh served phone: its verdict and the proxy's record."""
    from benchmark.devices import AdbDevice
    from benchmark.devices.adbd.spawn import spawn
    from ttir.guarded.proxy import AdbProxy

    port = _free_port()
    proc, _ = spawn(port, "--task", task_name, "--perturb", perturbation, "--seed", str(seed))
    serial = f"127.0.0.1:{port}"

    def adb_run(*args: str) -> str:
        return subprocess.run([adb, "-P", str(server_port), *args], capture_output=True, timeout=60).stdout.decode()

    proxy = None
    try:
        adb_run("connect", serial)
        proxy = AdbProxy(serial, adb_port=server_port, settle_s=0.1).start()
        adb_run("connect", proxy.address)
        agent = AdbDevice(proxy.address, port=server_port, settle_seconds=0, action_settle_seconds=0,
                          journal_dir=tempfile.mkdtemp(prefix="ttir-proxy-bench-"))
        for action in actions:
            try:
                agent.execute(action)
            except Exception:  # noqa: BLE001 - a scripted agent does not look: a failed action is just lost
                pass
            time.sleep(THINK_S)
        verdict = json.loads(adb_run("-s", serial, "shell", "cmd ttir task verify"))
        events = json.loads(adb_run("-s", serial, "shell", "cmd ttir events") or "[]")
    finally:
        if proxy is not None:
            adb_run("disconnect", proxy.address)
            proxy.close()
        adb_run("disconnect", serial)
        proc.terminate()
        proc.communicate(timeout=30)
    fired = any(e.get("event") in ("overlay_shown", "notification_shown") for e in events)
    return {"task": task_name, "perturbation": perturbation, "mode": "proxy", "success": bool(verdict.get("success")),
            "fired": fired, "summary": proxy.summary(),
            "interventions": [i.model_dump(mode="json") for i in proxy.guard.interventions]}


def in_process(task_name: str, perturbation: str, seed: int = 0) -> dict[str, Any]:
    """The runner's view of the cell: the guarded ReplayAgent on the perturbed simulator, unguarded too."""
    import ttir
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import ReplayAgent
    from perturb import PerturbedDevice, make

    out: dict[str, Any] = {}
    for guarded in (False, True):
        task = make_task(task_name, seed=seed)
        device = PerturbedDevice(SimDevice(), [make(perturbation)], seed=seed, budget=task.budget)
        agent: Any = ReplayAgent.from_task(task)
        if guarded:
            agent = ttir.guard(agent)
        result = run_episode(device, task, agent)
        out["guarded" if guarded else "unguarded"] = {"verified": result.verified, "success": result.success,
                                                     "steps": result.steps}
    return out


def bench(tasks: list[str], perturbations: list[str]) -> dict[str, Any]:
    from ttir.guarded.proxy import COMMAND_FATES

    rows: list[dict[str, Any]] = []
    with private_adb_server() as (adb, server_port):
        for task_name in tasks:
            actions = clean_actions(task_name)
            for perturbation in perturbations:
                alone = run_once(adb, server_port, task_name, perturbation, actions, watch=False)
                proxied = run_proxied(adb, server_port, task_name, perturbation, actions)
                runner = in_process(task_name, perturbation)
                row = {"task": task_name, "perturbation": perturbation, "fired": alone["fired"] or proxied["fired"],
                       "alone": alone["success"], "proxy": proxied["success"],
                       "runner_unguarded": runner["unguarded"]["verified"], "runner_guarded": runner["guarded"]["verified"],
                       "proxy_fates": {k: proxied["summary"][k] for k in COMMAND_FATES},
                       "proxy_triggers": proxied["summary"]["guard"]["triggers"],
                       "interventions": proxied["interventions"]}
                rows.append(row)
                print(f"{task_name:20s} {perturbation:22s} alone={row['alone']!s:5s} proxy={row['proxy']!s:5s} "
                      f"runner: unguarded={row['runner_unguarded']!s:5s} guarded={row['runner_guarded']!s:5s} "
                      f"fired={row['fired']!s:5s} fates={row['proxy_fates']} triggers={row['proxy_triggers']}",
                      flush=True)
    n = len(rows)
    return {"think_s": THINK_S, "rows": rows, "runs_each": n,
            "alone_success": sum(r["alone"] for r in rows), "proxy_success": sum(r["proxy"] for r in rows),
            "runner_unguarded_verified": sum(r["runner_unguarded"] for r in rows),
            "runner_guarded_verified": sum(r["runner_guarded"] for r in rows)}


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.proxy_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default=",".join(TASKS), help=f"comma-separated tasks (default {','.join(TASKS)})")
    p.add_argument("--perturb", default=",".join(PERTURBATIONS), help="comma-separated perturbations")
    p.add_argument("--json", dest="json_path", default=None, help="also write the rows here")
    args = p.parse_args(argv)
    out = bench([t for t in args.tasks.split(",") if t], [x for x in args.perturb.split(",") if x])
    print(f"scripted adb agent, {out['runs_each']} cells: alone {out['alone_success']} succeeded; through ttir proxy "
          f"{out['proxy_success']}. In-process runner (ReplayAgent, verified): unguarded "
          f"{out['runner_unguarded_verified']}, guarded {out['runner_guarded_verified']}")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
