"""``ttir tune sweep``: evaluate a grid of rule-tier settings, pick the best.

    ttir tune sweep DATASET --param stuck_loop.window=2,3,4,5 --param action_effect.hash_distance=0,2,4

Each ``--param`` is a dotted TTIRConfig key and comma-separated values. Settings
of one diagnoser only change that diagnoser, so every diagnoser's grid (the
product of its own parameters) is evaluated on its own: the cost is the sum of
the grids, not their product. The best setting of a diagnoser has the highest F1
among those whose false-positive rate stays under the ceiling (on clean steps;
on all negative steps when the dataset has no clean step). The best settings
together, over the base config, are written as YAML that ``TTIRConfig.from_yaml``
loads.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Optional

from experiments.tune.evaluate import Variant, evaluate_dataset
from experiments.tune.metrics import score_outcomes
from ttir.core.config import DIAGNOSERS, TTIRConfig
from ttir.core.validation import load_yaml_text


def parse_param(text: str) -> tuple[str, list[Any]]:
    """``"stuck_loop.window=2,3,4"`` -> ``("stuck_loop.window", [2, 3, 4])`` (YAML scalars)."""
    if "=" not in text:
        raise ValueError(f"--param {text!r}: expected KEY=V1,V2,… such as stuck_loop.window=2,3,4")
    key, _, raw = text.partition("=")
    key = key.strip()
    if "." not in key:
        raise ValueError(f"--param {text!r}: the key must be SECTION.FIELD, e.g. stuck_loop.window")
    section = key.split(".", 1)[0]
    if section not in DIAGNOSERS:
        raise ValueError(f"--param {text!r}: sweeps tune the rule tier of the diagnosers; the key must start with "
                         f"one of {', '.join(DIAGNOSERS)} (got section {section!r})")
    values = [load_yaml_text(v.strip(), f"--param {text!r}") for v in raw.split(",") if v.strip()]
    if not values:
        raise ValueError(f"--param {text!r}: no values after '='")
    for v in values:  # a bad key or value fails now, naming it
        TTIRConfig().override({key: v})
    return key, values


def grids(params: list[tuple[str, list[Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Per diagnoser section: every combination of its parameters' values."""
    by_section: dict[str, dict[str, list[Any]]] = {}
    for key, values in params:
        section = key.split(".", 1)[0]
        if key in by_section.setdefault(section, {}):
            raise ValueError(f"--param {key} is given twice; give every value in one --param")
        by_section[section][key] = values
    out: dict[str, list[dict[str, Any]]] = {}
    for section, keys in by_section.items():
        names = list(keys)
        out[section] = [dict(zip(names, combo)) for combo in itertools.product(*(keys[n] for n in names))]
    return out


def _label(combo: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in combo.items())


def sweep(dataset: Path | str, params: list[tuple[str, list[Any]]], *, base: Optional[TTIRConfig] = None,
          max_fpr: float = 0.01, workers: int = 1, select: Optional[dict[str, Any]] = None,
          progress: bool = False) -> dict[str, Any]:
    """Evaluate the grid; returns ``{"points": [...], "best": {section: combo}, "config": TTIRConfig}``."""
    if not 0.0 <= max_fpr <= 1.0:
        raise ValueError(f"max_fpr={max_fpr}: expected a false-positive rate between 0 and 1")
    base = base or TTIRConfig()
    g = grids(params)
    variants: list[Variant] = []
    meta: dict[str, tuple[str, dict[str, Any]]] = {}
    for section, combos in g.items():
        for combo in combos:
            name = f"{section}[{_label(combo)}]"
            variants.append(Variant(name=name, tier="rules", config=base.override(combo), diagnosers=(section,)))
            meta[name] = (section, combo)
    outcomes = evaluate_dataset(dataset, variants, workers=workers, select=select, progress=progress)
    points = []
    for v in variants:
        section, combo = meta[v.name]
        s = score_outcomes(outcomes, v.name, (section,))[section].to_dict()
        clean_fpr = s["clean"]["fpr"]
        fpr = clean_fpr if clean_fpr is not None else s["fpr"]
        points.append({"diagnoser": section, "params": combo, "precision": s["precision"], "recall": s["recall"],
                       "f1": s["f1"], "fpr": s["fpr"], "clean_fpr": clean_fpr, "tp": s["tp"], "fp": s["fp"],
                       "fn": s["fn"], "tn": s["tn"],
                       "feasible": fpr is None or fpr <= max_fpr,
                       "fpr_basis": "clean" if clean_fpr is not None else "all"})
    best: dict[str, Optional[dict[str, Any]]] = {}
    config = base
    for section in g:
        cands = [p for p in points if p["diagnoser"] == section and p["feasible"]]
        if not cands:
            best[section] = None  # nothing meets the ceiling: keep the base settings
            continue
        top = max(cands, key=lambda p: (p["f1"] or 0.0, p["precision"] or 0.0))  # ties: the first in grid order
        for p in points:
            p["best"] = p is top or p.get("best", False)
        best[section] = top["params"]
        config = config.override(top["params"])
    for p in points:
        p.setdefault("best", False)
    notes = {}
    for section in g:
        pts = [p for p in points if p["diagnoser"] == section]
        if len(pts) > 1 and len({(p["tp"], p["fp"], p["fn"], p["tn"]) for p in pts}) == 1:
            notes[section] = ("every setting gives the same verdicts on these steps: the swept field does not matter "
                              "here (or is not read by the rule tier)")
    return {"points": points, "best": best, "config": config, "max_fpr": max_fpr, "steps": len(outcomes),
            "notes": notes}


def write_best(result: dict[str, Any], path: Path | str, *, dataset: str = "") -> Path:
    """The best config as YAML (the whole TTIRConfig, so it loads on its own)."""
    p = Path(path)
    lines = [f"# ttir tune sweep{(' on ' + dataset) if dataset else ''}: best rule-tier settings",
             f"# (highest F1 with a false-positive rate <= {result['max_fpr']}):"]
    for section, combo in result["best"].items():
        lines.append(f"#   {section}: " + (_label(combo) if combo else "nothing met the ceiling; base settings kept"))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n" + result["config"].to_yaml(), encoding="utf-8")
    return p


__all__ = ["grids", "parse_param", "sweep", "write_best"]
