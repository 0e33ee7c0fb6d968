"""What the four diagnosers share: public names, tiers, the judgment mapping,
honesty (no benchmark / perturb imports, no injected-element markers), the
per-observation cache, and robustness to odd observations."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import diagnosers
from diagnosers import (
    ActionEffectDiagnoser,
    Cost,
    DiagnosisContext,
    Finding,
    InterferenceDiagnoser,
    StuckLoopDiagnoser,
    TaskAlignmentDiagnoser,
)
from diagnosers.signals.cache import ObservationCache
from tests.support.diagnosers_support import FakeJudge, ctx, dump, judgment, rec, screenshot_only, tap, with_screenshot
from ttir.core.config import TTIRConfig
from ttir.core.types import Observation

ALL = [StuckLoopDiagnoser, ActionEffectDiagnoser, InterferenceDiagnoser, TaskAlignmentDiagnoser]
PACKAGE_DIR = Path(diagnosers.__file__).parent


def test_public_names_and_registry():
    assert set(diagnosers.DIAGNOSER_CLASSES) == {"stuck_loop", "action_effect", "interference", "task_alignment"}
    assert DiagnosisContext and Finding


@pytest.mark.parametrize("cls", ALL)
def test_default_mode_is_cascade_and_falls_back_to_rules(cls):
    d = cls()
    assert d.mode == "cascade"
    f = d.diagnose(ctx("Open Broccoli.", dump("recipe_list")))
    assert isinstance(f, Finding) and f.diagnoser == cls.name and f.cost.model_calls == 0


@pytest.mark.parametrize("cls", ALL)
def test_configs_from_ttir_config(cls):
    cfg = TTIRConfig.with_mode("rules")
    d = cls(getattr(cfg, cls.name))
    assert d.mode == "rules"
    off = cls(getattr(TTIRConfig.with_mode("off"), cls.name))
    f = off.diagnose(ctx("x", dump("permission_dialog")))
    assert f.verdict == "off" and not f.problem


@pytest.mark.parametrize("cls,field,value,verdict,problem", [
    (StuckLoopDiagnoser, "repeat_failure_detected", True, "true", True),
    (StuckLoopDiagnoser, "repeat_failure_detected", False, "false", False),
    (ActionEffectDiagnoser, "previous_intended_effect_satisfied", "no", "no", True),
    (ActionEffectDiagnoser, "previous_intended_effect_satisfied", "uncertain", "uncertain", False),
    (InterferenceDiagnoser, "interference_present", True, "true", True),
    (TaskAlignmentDiagnoser, "task_alignment", "off-track", "off_track", True),
    (TaskAlignmentDiagnoser, "task_alignment", "on_track", "on_track", False),
])
def test_from_judgment_maps_the_papers_fields(cls, field, value, verdict, problem):
    cost = Cost(model_calls=1, prompt_tokens=10)
    f = cls().from_judgment(judgment(**{field: value}), cost)
    assert (f.verdict, f.problem, f.tier) == (verdict, problem, "vlm")
    assert f.cost.model_calls == 1 and "looks fine" in f.evidence[-1]


def test_from_judgment_rejects_other_types():
    with pytest.raises(TypeError, match="judgment"):
        StuckLoopDiagnoser().from_judgment("yes", Cost())


@pytest.mark.parametrize("cls", ALL)
def test_vlm_mode_calls_the_model(cls):
    judge = FakeJudge(judgment())
    f = cls(mode="vlm", judge=judge).diagnose(ctx("Open Broccoli.", dump("recipe_list")))
    assert judge.calls == 1 and f.tier == "vlm" and not f.problem


@pytest.mark.parametrize("cls", ALL)
def test_odd_observations_do_not_crash(cls):
    empty = Observation()
    shot = screenshot_only(with_screenshot(dump("recipe_list")))
    for obs in (empty, shot, dump("anr_dialog"), dump("landscape_settings")):
        for history in ([], [rec(empty, tap(10, 10))], [rec(shot, tap(540, 400))]):
            f = cls(mode="rules").diagnose(ctx("Delete a recipe.", obs, history))
            assert f.verdict in ("true", "false", "yes", "no", "uncertain", "on_track", "off_track")


def test_tree_only_and_screenshot_only_contexts_give_answers():
    tree = dump("permission_dialog")
    shot = screenshot_only(with_screenshot(dump("permission_dialog")))
    assert InterferenceDiagnoser().diagnose(ctx("x", tree)).problem
    assert InterferenceDiagnoser().diagnose(ctx("x", shot)).verdict == "uncertain"


# -- honesty -----------------------------------------------------------------------------


def _sources():
    return sorted(PACKAGE_DIR.rglob("*.py"))


def test_diagnosers_never_import_the_benchmark_or_the_perturbations():
    for path in _sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] not in ("benchmark", "perturb", "experiments"), f"{path}: imports {n}"


RULE_FILES = ["stuck_loop.py", "action_effect.py", "interference.py", "task_alignment.py"]


def test_no_rule_reads_an_injection_marker():
    rule_sources = [PACKAGE_DIR / f for f in RULE_FILES] + sorted((PACKAGE_DIR / "signals").glob("*.py"))
    for path in rule_sources + sorted((PACKAGE_DIR / "data").glob("*.yaml")):
        text = path.read_text(encoding="utf-8").lower()
        for word in ("inject", "perturb", "overlay_engine", "synthetic"):
            assert word not in text, f"{path} mentions {word!r}"


def test_importing_diagnosers_does_not_load_the_benchmark():
    code = ("import sys, diagnosers; from diagnosers import InterferenceDiagnoser; "
            "assert not any(m.split('.')[0] in ('benchmark', 'perturb') for m in sys.modules), "
            "[m for m in sys.modules if m.startswith(('benchmark', 'perturb'))]")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=PACKAGE_DIR.parent)


# -- cache -------------------------------------------------------------------------------


def test_observation_cache_computes_once_and_never_confuses_observations():
    cache = ObservationCache(max_entries=2)
    calls = []
    a, b, c = dump("recipe_list"), dump("home_screen"), dump("contacts_list")
    f = lambda o: calls.append(o) or len(o.elements)
    assert cache.get(a, "n", f) == cache.get(a, "n", f) and len(calls) == 1
    cache.get(b, "n", f), cache.get(c, "n", f)  # evicts a
    assert cache.get(a, "n", f) == len(a.elements) and len(calls) == 4
    assert cache.get(b, "n", f) != cache.get(a, "n", f) or len(b.elements) == len(a.elements)
