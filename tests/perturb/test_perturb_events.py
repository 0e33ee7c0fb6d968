"""The perturbation event names are declared once (perturb/events.py): every name a
perturbation writes, and every name a group or a metric counts, is one of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from perturb.device import Event
from perturb.events import BOOKKEEPING_EVENTS, PERTURBATION_EVENTS, check_event

ROOT = Path(__file__).resolve().parents[2]
EMITTERS = {"emit", "emit_once"}  # PerturbationContext.emit(perturbation, event), the traps' and overlays' emit(ctx, event)


def _written_names() -> set[tuple[str, str]]:
    """(file:line, name) of each event name written as a literal in perturb/."""
    out = set()
    for path in (ROOT / "perturb").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in EMITTERS:
                if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                    out.add((f"{path.relative_to(ROOT)}:{node.lineno}", node.args[1].value))
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Event" and len(node.args) >= 3:
                if isinstance(node.args[2], ast.Constant):
                    out.add((f"{path.relative_to(ROOT)}:{node.lineno}", node.args[2].value))
            elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "finished_event" for t in node.targets):
                out.add((f"{path.relative_to(ROOT)}:{node.lineno}", node.value.value))
    return out


def test_every_name_a_perturbation_writes_is_declared():
    written = _written_names()
    assert len(written) >= 40  # the scan finds the emitters (a scan that found none would pass vacuously)
    undeclared = sorted(f"{where} {name}" for where, name in written if name not in PERTURBATION_EVENTS)
    assert not undeclared, f"event names not in perturb/events.py: {undeclared}"


def test_every_group_counts_declared_names_only():
    from experiments.metrics import eventlog
    from experiments.tune.truth import FATE_OF_EVENT

    groups = {"BOOKKEEPING_EVENTS": BOOKKEEPING_EVENTS, "tune.truth.FATE_OF_EVENT": tuple(FATE_OF_EVENT)}
    groups.update({f"metrics.eventlog.{n}": tuple(v) for n, v in vars(eventlog).items()
                   if n.endswith("_EVENTS") and isinstance(v, (set, frozenset, tuple, dict))})
    assert len(groups) >= 6
    bad = {name: sorted(set(g) - set(PERTURBATION_EVENTS)) for name, g in groups.items() if set(g) - set(PERTURBATION_EVENTS)}
    assert not bad, f"groups naming events no perturbation writes: {bad}"


def test_an_undeclared_name_is_refused_where_it_is_written():
    assert check_event("overlay_shown") == "overlay_shown"
    with pytest.raises(ValueError, match="'overlay_shwon' is not declared"):
        Event(0, "popup_permission", "overlay_shwon")  # type: ignore[arg-type]
