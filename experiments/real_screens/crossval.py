"""Out-of-fold figures of the free tier on ``dev``: the screen model as it would do on apps it never saw.

    python -m experiments.real_screens.crossval [--seed 0] [--out report.json] [--cases]

The shipped model was trained on all of ``dev``, so ``ttir tune eval --real --split dev`` scores
it on its own training screens (in-sample figures flatter). This module splits ``dev`` into the
repository-grouped folds :mod:`experiments.real_screens.train` uses; for each fold it trains the
screen and control models on the other folds exactly as ``ttir tune train --real`` does
(:func:`experiments.real_screens.train.fit_models`: C and thresholds by grouped cross-validation
inside the training folds), writes them to a temporary model file and runs the whole guard
(:func:`experiments.real_screens.evaluate.evaluate`) on the held-out fold's screens with it.
The held-out results together give the figures ``ttir tune eval --real`` prints, out of fold.

What it holds: :func:`out_of_fold_results` (the per-screen results) and :func:`main`.
Training needs scikit-learn (the ``train`` extra); only ``dev`` is read.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

import numpy as np

from diagnosers.signals.screen_model import save_screen_model
from experiments.real_screens.corpus import Screen, load_corpus
from experiments.real_screens.evaluate import RULES_ALONE_TIER, ScreenResult, evaluate, render, summarize
from experiments.real_screens.train import SPLIT, control_dataset, dataset, fit_models, grouped_folds
from ttir.core.config import TTIRConfig


def controls_of(controls: tuple, keep: list[int]) -> tuple:
    """The control rows of the screens ``keep``, their owners renumbered.

    Args:
        controls: :func:`experiments.real_screens.train.control_dataset` of the full screen list.
        keep: indices into that list of the screens to keep, in their new order.

    Returns:
        The same five parts, only the kept screens' rows, owners indexing ``keep``.
    """
    cf, cy, cbad, owner, roles = controls
    new = {k: i for i, k in enumerate(keep)}
    rows = [j for j, o in enumerate(owner) if o in new]
    return ([cf[j] for j in rows], cy[rows], cbad[rows], [new[owner[j]] for j in rows], [roles[j] for j in rows])


def out_of_fold_results(seed: int = 0, progress: bool = False, tiers: Optional[list[str]] = None,
                        models: Optional[Path] = None) -> tuple[list[ScreenResult], list[dict[str, Any]]]:
    """Every ``dev`` screen scored by a model trained without its repository's fold.

    Args:
        seed: the folds' and the solver's seed (the training command's default is 0).
        progress: show progress bars.
        tiers: the tiers to score (default: the free tier and the rules alone).
        models: a folder to keep the fold models in and to reuse them from (a change to the
            guard alone is then scored without training again); None: a temporary folder.

    Returns:
        The per-screen results (held-out folds together) and each fold's thresholds.
    """
    tiers = tiers or ["rules", RULES_ALONE_TIER]
    screens: list[Screen] = load_corpus(SPLIT)
    feats, y, kept, fixed = dataset(screens, progress)
    controls = control_dataset(kept)
    folds = np.array(grouped_folds(kept, seed))
    results: list[ScreenResult] = []
    per_fold: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ttir-oof-") as tmp:
        where = models or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for k in sorted(set(folds.tolist())):
            path = where / f"seed{seed}-fold{k}.npz"
            if not path.exists():
                train_idx = [i for i in range(len(kept)) if folds[i] != k]
                fitted = fit_models([feats[i] for i in train_idx], y[train_idx], [kept[i] for i in train_idx],
                                    controls_of(controls, train_idx), seed, fixed[train_idx])
                save_screen_model(path, fitted["screen"], fitted["control"], fitted["thresholds"],
                                  f"fold {k} of dev")
            from diagnosers.signals.screen_model import load_screen_model

            m = load_screen_model(str(path))
            per_fold.append({"fold": k, "threshold": m.threshold, "uncertain": m.uncertain,
                             "control_threshold": m.control_threshold, "control_veto": m.control_veto})
            cfg = TTIRConfig().override({"interference.screen_model_file": str(path)})
            held = [kept[i] for i in range(len(kept)) if folds[i] == k]
            results += evaluate(held, cfg, tiers, progress=progress)
    return results, per_fold


def headline(report: dict[str, Any], tier: str = "rules") -> dict[str, Any]:
    """The figures the acceptance names, from a :func:`summarize` report.

    Args:
        report: the report.
        tier: whose detection figures (recall, false alarms).

    Returns:
        The figures by name; what the guarded agent did (taps, actions, first action) only for
        the tier the guard stepped with (``report["guard"]["tier"]``): the rules alone, scored
        beside it, took no step of their own.
    """
    t = report["tiers"][tier]
    kinds = t["interference"]["per_kind"]
    g = report["guard"]
    fa = t["false_alarms"]
    detection = {
        "recall": f"{t['interference']['detected']}/{t['interference']['n']}",
        **{f"recall_{k}": f"{kinds[k]['detected']}/{kinds[k]['n']}" for k in ("first_run", "other_popup", "whats_new")
           if k in kinds},
        "fa_ordinary": f"{fa['ordinary']['false_alarms']}/{fa['ordinary']['n']}",
        "fa_wanted": f"{fa['wanted']['false_alarms']}/{fa['wanted']['n']}",
    }
    if tier != g["tier"]:
        return detection
    return {
        **detection,
        "engage_or_destructive_taps": g["engage_or_destructive_taps"],
        "actions_on_non_interference": f"{g['actions_on_non_interference']}/"
                                       f"{sum(fa[c]['n'] for c in ('ordinary', 'wanted'))}",
        "first_action_clears": f"{g['cleared']}/{g['clearable']}",
        "back_where_back_harms": g["back_where_back_harms"],
        "session_engage_or_destructive": report["session"]["engage_or_destructive_taps"],
        "session_actions_on_non_interference": report["session"]["actions_on_non_interference"],
    }


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the solver")
    p.add_argument("--out", type=Path, help="also save the JSON report here")
    p.add_argument("--cases", action="store_true", help="list every miss, false alarm and bad action")
    p.add_argument("--models", type=Path, help="keep the fold models here and reuse them (delete it after a "
                                                "change to the features or the training)")
    args = p.parse_args(argv)
    tiers = ["rules", RULES_ALONE_TIER]
    results, per_fold = out_of_fold_results(args.seed, progress=True, tiers=tiers, models=args.models)
    report = summarize(results, tiers, seed=args.seed)
    report["folds"] = per_fold
    report["headline"] = headline(report)
    print(render(report, results, f"{SPLIT}, out of fold", show=args.cases))
    print("\n" + json.dumps({"folds": per_fold, "headline": report["headline"]}, indent=1))
    if args.out:
        report["results"] = [asdict(r) for r in results]
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
