"""Small helpers shared by the four diagnosers for building findings."""

from __future__ import annotations

from typing import Any, Union

from ttir.core.diagnosis import Cost, Finding
from diagnosers.judgment import Judgment

MODEL_CONFIDENCE = 0.7  # the paper's judgment carries no confidence; this marks it as a model opinion


def as_judgment(judgment: Union[Judgment, dict[str, Any]]) -> Judgment:
    """Accept a :class:`Judgment` or the raw JSON dict the model returned."""
    if isinstance(judgment, Judgment):
        return judgment
    if isinstance(judgment, dict):
        return Judgment.model_validate(judgment)
    raise TypeError(f"judgment must be a Judgment or a dict of the paper's JSON fields, got {type(judgment).__name__}")


def model_finding(name: str, verdict: str, problem: bool, judgment: Judgment, cost: Cost, field: str) -> Finding:
    evidence = [f"model: {field}={verdict}"]
    if judgment.reason:
        evidence.append(f"model reason: {judgment.reason}")
    return Finding(diagnoser=name, problem=problem, verdict=verdict, confidence=MODEL_CONFIDENCE,
                   evidence=evidence, tier="vlm", cost=cost, details={"source": "model", "reason": judgment.reason})
