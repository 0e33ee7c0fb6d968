"""The free tier on ``dev`` screens of rounds its rules were not written from: train on the early rounds, score the later.

    python -m experiments.real_screens.later_rounds [--upto 14] [--weights rule=1 rule=0.6 rule=0.6,pkg=0] [--seed 0]

The rule tier was written by hand from the corpus's early ``dev`` rounds; the screen model reads
the rules' verdict as evidence. Out-of-fold figures on all of ``dev``
(:mod:`experiments.real_screens.crossval`) therefore flatter the rules: their verdict is in
sample on the screens they were written from (rules alone find 81 % of rounds 1–14's ``dev``
interruptions, against 56 % and 71 % of rounds 15–21's and 22–29's). This module asks how the
free tier does on apps the rules never saw, without touching ``test``: it trains the screen and
control models on the ``dev`` screens of rounds up to ``--upto`` exactly as ``ttir tune train
--real`` does (:func:`experiments.real_screens.train.fit_models`), and runs the whole guard
(:func:`experiments.real_screens.evaluate.evaluate`) on the ``dev`` screens of the later rounds.

With ``--weights`` it compares norms of feature groups (:data:`SCREEN_FEATURE_GROUPS`; a group not
named keeps the shipped model's norm, :data:`diagnosers.signals.screen_model.GROUP_WEIGHT`);
the table prints one row per setting and one for the rules alone.

What it holds: :func:`later_rounds` (the figures), :func:`parse_weights` (one ``--weights``
setting), :func:`render` and :func:`main`. Training needs scikit-learn (the ``train`` extra);
only ``dev`` is read.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional

from diagnosers.signals.screen_model import GROUP_WEIGHT, SCREEN_FEATURE_GROUPS, FeatureGroup, save_screen_model
from experiments.real_screens.corpus import load_corpus
from experiments.real_screens.crossval import controls_of, headline
from experiments.real_screens.evaluate import RULES_ALONE_TIER, evaluate, summarize
from experiments.real_screens.train import SPLIT, control_dataset, datasets, fit_models
from ttir.core.config import TTIRConfig

DEFAULT_UPTO = 14  # the last round the rules were written from (rounds.yaml: round 15 is the screen model's first fresh check)
COLUMNS = ("recall", "recall_first_run", "recall_other_popup", "recall_whats_new", "fa_ordinary", "fa_wanted",
           "engage_or_destructive_taps", "actions_on_non_interference", "first_action_clears")


def later_rounds(upto: int = DEFAULT_UPTO, weights: Optional[list[Mapping[FeatureGroup, float]]] = None,
                 seed: int = 0, progress: bool = False) -> list[dict[str, Any]]:
    """The free tier trained on ``dev`` rounds up to ``upto``, scored on the later rounds' ``dev`` screens.

    Args:
        upto: the last round trained on; every later round is scored.
        weights: the feature groups' norms to compare, one mapping per row, each over the shipped
            norms (default: the shipped norms alone).
        seed: the folds' and the solver's seed.
        progress: show progress bars.

    Returns:
        One row per setting (``weights``: the groups it changes, ``C``, ``threshold`` and the
        :func:`headline` figures of the free tier), then the rules alone (``weights`` None; their
        detection figures only: the guard stepped with the free tier).

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
    rows: list[dict[str, Any]] = []
    settings = weights or [{}]
    all_norms = [{**GROUP_WEIGHT, **changed} for changed in settings]
    # the dumps, the rules' verdicts and the control rows do not depend on the norms: read once
    feats_by_setting, y, kept, fixed = datasets(screens, all_norms, progress)
    train_idx = [i for i, s in enumerate(kept) if s.round is not None and s.round <= upto]
    held = [s for s in kept if s.round is not None and s.round > upto]
    train_controls = controls_of(control_dataset(kept), train_idx)
    for changed, norms, feats in zip(settings, all_norms, feats_by_setting):
        fitted = fit_models([feats[i] for i in train_idx], y[train_idx], [kept[i] for i in train_idx],
                            train_controls, seed, fixed[train_idx])
        with tempfile.TemporaryDirectory(prefix="ttir-later-") as tmp:
            path = Path(tmp) / "model.npz"
            save_screen_model(path, fitted["screen"], fitted["control"], fitted["thresholds"],
                              f"dev rounds up to {upto}", norms)
            cfg = TTIRConfig().override({"interference.screen_model_file": str(path)})
            tiers = ["rules", RULES_ALONE_TIER] if not rows else ["rules"]
            report = summarize(evaluate(held, cfg, tiers, progress=progress), tiers, seed=seed)
        rows.append({"weights": dict(changed), "C": fitted["C"], "threshold": fitted["thresholds"]["threshold"],
                     **headline(report)})
        if RULES_ALONE_TIER in tiers:
            alone = {**headline(report, RULES_ALONE_TIER), "weights": None, "C": None, "threshold": None}
    rows.append(alone)
    return rows


