"""Tune a guard setting on real screens, from Python: score the default interference
threshold against a stricter and a looser one on the corpus's `dev` split (tune on
`dev`; report on `test` once, at the end), with 95 % intervals over repositories.

The rules' threshold is scored with the screen model off: the model was trained on `dev`,
so its figures there are in-sample and would hide what the threshold does.

    python examples/real_screens/compare_thresholds.py [--split dev] [--every 1]

The same figures come from
`ttir tune eval --real --split dev --set interference.screen_model=false --set interference.min_score=0.7`.
"""

from __future__ import annotations

import argparse

from experiments.real_screens.corpus import load_corpus
from experiments.real_screens.evaluate import evaluate, summarize
from ttir.core.config import TTIRConfig

RULES_ALONE = {"interference.screen_model": False}
SETTINGS = {"default (0.6)": RULES_ALONE, "stricter (0.7)": {**RULES_ALONE, "interference.min_score": 0.7},
            "looser (0.5)": {**RULES_ALONE, "interference.min_score": 0.5}}


def pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def span(iv: list[float] | tuple[float, float] | None) -> str:
    return "" if not iv else f" ({100 * iv[0]:.0f}–{100 * iv[1]:.0f} %)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--every", type=int, default=1, help="score every N-th screen (a quicker look)")
    args = ap.parse_args()
    screens = load_corpus(args.split)[:: max(1, args.every)]
    print(f"{len(screens)} screens of the {args.split} split, the rules alone, one guarded step each")
    print("| setting | pop-ups found | false alarms, ordinary | false alarms, wanted | engage or destructive taps | actions on non-interference |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, changes in SETTINGS.items():
        cfg = TTIRConfig().override(changes)
        report = summarize(evaluate(screens, cfg, ["rules"], session_steps=1), ["rules"])
        t, g, iv = report["tiers"]["rules"], report["guard"], report["intervals"]
        fa = t["false_alarms"]
        print(f"| {name} | {t['interference']['detected']} of {t['interference']['n']} "
              f"{pct(t['interference']['recall'])}{span(iv['recall'])} "
              f"| {fa['ordinary']['false_alarms']} of {fa['ordinary']['n']} "
              f"| {fa['wanted']['false_alarms']} of {fa['wanted']['n']} "
              f"| {g['engage_or_destructive_taps']} | {g['actions_on_non_interference']}"
              f"{span(iv['actions_on_non_interference_rate'])} |")


if __name__ == "__main__":
    main()
