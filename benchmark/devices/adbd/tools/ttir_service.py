"""``cmd ttir``: the phone-side task service of a ttir served phone.

A runner drives the phone over adb like any phone, but the benchmark's tasks
seed app data and verify app state, which only the phone holds. So the runner
asks the phone: ``cmd ttir task setup NAME SEED DIGEST`` (factory reset, then
the task's setup; the task is rebuilt from its seed and DIGEST proves it has
the runner's parameters), ``cmd ttir task verify`` (the verdict, JSON) and
``cmd ttir events`` (the event log of a perturbation served with the phone);
``cmd ttir apps`` names the apps as the tasks' plans do (JSON name -> package).
A real phone answers ``cmd: Can't find service: ttir``.
"""

from __future__ import annotations

import json
import random
from typing import Any

from benchmark.devices.adbd.sh import Call

VERSION = "ttir-served-phone 1"
USAGE = "usage: cmd ttir version | apps | task setup NAME SEED DIGEST | task verify | events"


def _task(name: str, seed: str, digest: str) -> Any:
    from benchmark.devices.phone_task import params_digest
    from benchmark.tasks import TASKS

    if name not in TASKS:
        raise ValueError(f"task={name!r} is not a task of this phone; known: {', '.join(sorted(TASKS))}")
    if not seed.isdigit():
        raise ValueError(f"seed={seed!r} must be a task instance seed (a non-negative integer)")
    cls = TASKS[name]
    task = cls(cls.generate_params(random.Random(int(seed))), seed=int(seed))
    if params_digest(task.params) != digest:
        raise ValueError(f"task {name} with seed {seed} has other parameters than the runner's (digest {digest} "
                         f"expected, the phone made {params_digest(task.params)}): served tasks are rebuilt from "
                         "their seed, so their parameters must come from it")
    return task


def ttir_service(phone: Any, call: Call, args: list[str]) -> int:
    if args == ["version"]:
        call.print(VERSION)
        return 0
    if args == ["apps"]:
        launcher = [(pkg, app) for pkg, app in phone.sim.apps.items() if app.in_launcher]
        names = {app.label: pkg for pkg, app in launcher}  # labels first: a package's first name is its label
        names.update({alias: pkg for pkg, app in launcher for alias in app.aliases if alias not in names})
        call.print(json.dumps(names))
        return 0
    if args[:2] == ["task", "setup"] and len(args) == 5:
        try:
            task = _task(*args[2:5])
        except ValueError as exc:
            return call.error(f"Error: {exc}")
        phone.start_task(task)
        call.print(json.dumps({"task": task.name, "goal": task.goal, "seed": task.seed}))
        return 0
    if args == ["task", "verify"]:
        verdict = phone.verdict()
        if verdict["task"] is None:
            return call.error("Error: no task is set up on this phone (cmd ttir task setup …)")
        call.print(json.dumps(verdict, default=str))
        return 0
    if args == ["events"]:
        call.print(json.dumps(phone.verdict()["events"], default=str))
        return 0
    return call.error(USAGE, 1)
