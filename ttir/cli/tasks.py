"""``ttir tasks``: list the benchmark tasks."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description="List every task with its apps, reference length and goal "
                       "(instantiated with --seed).")
    p.add_argument("--seed", type=int, default=0, help="suite seed used to instantiate the goals (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from benchmark.tasks import make_task, task_names

    names = task_names()
    width = max(len(n) for n in names)
    for n in names:
        t = make_task(n, seed=args.seed)
        if args.json:
            print(json.dumps(t.describe()))
        else:
            print(f"{n:<{width}}  {t.reference_steps:>2} steps  {t.goal}")
    if not args.json:
        print(f"\n{len(names)} tasks. Solve one on the simulated phone: ttir demo {names[0]}")
    return 0
