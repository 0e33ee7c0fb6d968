"""The free tier on ``dev`` screens of rounds its rules were not written from: train on the early rounds, score the later.

    python -m experiments.real_screens.later_rounds [--upto 14] [--rule-weight 0.5 1.0] [--seed 0]

The rule tier was written by hand from the corpus's early ``dev`` rounds; the screen model reads
the rules' verdict as evidence. Out-of-fold figures on all of ``dev``
(:mod:`experiments.real_screens.crossval`) therefore flatter the rules: their verdict is in
sample on the screens they were written from (rules alone find 81 % of rounds 1–14's ``dev``
interruptions, against 56 % and 71 % of rounds 15–21's and 22–29's). This module asks how the
free tier does on apps the rules never saw, without touching ``test``: it trains the screen and
control models on the ``dev`` screens of rounds up to ``--upto`` exactly as ``ttir tune train
--real`` does (:func:`experiments.real_screens.train.fit_models`), and runs the whole guard
(:func:`experiments.real_screens.evaluate.evaluate`) on the ``dev`` screens of the later rounds.

With ``--rule-weight`` it compares norms of the ``rule`` feature group (the shipped model's is
:data:`diagnosers.signals.screen_model.GROUP_WEIGHT`); the table prints one row per weight and
one for the rules alone.

What it holds: :func:`later_rounds` (the figures) and :func:`main`. Training needs
scikit-learn (the ``train`` extra); only ``dev`` is read.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

from diagnosers.signals.screen_model import GROUP_WEIGHT, save_screen_model
from experiments.real_screens.corpus import load_corpus
from experiments.real_screens.crossval import controls_of, headline
from experiments.real_screens.evaluate import RULES_ALONE_TIER, evaluate, summarize
from experiments.real_screens.train import SPLIT, control_dataset, dataset, fit_models
from ttir.core.config import TTIRConfig

DEFAULT_UPTO = 14  # the last round the rules were written from (rounds.yaml: round 15 is the screen model's first fresh check)
COLUMNS = ("recall", "recall_first_run", "recall_other_popup", "recall_whats_new", "fa_ordinary", "fa_wanted",
           "engage_or_destructive_taps", "actions_on_non_interference", "first_action_clears")


def later_rounds(upto: int = DEFAULT_UPTO, rule_weights: Optional[list[float]] = None, seed: int = 0,
                 progress: bool = False) -> list[dict[str, Any]]:
    """The free tier trained on ``dev`` rounds up to ``upto``, scored on the later rounds' ``dev`` screens.

    Args:
        upto: the last round trained on; every later round is scored.
        rule_weights: the ``rule`` group's norms to compare (default: the shipped one).
        seed: the folds' and the solver's seed.
        progress: show progress bars.

    Returns:
        One row per weight (``rule_weight``, ``C``, ``threshold`` and the :func:`headline`
        figures of the free tier), then the rules alone (``rule_weight`` None).

    Raises:
        ValueError: no round up to ``upto``, or none after it, has ``dev`` screens.
    """
    screens = load_corpus(SPLIT)
    if any(s.round is None for s in screens):
        missing = sorted({s.repo for s in screens if s.round is None})[:3]
        raise ValueError(f"rounds.yaml names no round for {missing}: expected every dev repository in a round")
    before = sum(1 for s in screens if s.round is not None and s.round <= upto)
    if not before or before == len(screens):
        raise ValueError(f"upto={upto}: {before} dev screens up to it and {len(screens) - before} after it; "
                         f"expected some on both sides (rounds.yaml lists rounds "
                         f"{min(s.round or 0 for s in screens)} to {max(s.round or 0 for s in screens)})")
    weights = rule_weights or [GROUP_WEIGHT.get("rule", 1.0)]
    rows: list[dict[str, Any]] = []
    controls: Optional[tuple] = None  # the control rows do not depend on the screen features' weights
    for w in weights:
        norms = {**GROUP_WEIGHT, "rule": w}
        feats, y, kept, fixed = dataset(screens, progress, norms)
        controls = controls or control_dataset(kept)
        train_idx = [i for i, s in enumerate(kept) if s.round is not None and s.round <= upto]
        held = [s for s in kept if s.round is not None and s.round > upto]
        fitted = fit_models([feats[i] for i in train_idx], y[train_idx], [kept[i] for i in train_idx],
                            controls_of(controls, train_idx), seed, fixed[train_idx])
        with tempfile.TemporaryDirectory(prefix="ttir-later-") as tmp:
            path = Path(tmp) / "model.npz"
            save_screen_model(path, fitted["screen"], fitted["control"], fitted["thresholds"],
                              f"dev rounds up to {upto}", norms)
            cfg = TTIRConfig().override({"interference.screen_model_file": str(path)})
            tiers = ["rules", RULES_ALONE_TIER] if not rows else ["rules"]
            report = summarize(evaluate(held, cfg, tiers, progress=progress), tiers, seed=seed)
        rows.append({"rule_weight": w, "C": fitted["C"], "threshold": fitted["thresholds"]["threshold"],
                     **headline(report)})
        if RULES_ALONE_TIER in tiers:
            alone = {**headline(report, RULES_ALONE_TIER), "rule_weight": None, "C": None, "threshold": None}
    rows.append(alone)
    return rows


def render(rows: list[dict[str, Any]], upto: int) -> str:
    """A markdown table of :func:`later_rounds`' rows."""
    head = ["tier", "C", "threshold", *COLUMNS]
    lines = [f"dev rounds after {upto}, the free tier trained on dev rounds up to {upto}", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        tier = "rules alone" if r["rule_weight"] is None else f"rules + model, rule weight {r['rule_weight']:g}"
        lines.append("| " + " | ".join([tier, "" if r["C"] is None else f"{r['C']:g}",
                                        "" if r["threshold"] is None else f"{r['threshold']:.3f}",
                                        *(str(r.get(c, "")) for c in COLUMNS)]) + " |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upto", type=int, default=DEFAULT_UPTO, help="the last round trained on (default: %(default)s)")
    p.add_argument("--rule-weight", type=float, nargs="+", dest="rule_weights",
                   help="norms of the rule feature group to compare (default: the shipped one)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the solver")
    args = p.parse_args(argv)
    print(render(later_rounds(args.upto, args.rule_weights, args.seed, progress=True), args.upto))
    return 0


if __name__ == "__main__":
    sys.exit(main())
