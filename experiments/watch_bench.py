"""``python -m experiments.watch_bench``: a scripted adb agent alone vs beside ``ttir.watching``,
on served phones with an interruption.

The agent is what many adb scripts are: the clean run's actions (the task's reference solution
replayed on the in-process simulator, recorded once), sent through adb (``AdbDevice``: ``input
tap``, ``input text``, ``monkey``) with a fixed think time, never looking at the screen. Each
(task, perturbation) runs on a fresh ``ttir serve-adb --task T --perturb P`` twice: alone, and
with a watcher on its own ``AdbDevice`` beside it. The verdict is the phone's own (``cmd ttir
task verify``, from app state); "fired" says whether the interruption appeared at all (its
``overlay_shown`` / ``notification_shown`` event in ``cmd ttir events``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from typing import Any, Optional

from experiments.adb_perf import _free_port, private_adb_server

TASKS = ["SystemWifiTurnOn", "ContactsAddContact"]
PERTURBATIONS = ["popup_permission", "popup_security", "rate_dialog", "whats_new_dialog", "update_app_sheet",
                 "notification_message"]
THINK_S = 1.5  # the agent's pause between two actions
INTERVAL_S = 0.2  # the watcher's


def clean_actions(task_name: str) -> list[Any]:
    """The actions of the task's clean reference run on the simulator (status actions left out)."""
    from benchmark import SimDevice, make_task, run_episode
    from benchmark.agents import ReplayAgent
    from ttir.core.types import Action

    task = make_task(task_name)
    result = run_episode(SimDevice(), task, ReplayAgent.from_task(task))
    if not result.success:
        raise RuntimeError(f"{task_name}: the clean reference run failed; nothing to replay")
    actions = [Action(**s.agent_step["action"]) for s in result.trajectory]
    return [a for a in actions if a.action_type != "status"]


def run_once(adb: str, server_port: int, task_name: str, perturbation: str, actions: list[Any], watch: bool,
             seed: int = 0) -> dict[str, Any]:
    """One scripted run on a fresh served phone; its verdict, whether the interruption fired, and
    what the watcher did."""
    from benchmark.devices import AdbDevice
    from benchmark.devices.adbd.spawn import spawn
    from ttir.core.config import TTIRConfig
    from ttir.guarded.watch import watching

    port = _free_port()
    proc, _ = spawn(port, "--task", task_name, "--perturb", perturbation, "--seed", str(seed))
    serial = f"127.0.0.1:{port}"

    def adb_shell(command: str) -> str:
        return subprocess.run([adb, "-P", str(server_port), "-s", serial, "shell", command], capture_output=True,
                              timeout=60).stdout.decode()

    journal = tempfile.mkdtemp(prefix="ttir-watch-bench-")
    try:
        subprocess.run([adb, "-P", str(server_port), "connect", serial], check=True, capture_output=True, timeout=60)
        agent = AdbDevice(serial, port=server_port, settle_seconds=0, action_settle_seconds=0, journal_dir=journal)
        interventions: list[dict[str, Any]] = []

        def play() -> None:
            for action in actions:
                try:
                    agent.execute(action)
                except Exception:  # noqa: BLE001 - a scripted agent does not look: a failed action is just lost
                    pass
                time.sleep(THINK_S)

        if watch:
            device = AdbDevice(serial, port=server_port, settle_seconds=0, action_settle_seconds=0, journal_dir=journal)
            config = TTIRConfig.from_dict({"watch": {"interval_s": INTERVAL_S}})
            with watching(device, config) as watcher:
                play()
            interventions = [i.model_dump(mode="json") for i in watcher.interventions]
        else:
            play()
        verdict = json.loads(adb_shell("cmd ttir task verify"))
        events = json.loads(adb_shell("cmd ttir events") or "[]")
    finally:
        subprocess.run([adb, "-P", str(server_port), "disconnect", serial], capture_output=True, timeout=60)
        proc.terminate()
        proc.communicate(timeout=30)
    fired = any(e.get("event") in ("overlay_shown", "notification_shown") for e in events)
    return {"task": task_name, "perturbation": perturbation, "watch": watch, "success": bool(verdict.get("success")),
            "fired": fired, "interventions": interventions}


def bench(tasks: list[str], perturbations: list[str]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    with private_adb_server() as (adb, server_port):
        for task_name in tasks:
            actions = clean_actions(task_name)
            for perturbation in perturbations:
                for watch in (False, True):
                    rows.append(run_once(adb, server_port, task_name, perturbation, actions, watch))
                    r = rows[-1]
                    print(f"{task_name:22s} {perturbation:22s} {'watch' if watch else 'alone':5s} "
                          f"success={r['success']!s:5s} fired={r['fired']!s:5s} "
                          f"interventions={[i['kind'] for i in r['interventions']]}", flush=True)
    alone = [r for r in rows if not r["watch"]]
    watched = [r for r in rows if r["watch"]]
    return {"think_s": THINK_S, "interval_s": INTERVAL_S, "rows": rows,
            "alone_success": sum(r["success"] for r in alone), "watched_success": sum(r["success"] for r in watched),
            "runs_each": len(alone)}


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.watch_bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default=",".join(TASKS), help=f"comma-separated tasks (default {','.join(TASKS)})")
    p.add_argument("--perturb", default=",".join(PERTURBATIONS), help="comma-separated perturbations")
    p.add_argument("--json", dest="json_path", default=None, help="also write the rows here")
    args = p.parse_args(argv)
    out = bench([t for t in args.tasks.split(",") if t], [x for x in args.perturb.split(",") if x])
    print(f"alone: {out['alone_success']} of {out['runs_each']} succeeded; beside ttir.watching: "
          f"{out['watched_success']} of {out['runs_each']}")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
