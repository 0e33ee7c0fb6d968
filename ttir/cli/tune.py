"""``ttir tune build | eval | sweep | prompts | train``: tune the guard's diagnosers on labelled steps."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ttir.cli.arguments import option_flag, output_folder, positive_count, share, writable_file

FORMAT_HELP = """\
A dataset is a folder with steps.jsonl (from `ttir tune build`) or any JSONL file
you write yourself, one decision step per line, paths relative to the file:

  {"goal": "Turn on Wi-Fi",
   "observation": {"xml": "s1.xml", "screenshot": "s1.png"},
   "history": [{"observation": {"xml": "s0.xml"},
                "action": {"action_type": "click", "x": 540, "y": 860},
                "summary": "Tap \\"Network & internet\\""}],
   "labels": {"previous_intended_effect_satisfied": "yes", "interference_present": false}}
  (one line in the file; folded here to be read)

Screenshots and XML are both optional (a row without a screenshot is judged from
the tree). Labels: interference_present (true/false), previous_intended_effect_satisfied
("yes"/"no"), repeat_failure_detected (true/false), task_alignment ("on_track"/"off_track");
any subset, missing ones are not scored. Full format: experiments/tune/schema.py.
"""

DESCRIPTION = """\
Measure and tune the four diagnosers of the guard (stuck_loop, action_effect,
interference, task_alignment) on labelled steps:

  1. record episodes (with ground truth):
       ttir run experiments/specs/tuning.yaml --out runs/tuning
  2. turn them into labelled steps:
       ttir tune build runs/tuning --out datasets/tuning
  3. precision / recall per diagnoser:
       ttir tune eval datasets/tuning
  4. find better thresholds:
       ttir tune sweep datasets/tuning --param stuck_loop.window=2,3,4,5
  5. compare diagnose prompts (needs a model):
       ttir tune prompts datasets/tuning --prompt a.md --prompt b.md
  6. retrain the screen model on the real screens' dev split (needs ttir[train]):
       ttir tune train --real