def parse_weights(spec: str) -> dict[FeatureGroup, float]:
    """One ``--weights`` setting: ``shipped``, or ``group=norm`` pairs joined by commas (``rule=0.6,pkg=0``).

    Args:
        spec: the setting as typed.

    Returns:
        The groups it changes and their norms (empty for ``shipped``).

    Raises:
        ValueError: an unknown group, a norm that is not a number >= 0, or a pair without ``=``.
    """
    out: dict[FeatureGroup, float] = {}
    if spec.strip() == "shipped":
        return out
    for pair in spec.split(","):
        group, sep, value = pair.partition("=")
        group = group.strip()
        if not sep or group not in SCREEN_FEATURE_GROUPS:
            raise ValueError(f"--weights {spec!r}: {pair!r} is not group=norm with a group of "
                             f"{', '.join(SCREEN_FEATURE_GROUPS)}; e.g. rule=0.6,pkg=0 (or 'shipped')")
        try:
            norm = float(value)
        except ValueError:
            norm = -1.0
        if not norm >= 0:  # also refuses nan
            raise ValueError(f"--weights {spec!r}: the norm of {group} is {value.strip()!r}; expected a number >= 0, "
                             f"e.g. {group}=0.5")
        out[group] = norm  # type: ignore[index]  # checked against SCREEN_FEATURE_GROUPS above
    return out


def describe_weights(changed: Mapping[str, float]) -> str:
    """``rule=0.6, pkg=0``, or ``shipped weights`` when nothing changes."""
    return ", ".join(f"{g}={w:g}" for g, w in changed.items()) or "shipped weights"


def render(rows: list[dict[str, Any]], upto: int) -> str:
    """A markdown table of :func:`later_rounds`' rows."""
    head = ["tier", "C", "threshold", *COLUMNS]
    lines = [f"dev rounds after {upto}, the free tier trained on dev rounds up to {upto}", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        tier = "rules alone" if r["weights"] is None else f"rules + model, {describe_weights(r['weights'])}"
        lines.append("| " + " | ".join([tier, "" if r["C"] is None else f"{r['C']:g}",
                                        "" if r["threshold"] is None else f"{r['threshold']:.3f}",
                                        *(str(r.get(c, "")) for c in COLUMNS)]) + " |")
    return "\n".join(lines)


def _weights_argument(spec: str) -> dict[FeatureGroup, float]:
    try:
        return parse_weights(spec)
    except ValueError as exc:  # argparse prints an ArgumentTypeError's own words, a ValueError's not
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upto", type=int, default=DEFAULT_UPTO, help="the last round trained on (default: %(default)s)")
    p.add_argument("--weights", type=_weights_argument, nargs="+", metavar="GROUP=NORM[,GROUP=NORM]",
                   help="feature-group norms to compare, one setting per row, e.g. rule=1 rule=0.6 rule=0.6,pkg=0 "
                        f"(groups: {', '.join(SCREEN_FEATURE_GROUPS)}; unnamed groups keep the shipped norms; "
                        "default: the shipped model's)")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and the solver")
    args = p.parse_args(argv)
    print(render(later_rounds(args.upto, args.weights, args.seed, progress=True), args.upto))
    return 0


if __name__ == "__main__":
    sys.exit(main())
