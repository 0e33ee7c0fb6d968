"""Scores of one diagnoser against the labels: confusion matrix, precision,
recall, F1, the false-positive rate on clean steps, and breakdowns.

A diagnoser *reports a problem* when its finding says so (``finding.problem``);
an ``uncertain`` verdict is not a report (the cascade would ask the model) and is
counted on its own. Positive = the label says there is a problem
(interference present, effect not satisfied, repeat failure, off track).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional


def _ratio(a: int, b: int) -> Optional[float]:
    return round(a / b, 4) if b else None


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    uncertain_pos: int = 0  # uncertain verdicts on positive steps (counted in fn too)
    uncertain_neg: int = 0  # uncertain verdicts on negative steps (counted in tn too)

    def add(self, label: bool, predicted: bool, uncertain: bool = False) -> None:
        if label and predicted:
            self.tp += 1
        elif label:
            self.fn += 1
        elif predicted:
            self.fp += 1
        else:
            self.tn += 1
        if uncertain:
            if label:
                self.uncertain_pos += 1
            else:
                self.uncertain_neg += 1

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> Optional[float]:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> Optional[float]:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> Optional[float]:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return 0.0 if (p is not None or r is not None) and self.tp == 0 and (self.fp or self.fn) else None
        return round(2 * p * r / (p + r), 4)

    @property
    def fpr(self) -> Optional[float]:
        return _ratio(self.fp, self.fp + self.tn)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "uncertain_on_positive": self.uncertain_pos, "uncertain_on_negative": self.uncertain_neg,
                "precision": self.precision, "recall": self.recall, "f1": self.f1, "fpr": self.fpr}


@dataclass
class DiagnoserScore:
    """Everything reported for one diagnoser in one tier."""

    overall: Confusion = field(default_factory=Confusion)
    clean: Confusion = field(default_factory=Confusion)
    clean_steps: int = 0
    clean_alarms: int = 0
    by_perturbation: dict[str, Confusion] = field(default_factory=lambda: defaultdict(Confusion))
    by_reason: dict[str, Confusion] = field(default_factory=lambda: defaultdict(Confusion))
    unlabelled: int = 0
    unlabelled_by_reason: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    errors: int = 0

    def add(self, label: Optional[bool], predicted: bool, uncertain: bool, *, perturbation: str, clean: bool,
            reason: Optional[str] = None) -> None:
        if clean:
            self.clean_steps += 1
            self.clean_alarms += int(predicted)
        if label is None:
            self.unlabelled += 1
            slot = self.unlabelled_by_reason[reason or "-"]
            slot[0] += 1
            slot[1] += int(predicted)
            return
        self.overall.add(label, predicted, uncertain)
        self.by_perturbation[perturbation].add(label, predicted, uncertain)
        if reason:
            self.by_reason[reason].add(label, predicted, uncertain)
        if clean:
            self.clean.add(label, predicted, uncertain)

    def to_dict(self) -> dict[str, Any]:
        d = self.overall.to_dict()
        d.update({
            "unlabelled": self.unlabelled,
            # unscored steps, and on how many of them the diagnoser reported a problem
            "unlabelled_by_reason": {k: {"n": n, "alarms": a} for k, (n, a) in sorted(self.unlabelled_by_reason.items())},
            "errors": self.errors,
            "clean": {"steps": self.clean_steps, "alarms": self.clean_alarms,
                      "alarm_rate": _ratio(self.clean_alarms, self.clean_steps),
                      "negatives": self.clean.fp + self.clean.tn, "fp": self.clean.fp, "fpr": self.clean.fpr},
            "by_perturbation": {k: v.to_dict() for k, v in sorted(self.by_perturbation.items())},
            "by_reason": {k: v.to_dict() for k, v in sorted(self.by_reason.items())},
        })
        return d


def meets(score: dict[str, Any], *, precision: float, recall: float, clean_fpr: float) -> dict[str, Optional[bool]]:
    """Which of the targets a diagnoser score meets (None: not measurable)."""
    p, r, f = score.get("precision"), score.get("recall"), (score.get("clean") or {}).get("fpr")
    return {"precision": None if p is None else p >= precision,
            "recall": None if r is None else r >= recall,
            "clean_fpr": None if f is None else f <= clean_fpr}


def score_outcomes(outcomes: Iterable[dict[str, Any]], variant: str, diagnosers: Iterable[str]) -> dict[str, DiagnoserScore]:
    """Per-diagnoser scores of one variant (tier or sweep point) over step outcomes."""
    from experiments.tune.labels import problem_label

    names = list(diagnosers)
    scores = {d: DiagnoserScore() for d in names}
    for o in outcomes:
        res = o["results"].get(variant)
        if res is None:
            continue
        for d in names:
            r = res.get(d)
            if r is None:
                continue
            s = scores[d]
            if r.get("error"):
                s.errors += 1
            label = problem_label(d, o["labels"])
            reason = (o.get("reasons") or {}).get(_LABEL_OF[d])
            s.add(label, bool(r["problem"]), r["verdict"] == "uncertain", perturbation=o["perturbation"],
                  clean=o["clean"], reason=reason)
    return scores


_LABEL_OF = {"interference": "interference_present", "action_effect": "previous_intended_effect_satisfied",
             "stuck_loop": "repeat_failure_detected", "task_alignment": "task_alignment"}

__all__ = ["Confusion", "DiagnoserScore", "meets", "score_outcomes"]
