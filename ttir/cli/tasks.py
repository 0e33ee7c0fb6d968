"""``ttir tasks``: list the benchmark tasks."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="List every task with its apps, reference length and goal "
                       "(instantiated with --seed). A goal that spans lines (an expense list, a recipe) is shown on "
                       "one line, its line breaks as ' / '.")
    p.add_argument("--seed", type=int, default=0, help="suite seed used to instantiate the goals (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table (goals verbatim)")
    p.set_defaults(func=run)


def one_line(text: str) -> str:
    return " / ".join(part.strip() for part in text.splitlines() if part.strip())


def run(args: argparse.Namespace) -> int:
    import json

    from benchmark.apps import APP_CLASSES
    from benchmark.tasks import make_task, task_names

    labels = {c.package: c.label for c in APP_CLASSES}
    names = task_names()
    tasks = [make_task(n, seed=args.seed) for n in names]
    if args.json:
        for t in tasks:
            print(json.dumps(t.describe() | {"app_labels": [labels.get(p, p) for p in t.apps]}))
        return 0
    apps = {t.name: ", ".join(labels.get(p, p) for p in t.apps) for t in tasks}
    wn, wa = max(len(n) for n in names), max(len(a) for a in apps.values())
    print(f"{'task':<{wn}}  {'steps':>5}  {'apps':<{wa}}  goal")
    for t in tasks:
        print(f"{t.name:<{wn}}  {t.reference_steps:>5}  {apps[t.name]:<{wa}}  {one_line(t.goal)}")
    print(f"\n{len(names)} tasks. Solve one on the simulated phone: ttir demo {names[0]}")
    return 0
