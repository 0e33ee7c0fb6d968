"""``ttir run SPEC``: run an experiment spec (resumable)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(
        name, help=help_text,
        description="Run every combination of an experiment spec (tasks x perturbations x agents x guard modes x "
        "seeds x repeats) on simulated phones in worker processes. One JSON line per finished episode goes to "
        "RUN_DIR/episodes.jsonl, with trajectories (and screenshots) under RUN_DIR/episodes/. Running the same "
        "command again resumes: finished episodes are skipped, none is duplicated. One run at a time per RUN_DIR (a "
        "second is refused, naming the first), and one spec: resuming with a changed spec is refused unless --force. "
        "Then: ttir report RUN_DIR.",
    )
    p.add_argument("spec", type=Path, help="experiment spec (YAML), e.g. experiments/specs/androidreality.yaml")
    p.add_argument("--out", type=Path, default=None, help="run directory (default runs/<spec name>)")
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: the spec's `workers`)")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local worker processes, or a Ray cluster (pip install 'ttir[ray]')")
    p.add_argument("--address", default=None, help="Ray cluster address (auto, or HOST:PORT); with --executor ray")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (logs only)")
    p.add_argument("--report", action="store_true", help="write the report when the run finishes")
    p.add_argument("--retry-errors", action="store_true",
                   help="also run again the episodes recorded as errors (an episode that raised; their records are replaced)")
    p.add_argument("--force", action="store_true",
                   help="resume RUN_DIR even though its episodes came from another spec (their records are mixed; "
                   "the earlier spec is kept as RUN_DIR/spec.N.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.runner import run as run_spec
    from experiments.spec import ExperimentSpec

    spec = ExperimentSpec.from_yaml(args.spec)
    out = args.out or Path("runs") / spec.name
    # an --address without --executor ray was dropped without a word: the run went to local workers
    options = {"address": args.address} if args.executor == "ray" or args.address is not None else {}
    summary = run_spec(spec, out, workers=args.workers, executor=args.executor, progress=not args.no_progress,
                       retry_errors=args.retry_errors, force=args.force, **options)
    print(f"{summary['ran']} episodes run, {summary['skipped']} already done, "
          f"{summary['errors_this_run']} errors, {summary['elapsed_s']} s -> {Path(out).resolve()}")
    if args.report:
        from experiments.report import write_report

        paths = write_report(out)
        print("report: " + ", ".join(str(p) for p in paths))
    else:
        print(f"next: ttir report {out}")
    return 1 if summary["errors_this_run"] else 0
