"""``ttir report RUN_DIR``: metrics, tables, plots and a trajectory viewer for a run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ttir.cli.arguments import output_folder

DESCRIPTION = """\
Compute the metrics of a run written by `ttir run` and write, into RUN_DIR (or --out):

  report.md     markdown tables, every number labelled with the agent that produced it:
                success rate per setting (agent x guard x perturbation); the paper's Table 2
                (clean vs perturbed success, Δc = SR clean − SR perturbed and Δstep per
                component, and per AnTrap STAR layer); clean → perturbed per perturbation type
                (Figures 6/7); failed episodes with and without the guard (Figure 4); robust
                success rate (RSR, D-GARA); pass@k (unbiased estimator); action difference rate
                (ADR, RealGUINoise, deterministic tokens); safety (engagement with injected
                content); guard statistics (triggers per diagnoser, precision against the
                perturbation event log, sessions resolved vs budget spent, model calls and
                tokens per step, latency); and the automatic attribution of every failed episode
                to the paper's four error categories.
  metrics.json  the same numbers, machine-readable (also what `ttir compare` uses).
  *.png         plots, guard off and on in the same chart (fig4_failed_<agent>.png,
                per_type_<agent>.png, components_delta.png) — needs matplotlib
                (pip install 'ttir[plots]'); without it the report says the plots were skipped.
  viewer.html   a trajectory viewer (opens offline, from disk), episodes grouped by task and
                setting; it opens on the first failed episode (or the first one the guard
                recovered) at the step its trouble began. Per step: the screenshot with the
                action drawn on it, the perturbation events and the guard's findings and
                sessions; filters by task, perturbation, agent, guard, result, how the episode
                ended, whether the perturbation fired, and error category. Screenshots exist for
                the episodes the run kept (spec `screenshots: all | failures | none`; failures
                also keeps every episode in which the guard acted) and are loaded from
                RUN_DIR/episodes/ — with --self-contained they are embedded (downscaled to 240 px,
                each distinct frame once) so the one file can be sent to someone; its size is
                printed.

Success everywhere is done-gated, as AndroidWorld scores it: the task's state is verified AND the
agent ended the episode itself; perturbed figures count only episodes where the perturbation fired.
"""


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (holds episodes.jsonl)")
    p.add_argument("--out", type=output_folder, default=None, help="write the outputs here instead of RUN_DIR")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    p.add_argument("--no-viewer", action="store_true", help="skip viewer.html")
    p.add_argument("--self-contained", action="store_true",
                   help="embed the screenshots into viewer.html (downscaled): one file to share; its size is printed")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.report import write_report

    from experiments.report import VIEWER_HTML, human_size

    if args.self_contained and args.no_viewer:  # the one file it makes was not asked for: it was ignored
        raise ValueError("--self-contained embeds the screenshots in viewer.html, and --no-viewer writes none; "
                         "give one of them")
    paths = write_report(args.run_dir, args.out, plots=not args.no_plots, viewer=not args.no_viewer,
                         self_contained=args.self_contained)
    for p in paths:
        note = f"  (self-contained, {human_size(p.stat().st_size)})" if args.self_contained and p.name == VIEWER_HTML else ""
        print(f"{p}{note}")
    return 0