""" + FORMAT_HELP


def register(sub: Any, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="tune_command", metavar="STEP")
    _build_parser(tsub)
    _eval_parser(tsub)
    _sweep_parser(tsub)
    _prompts_parser(tsub)
    _train_parser(tsub)
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])


# ------------------------------------------------------------------------- shared


def _selection_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("which steps")
    g.add_argument("--perturbation", action="append", default=None, metavar="NAME",
                   help="only steps of this perturbation (repeatable; 'clean' for clean episodes)")
    g.add_argument("--agent", action="append", default=None, metavar="NAME", help="only steps of this agent (repeatable)")
    g.add_argument("--fraction", type=float, default=None, metavar="F",
                   help="a seeded share of the episodes, e.g. 0.1 for a quick look (default: all)")
    g.add_argument("--seed", type=int, default=0, help="seed of --fraction (default 0)")


def _selection(args: argparse.Namespace) -> dict[str, Any]:
    if args.fraction is not None and not 0.0 < args.fraction <= 1.0:
        raise ValueError(f"--fraction={args.fraction}: expected a share of episodes in (0, 1]")
    return {"fraction": args.fraction, "seed": args.seed,
            "perturbations": set(args.perturbation) if args.perturbation else None,
            "agents": set(args.agent) if args.agent else None}


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, metavar="TTIR_YAML",
                   help="a guard config (TTIRConfig YAML); its thresholds, prompts and model endpoint are used")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one setting, e.g. --set stuck_loop.window=4 (repeatable)")


def _config(args: argparse.Namespace) -> Any:
    from ttir.core.config import TTIRConfig
    from ttir.core.validation import load_yaml_text

    cfg = TTIRConfig.from_yaml(args.config) if args.config else TTIRConfig()
    overrides = {}
    for item in args.set:
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE such as stuck_loop.window=4")
        k, _, v = item.partition("=")
        overrides[k.strip()] = load_yaml_text(v, f"--set {item!r}")  # bounded; a syntax error is one line
    return cfg.override(overrides) if overrides else cfg


def _output_args(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print the {what} as JSON instead of tables")
    p.add_argument("--out", dest="out_json", type=writable_file, default=None, metavar="FILE",
                   help=f"also save the JSON {what} here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _emit(args: argparse.Namespace, report: dict[str, Any], text: str) -> None:
    if getattr(args, "out_json", None):
        Path(args.out_json).write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(text)


# ------------------------------------------------------------------------- build


def _build_parser(tsub: Any) -> None:
    p = tsub.add_parser(
        "build", help="recorded episodes -> a labelled step dataset",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Turn the episodes of a run directory into one labelled row per decision step: the goal, the "
                    "screen, the last --history steps, and the four labels derived from the harness's ground truth "
                    "(overlays on screen, what happened to each action, the real foreground app). Screenshots and XML "
                    "dumps are hard-linked (or copied) into DATASET/files. Record the run with save_xml: true and "
                    "screenshots: all, as experiments/specs/tuning.yaml does.\n\n"
                    "How each label is derived: experiments/tune/labels.py (module docstring).",
        epilog="examples:\n"
               "  ttir tune build runs/tuning --out datasets/tuning\n"
               "  ttir tune build runs/tuning --out datasets/sample --per-perturbation 6 --seed 0\n"
               "      (a seeded sample)\n\n"
               + FORMAT_HELP)
    p.add_argument("run_dir", type=Path, help="a run directory written by `ttir run` (episodes.jsonl + episodes/)")
    p.add_argument("--out", type=output_folder, required=True, metavar="DATASET", help="dataset folder to write")
    p.add_argument("--history", type=int, default=16, help="past steps kept per row (default 16)")
    p.add_argument("--link", choices=["hard", "copy", "symlink"], default="hard",
                   help="how screenshots / XML get into the dataset (default: hard links, copies across filesystems)")
    p.add_argument("--per-perturbation", type=positive_count, default=None, metavar="K",
                   help="keep a seeded sample of K task instances per perturbation (every agent of each)")
    p.add_argument("--seed", type=int, default=0, help="seed of --per-perturbation (default 0)")
    p.add_argument("--agent", action="append", default=None, metavar="NAME", help="only this agent (repeatable)")
    p.add_argument("--perturbation", action="append", default=None, metavar="NAME", help="only this perturbation (repeatable)")
    p.add_argument("--guard", action="append", default=None, metavar="MODE",
                   help="only episodes with this guard mode (default: off — the diagnosers' view of an unguarded agent)")
    p.add_argument("--force", action="store_true", help="replace an existing dataset in DATASET")
    p.set_defaults(func=_build)


def _build(args: argparse.Namespace) -> int:
    from experiments.tune.dataset import build

    s = build(args.run_dir, args.out, history=args.history, link=args.link, per_perturbation=args.per_perturbation,
              seed=args.seed, agents=args.agent, perturbations=args.perturbation, guard=args.guard or ("off",),
              force=args.force)
    print(f"{s['rows']} steps from {s['episodes']} episodes -> {Path(args.out).resolve()}/steps.jsonl")
    if s["skipped_without_truth"]:
        print(f"skipped {len(s['skipped_without_truth'])} episode(s) recorded without ground truth")
    for k, counts in s["labels"].items():
        print(f"  {k}: " + ", ".join(f"{v} {c}" for v, c in sorted(counts.items())))
    print(f"next: ttir tune eval {args.out}")
    return 0


# -------------------------------------------------------------------------- eval


def _eval_parser(tsub: Any) -> None:
    p = tsub.add_parser(
        "eval", help="precision / recall / F1 of every diagnoser on a dataset",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run every diagnoser on every step as the live guard would (same context: goal, screen, history) "
                    "and score it against the labels: confusion matrix, precision, recall, F1, the false-positive "
                    "rate on steps of clean episodes, breakdowns by perturbation and by label reason. The rule tier "
                    "always runs (free); with a model endpoint (vlm.base_url in --config, or TTIR_VLM_BASE_URL) the "
                    "vlm and cascade tiers run too, with model calls and tokens per step. Without one, the report "
                    "still says on how many steps a cascade would call the model.",
        epilog="examples:\n"
               "  ttir tune eval datasets/tuning\n"
               "  ttir tune eval datasets/tuning --fraction 0.1 --brief          a quick look\n"
               "  ttir tune eval my_phone.jsonl --config ttir.yaml --tiers rules,cascade\n"
               "  ttir tune eval datasets/tuning --json > eval.json\n"
               "  ttir tune eval --real --split dev --cases              real screens: every miss and bad tap\n"
               "  ttir tune eval --real --split dev --oracle             the recoveries given a perfect verdict\n"
               "  ttir tune eval --real --round 18                       a new collection round's fresh check\n\n"
               + FORMAT_HELP)
    p.add_argument("dataset", type=Path, nargs="?", help="dataset folder (steps.jsonl) or a JSONL file")
    p.add_argument("--real", action="store_true",
                   help="score the interference diagnoser and the guard on the real-screen corpus "
                        "(experiments/real_screens) instead of a dataset: recall per kind, false alarms on ordinary "
                        "screens and on wanted dialogs, what a guarded wait-only agent taps")
    p.add_argument("--split", choices=["dev", "test", "all"], default=None,
                   help="with --real: which split (default test, or all with --round; tune on dev only)")
    p.add_argument("--round", type=int, default=None, metavar="N", dest="round_",
                   help="with --real: only the repositories of collection round N (rounds.yaml), both splits "
                        "unless --split says otherwise: a new round's fresh check, scored once before anything "
                        "is tuned or trained on it")
    p.add_argument("--cases", action="store_true", help="with --real --split dev: list every miss, false alarm and "
                                                        "bad action (the test split's are never listed)")
    p.add_argument("--plot", type=writable_file, default=None, metavar="PNG",
                   help="with --real: also draw the report — recall per collection round with its 95 %% interval, "
                        "the guard's actions per kind of screen (needs matplotlib: pip install 'ttir[plots]')")
    p.add_argument("--oracle", nargs="?", const="vlm", choices=["vlm", "cascade"], default=None, metavar="MODE",
                   help="with --real: also run the guard with the label as a perfect interference verdict, in the "
                        "place of a model: 'vlm' (default) asks it on every screen — what the recoveries tap on every "
                        "pop-up, not only on those the rules find; 'cascade' only where the rules are uncertain — "
                        "the most a perfect model adds to the cascade. An ablation: no endpoint, no model measured")
    p.add_argument("--session-steps", type=int, default=None, metavar="N",
                   help="with --real: guarded steps per screen (default 3). The first is the headline; the ones "
                        "after it see the same screen again, as if each action had had no effect, and show what "
                        "the guard's fallbacks would tap")
    _config_args(p)
    p.add_argument("--tiers", default="auto",
                   help="comma-separated tiers: rules, vlm, cascade (default auto: rules, plus vlm and cascade when an "
                        "endpoint is configured)")
    _selection_args(p)
    p.add_argument("--workers", type=positive_count, default=None, help="processes for the rule tier (default 2)")
    p.add_argument("--min-precision", type=share, default=0.95, help="target precision (default 0.95)")
    p.add_argument("--min-recall", type=share, default=0.90, help="target recall (default 0.90)")
    p.add_argument("--max-clean-fpr", type=share, default=0.01,
                   help="target false-positive rate on clean steps (default 0.01)")
    p.add_argument("--brief", action="store_true", help="only the summary table per tier (no breakdowns)")
    _output_args(p, "report")
    p.set_defaults(func=_eval)


def _tiers(spec: str, cfg: Any) -> list[str]:
    from experiments.tune.evaluate import TIERS
    from experiments.tune.prompts_ab import endpoint_configured

    if spec == "auto":
        return ["rules", "cascade", "vlm"] if endpoint_configured(cfg) else ["rules"]
    tiers = [t.strip() for t in spec.split(",") if t.strip()]
    bad = [t for t in tiers if t not in TIERS]
    if bad or not tiers:
        raise ValueError(f"--tiers {spec!r}: expected a comma-separated list of {', '.join(TIERS)}")
    if any(t != "rules" for t in tiers) and not endpoint_configured(cfg):
        raise ValueError(f"--tiers {spec!r}: the vlm and cascade tiers need a model endpoint; set vlm.base_url in "
                         "--config or TTIR_VLM_BASE_URL")
    if "rules" not in tiers:
        tiers.insert(0, "rules")  # free, and the cascade's call share is measured on it
    return tiers


# the options of `ttir tune eval` that only one of its two sources reads: given to the other one, they
# were ignored without a word (`--real --fraction 0.1` scored every screen); each refuses the other's
REAL_ONLY_OPTIONS = ("cases", "plot", "session_steps", "oracle", "split", "round_")
DATASET_ONLY_OPTIONS = ("dataset", "perturbation", "agent", "fraction", "workers", "brief")


def _other_sources_options(args: argparse.Namespace) -> None:
    """Refuse an option of the other source (the real-screen corpus or a dataset); fill in defaults."""
    others = DATASET_ONLY_OPTIONS if args.real else REAL_ONLY_OPTIONS
    given = [n for n in others if getattr(args, n) not in (None, False)]
    if given:
        names = ", ".join("DATASET" if n == "dataset" else option_flag(n) for n in given)
        if args.real:
            raise ValueError(f"{names}: only without --real (for a DATASET's steps); --real scores the screens of the "
                             "real-screen corpus and reads none of them")
        raise ValueError(f"{names}: only with --real (for the screens of the real-screen corpus); a DATASET's "
                         "evaluation reads none of them")
    args.session_steps = 3 if args.session_steps is None else args.session_steps
    args.workers = 2 if args.workers is None else args.workers


def _eval(args: argparse.Namespace) -> int:
    from experiments.tune.evaluate import Variant, evaluate_dataset, summarise
    from experiments.tune.tables import eval_text

    _other_sources_options(args)
    cfg = _config(args)
    tiers = _tiers(args.tiers, cfg)
    judge = None
    if any(t != "rules" for t in tiers):
        from diagnosers.vlm_judge import VLMJudge

        judge = VLMJudge(None, cfg)
    if args.real:
        if args.oracle:
            from experiments.real_screens.oracle import ORACLE_TIER

            tiers = [*tiers, ORACLE_TIER]
        return _eval_real(args, cfg, tiers, judge)
    if args.dataset is None:
        raise ValueError("ttir tune eval: give a DATASET, or --real for the real-screen corpus")
    variants = [Variant(t, t, cfg, judge=judge if t != "rules" else None) for t in tiers]
    outcomes = evaluate_dataset(args.dataset, variants, workers=args.workers, select=_selection(args),
                                progress=not args.no_progress and not args.json)
    if not outcomes:
        raise ValueError(f"{args.dataset}: no step matched the selection")
    report = summarise(outcomes, variants, targets={"precision": args.min_precision, "recall": args.min_recall,
                                                    "clean_fpr": args.max_clean_fpr})
    report["dataset"] = str(args.dataset)
    _emit(args, report, eval_text(report, breakdown=not args.brief))
    return 0


def _eval_real(args: argparse.Namespace, cfg: Any, tiers: list[str], judge: Any) -> int:
    from experiments.real_screens.corpus import CORPUS_DIR, load_corpus
    from experiments.real_screens.evaluate import evaluate, render, summarize
    from experiments.tune.evaluate import TIERS, Variant, evaluate_dataset, summarise
    from experiments.tune.tables import eval_text

    if args.session_steps < 1:
        raise ValueError(f"--session-steps must be at least 1 (the headline step), got {args.session_steps}")
    if args.plot is not None:
        try:
            from experiments.reports.plots import plot_real_screens
        except ImportError as exc:
            raise ValueError(f"--plot {args.plot}: needs matplotlib (pip install 'ttir[plots]'): {exc}") from exc
    split = args.split or ("all" if args.round_ is not None else "test")
    screens = load_corpus(split)
    if not screens:
        raise ValueError(f"the real-screen corpus has no screen in split {split!r}")
    if args.round_ is not None:
        rounds = sorted({s.round for s in screens if s.round})
        screens = [s for s in screens if s.round == args.round_]
        if not screens:
            raise ValueError(f"--round {args.round_}: no screen of the {split!r} split came in that collection round; "
                             f"rounds.yaml numbers rounds {rounds[0]}–{rounds[-1]}" if rounds else
                             f"--round {args.round_}: the corpus records no collection rounds (rounds.yaml)")
        split = f"round {args.round_}, {split}"
    held_out = any(s.split == "test" for s in screens)
    if args.cases and held_out:
        # the protocol of the corpus (experiments/real_screens/README.md), kept by the tool itself
        raise ValueError(f"--cases lists every miss, false alarm and bad action, and the {split!r} screens include "
                         "the test split, which is for reporting only (scored once per change, its cases never "
                         "read); list dev's instead: --split dev --cases (with --round N for a round's dev half)")
    model = None
    if cfg.interference.screen_model:
        from diagnosers.signals.screen_model import load_screen_model
        from experiments.real_screens.evaluate import RULES_ALONE_TIER

        model = load_screen_model(cfg.interference.screen_model_file)
        tiers = [tiers[0], RULES_ALONE_TIER, *tiers[1:]]  # the free tier first: the guard's figures are of it
    results = evaluate(screens, cfg, tiers, judge=judge, progress=not args.no_progress and not args.json,
                       session_steps=args.session_steps, oracle_mode=args.oracle or "vlm")
    report = summarize(results, tiers)
    report["split"] = split
    report["screen_model"] = model.trained_on if model is not None else None
    if args.oracle:
        report["guard"]["oracle_mode"] = args.oracle
    if not held_out:  # per-screen results of dev only: the JSON of a test score must not be its cases
        report["cases"] = [r.__dict__ for r in results]
    report["round"] = args.round_
    text = render(report, results, split, show=args.cases)
    if args.round_ is not None:
        _emit(args, report, text)
        return 0  # the labelled steps are not per round
    # the labelled steps of real runs (typing into forms, recorded traces): stuck loop and action effect
    variants = [Variant(t, t, cfg, diagnosers=("stuck_loop", "action_effect"), judge=judge if t != "rules" else None)
                for t in tiers if t in TIERS]  # the oracle answers interference on single screens only
    select = {} if split == "all" else {"splits": {split}}
    outcomes = evaluate_dataset(CORPUS_DIR / "steps.jsonl", variants, workers=1, select=select)
    if outcomes:
        steps = summarise(outcomes, variants, targets={"precision": args.min_precision, "recall": args.min_recall,
                                                       "clean_fpr": args.max_clean_fpr})
        report["steps"] = steps
        text += "\n\n## labelled steps of real runs (experiments/real_screens/steps.jsonl)\n\n" + eval_text(steps, breakdown=False)
    if args.plot is not None:
        text += f"\n\nplot: {plot_real_screens(report, args.plot)}"
    _emit(args, report, text)
    return 0


# ------------------------------------------------------------------------- sweep


def _sweep_parser(tsub: Any) -> None:
    p = tsub.add_parser(
        "sweep", help="evaluate a grid of rule-tier thresholds and write the best config",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate every combination of the given settings with the rule tier and pick, per diagnoser, "
                    "the one with the highest F1 whose false-positive rate stays under --max-fpr (measured on clean "
                    "steps; on all negative steps if the dataset has none). A diagnoser's settings only affect that "
                    "diagnoser, so each diagnoser's own grid is evaluated separately. Writes a table and the best "
                    "settings, over the base config, as a YAML file that `ttir.TTIRConfig.from_yaml` (and --config) "
                    "load. Any numeric or boolean field of the stuck_loop, action_effect, interference and "
                    "task_alignment sections can be swept (see TTIRConfig).",
        epilog="examples:\n"
               "  ttir tune sweep datasets/tuning --param stuck_loop.window=2,3,4,5\n"
               "  ttir tune sweep datasets/tuning --param stuck_loop.window=3,4 \\\n"
               "      --param stuck_loop.screen_hash_distance=2,4,6 \\\n"
               "      --param interference.min_score=0.5,0.6,0.7 --max-fpr 0.01 --best tuned.yaml\n"
               "  ttir tune eval datasets/tuning --config tuned.yaml      check the tuned config\n"
               "  ttir run SPEC with guard_config, or ttir.guard(agent, config=TTIRConfig.from_yaml('tuned.yaml'))")
    p.add_argument("dataset", type=Path, help="dataset folder (steps.jsonl) or a JSONL file")
    p.add_argument("--param", action="append", required=True, metavar="KEY=V1,V2,...",
                   help="a setting and the values to try, e.g. stuck_loop.window=2,3,4,5 (repeatable)")
    p.add_argument("--max-fpr", type=share, default=0.01, help="false-positive ceiling for the best setting (default 0.01)")
    _config_args(p)
    _selection_args(p)
    p.add_argument("--workers", type=positive_count, default=2, help="processes (default 2)")
    p.add_argument("--best", type=Path, default=None, metavar="YAML",
                   help="where to write the best config (default: best_config.yaml beside the dataset)")
    _output_args(p, "results")
    p.set_defaults(func=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from experiments.tune.sweep import parse_param, sweep, write_best
    from experiments.tune.tables import sweep_text

    params = [parse_param(x) for x in args.param]
    cfg = _config(args)
    result = sweep(args.dataset, params, base=cfg, max_fpr=args.max_fpr, workers=args.workers,
                   select=_selection(args), progress=not args.no_progress and not args.json)
    if result["steps"] == 0:
        raise ValueError(f"{args.dataset}: no step matched the selection")
    ds = Path(args.dataset)
    best_path = args.best or ((ds if ds.is_dir() else ds.parent) / "best_config.yaml")
    write_best(result, best_path, dataset=str(args.dataset))
    report = {k: v for k, v in result.items() if k != "config"}
    report["best_config"] = str(best_path)
    _emit(args, report, sweep_text(result) + f"\n\nbest config -> {best_path}\nnext: ttir tune eval {args.dataset} "
          f"--config {best_path}")
    return 0


# ----------------------------------------------------------------------- prompts


def _train_parser(tsub: Any) -> None:
    p = tsub.add_parser(
        "train", help="retrain the learned screen model on the real-screen corpus (dev split only)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train the screen model the guard's free tier uses with its rules (interference.screen_model): "
                    "a logistic regression over hashed text and structure of each screen, and a second one that "
                    "picks the control that closes a pop-up, on the dev split of experiments/real_screens only. "
                    "The regularisation and the thresholds are chosen by cross-validation grouped by repository "
                    "(no app in two folds). The same command on the same corpus writes the same model; the shipped "
                    "file is diagnosers/data/screen_model.npz, its report (training data, cross-validated figures) "
                    "screen_model.json beside it. Needs scikit-learn: pip install 'ttir[train]'. The guard itself "
                    "reads the file with numpy alone.",
        epilog="examples:\n"
               "  ttir tune train --real                               regenerate the shipped model\n"
               "  ttir tune train --real --out my_model.npz            a model of your own; use it with\n"
               "                                                       interference.screen_model_file: my_model.npz\n"
               "  ttir tune eval --real --split dev --config my.yaml   then score it")
    p.add_argument("--real", action="store_true", required=True,
                   help="train on the real-screen corpus (the only training data there is)")
    p.add_argument("--out", type=writable_file, default=None, metavar="NPZ",
                   help="model file to write (default: the shipped diagnosers/data/screen_model.npz)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the solver (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    try:
        import sklearn  # noqa: F401  (the optional extra, checked here for a clear message)
    except ImportError as exc:
        raise ValueError("ttir tune train needs scikit-learn: pip install 'ttir[train]'") from exc
    from diagnosers.signals.screen_model import DEFAULT_MODEL
    from experiments.real_screens.train import train

    out = args.out or DEFAULT_MODEL
    r = train(out, args.seed, progress=not args.no_progress)
    cv = r["cross_validation"][str(r["C"])]
    print(f"trained on {r['trained_on']}")
    print(f"wrote {out} ({r['bytes']:,} bytes) and {out.with_suffix('.json').name}")
    print(f"cross-validated on dev (repositories grouped, {r['folds']} folds): recall {cv['recall']:.3f} at "
          f"p >= {r['threshold']:.3f}; false alarms {cv['ordinary']['at_or_above']} of {cv['ordinary']['n']} ordinary, "
          f"{cv['wanted']['at_or_above']} of {cv['wanted']['n']} wanted; uncertain at p >= {r['uncertain']:.3f}")
    c = r["controls"]
    print(f"controls: {c['n']} on {c['overlays']} located pop-ups; a control of no known role dismisses at "
          f"p >= {c['threshold']:.2f}")
    print("next: ttir tune eval --real --split dev")
    return 0


def _prompts_parser(tsub: Any) -> None:
    p = tsub.add_parser(
        "prompts", help="compare diagnose prompt files on the same steps (needs a model endpoint)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Ask the configured model (vlm section of --config, or TTIR_VLM_BASE_URL / TTIR_VLM_MODEL / "
                    "TTIR_VLM_API_KEY) the diagnoser question on every selected step once per prompt file, and "
                    "score each prompt per diagnoser: precision, recall, F1, bad replies, calls and tokens per step. "
                    "The rule tier is scored alongside as the free baseline. A prompt file is a copy of "
                    "prompts/diagnose.md with your edits; it may use $goal, $step, $history, $pending and $screen. "
                    "Model calls cost money and time: start with --fraction.",
        epilog="examples:\n"
               "  cp prompts/diagnose.md mine.md   # edit mine.md\n"
               "  TTIR_VLM_BASE_URL=http://localhost:8000/v1 TTIR_VLM_MODEL=qwen2.5-vl \\\n"
               "      ttir tune prompts datasets/tuning --prompt prompts/diagnose.md --prompt mine.md \\\n"
               "        --fraction 0.05")
    p.add_argument("dataset", type=Path, help="dataset folder (steps.jsonl) or a JSONL file")
    p.add_argument("--prompt", action="append", required=True, metavar="FILE",
                   help="a diagnose prompt file, or a name from prompts/ (repeat for each prompt to compare)")
    _config_args(p)
    _selection_args(p)
    p.add_argument("--no-baseline", action="store_true", help="do not score the rule tier alongside")
    _output_args(p, "report")
    p.set_defaults(func=_prompts)


def _prompts(args: argparse.Namespace) -> int:
    from experiments.tune.prompts_ab import compare
    from experiments.tune.tables import prompts_text

    cfg = _config(args)
    report = compare(args.dataset, args.prompt, config=cfg, select=_selection(args), baseline=not args.no_baseline,
                     progress=not args.no_progress and not args.json)
    if report["steps"] == 0:
        raise ValueError(f"{args.dataset}: no step matched the selection")
    _emit(args, report, prompts_text(report))
    return 0
