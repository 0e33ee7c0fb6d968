"""``ttir compare RUN_A RUN_B``: two runs' metrics side by side, with deltas."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ttir.cli.arguments import output_folder

DESCRIPTION = """\
Compute the metrics of two runs (as `ttir report` does) and put them side by side with their
difference Δ = B − A, e.g. two guard configurations, two agents' runs, or before/after a change.
Writes into --out (default RUN_B/compare_<RUN_A name>):

  compare.md    per section, one row per setting (agent, guard mode, perturbation or group)
                with A, B and Δ: success rate; Table 2 (perturbed SR, Δc, Δstep, RSR per
                component and AnTrap layer); per perturbation type; failed episodes with the
                guard (Figure 4); pass@1 and pass@n; ADR; safety (engagement rate); guard
                triggers, precision, sessions and cost; failed episodes per error category.
                Only the settings both runs have are listed (--all-rows for every one). When
                each run has exactly one guard mode and they differ, rows are matched without
                the guard mode.
  compare.json  the same, machine-readable.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_a", type=Path, metavar="RUN_A", help="the baseline run directory")
    p.add_argument("run_b", type=Path, metavar="RUN_B", help="the run compared with it")
    p.add_argument("--out", type=output_folder, default=None, help="output folder (default RUN_B/compare_<RUN_A name>)")
    p.add_argument("--name-a", default=None, help="column label for RUN_A (default its folder name)")
    p.add_argument("--name-b", default=None, help="column label for RUN_B (default its folder name)")
    p.add_argument("--all-rows", action="store_true",
                   help="also list the settings only one of the runs has (default: only those both have)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.reports.compare import write_comparison

    import json
    import sys

    from experiments.reports.compare import NO_SHARED_SETTINGS

    out = args.out or args.run_b / f"compare_{args.run_a.resolve().name}"
    paths = write_comparison(args.run_a, args.run_b, out, name_a=args.name_a, name_b=args.name_b,
                             all_rows=args.all_rows)
    for p in paths:
        print(p)
    data = json.loads(next(p for p in paths if p.suffix == ".json").read_text(encoding="utf-8"))
    if not data.get("shared_settings"):  # unrelated runs: say so instead of a silent empty table
        print(f"ttir compare: warning: {NO_SHARED_SETTINGS}", file=sys.stderr)
    return 0
