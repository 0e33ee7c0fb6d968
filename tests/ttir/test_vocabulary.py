"""Each vocabulary is declared once (issue 17): a second definition is how two lists drift apart."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments", "prompts"]

# vocabulary -> (a pattern that spells it out, the one file allowed to)
VOCABULARIES = {
    "tiers": (r"[\"']rules[\"'],\s*[\"']vlm[\"'],\s*[\"']cascade[\"']", "ttir/core/config.py"),
    "touch action types": (r"\(\s*[\"']click[\"'],\s*[\"']long_press[\"'],\s*[\"']double_tap[\"']\s*,?\s*\)", "ttir/core/types.py"),
    "session outcomes": (r"[\"']budget_spent[\"'],\s*[\"']exhausted[\"']", "ttir/guarded/report.py"),
    "finding verdicts": (r"[\"']on_track[\"'],\s*[\"']off_track[\"'],\s*[\"']off[\"']", "ttir/core/diagnosis.py"),
    "diagnoser names": (r"[\"']stuck_loop[\"'],\s*[\"']action_effect[\"'],\s*[\"']interference[\"']", "ttir/core/config.py"),
    "recovery names": (r"[\"']alternative_action[\"'],\s*[\"']dismiss_interference[\"'],\s*[\"']re_orientation[\"']", "ttir/core/config.py"),
    "diagnoser priority": (r"[\"']interference[\"'],\s*[\"']stuck_loop[\"'],\s*[\"']action_effect[\"']", "ttir/core/config.py"),
    "STAR layers": (r"[\"']S[\"'],\s*[\"']T[\"'],\s*[\"']A[\"'],\s*[\"']R[\"']", "perturb/base.py"),
    "control roles": (r"[\"']dismiss[\"'],\s*[\"']engage[\"'],\s*[\"']destructive[\"'],\s*[\"']neutral[\"']", "ttir/core/lexicon.py"),
    "interference kinds": (r"[\"']permission[\"'],\s*[\"']anr[\"'],\s*[\"']crash[\"'],\s*[\"']dev_error[\"']", "ttir/core/diagnosis.py"),
    "proxy command fates": (r"[\"']forwarded[\"'],\s*[\"']delayed[\"'],\s*[\"']held_back[\"']", "ttir/guarded/proxy/guard.py"),
    "adb service kinds": (r"[\"']shell_v2[\"'],\s*[\"']shell[\"'],\s*[\"']exec[\"'],\s*[\"']sync[\"']", "benchmark/devices/adbd/forward.py"),
}


@pytest.mark.parametrize("vocabulary", sorted(VOCABULARIES))
def test_a_vocabulary_is_defined_in_one_place(vocabulary):
    pattern, home = VOCABULARIES[vocabulary]
    where = sorted(str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                   if re.search(pattern, p.read_text(encoding="utf-8")))
    assert where == [home], f"{vocabulary} is spelled out in {where}; import it from {home}"


def test_loading_words_are_one_list():
    """The reference agents, the interference diagnoser and the dismiss recovery once had three lists
    of loading words; they read ttir/core/data/loading.yaml now, and no code or data file spells one out."""
    from ttir.core.lexicon import loading_words

    assert {"loading", "please wait", "buffering"} <= set(loading_words())
    pattern = re.compile(r"[\"']?loading[\"']?,\s*[\"']?please wait[\"']?", re.IGNORECASE)
    where = sorted(str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*")
                   if p.suffix in (".py", ".yaml") and "content" not in p.parts  # what screens say is content
                   and pattern.search(p.read_text(encoding="utf-8")))
    assert where == ["ttir/core/data/loading.yaml"], where


def _string_collections(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            if len(words) >= 2:
                out.append((node.lineno, words))
    return out


def test_each_action_group_is_spelled_once():
    """The action groups (ttir.core.types.ACTION_GROUPS) are declared once: no module spells one again
    as a literal of its action types (it imports the group)."""
    from ttir.core.types import ACTION_GROUPS, ACTION_TYPES

    assert all(set(group) <= set(ACTION_TYPES) for group in ACTION_GROUPS.values())
    groups = {frozenset(g): name for name, g in ACTION_GROUPS.items()}
    root = Path(__file__).resolve().parents[2]
    again = []
    for package in ("ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments"):
        for path in sorted((root / package).rglob("*.py")):
            if path == root / "ttir" / "core" / "types.py":
                continue
            for line, words in _string_collections(path):
                if set(words) <= set(ACTION_TYPES) and frozenset(words) in groups:
                    again.append(f"{path.relative_to(root)}:{line} spells {groups[frozenset(words)]} ({', '.join(words)})")
    assert not again, "action groups spelled again:\n" + "\n".join(again)


def test_guard_event_names_are_declared_once():
    """Every name the guard writes to its step log, and every one the runner's readers look for, is declared
    in GuardEventName (ttir/guarded/report.py)."""
    from ttir.guarded.report import GUARD_EVENT_NAMES

    written = set(re.findall(r"\.event\(\"([a-z_]+)\"", (ROOT / "ttir" / "guarded" / "middleware.py").read_text(encoding="utf-8")))
    assert len(written) >= 8 and written <= set(GUARD_EVENT_NAMES), sorted(written - set(GUARD_EVENT_NAMES))
    read = set()
    for path in ("experiments/metrics/steps.py", "experiments/metrics/guardstats.py", "experiments/viewer.py"):
        text = (ROOT / path).read_text(encoding="utf-8")
        read |= set(re.findall(r"(?:get\(\"event\"\)|\.event) == \"([a-z_]+)\"", text))
    assert read and read <= set(GUARD_EVENT_NAMES), sorted(read - set(GUARD_EVENT_NAMES))


def test_components_are_declared_in_perturb_and_the_cli_offers_the_same():
    """perturb/base.py declares the components; `ttir perturbations --component` spells them again only so
    that `ttir --help` needs no perturb import, and must offer exactly them, in the same order."""
    from perturb import REGISTRY
    from perturb.base import COMPONENTS, STAR_LAYERS
    from ttir.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.choices and "perturbations" in a.choices)
    component = next(a for a in sub.choices["perturbations"]._actions if a.dest == "component")
    assert tuple(component.choices) == COMPONENTS
    assert {p.component for p in REGISTRY.values()} == set(COMPONENTS)
    assert {p.layer for p in REGISTRY.values() if p.layer} == set(STAR_LAYERS)
    pattern = r"[\"']state[\"'],\s*[\"']action[\"'],\s*[\"']transition[\"']"
    where = sorted(str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                   if re.search(pattern, p.read_text(encoding="utf-8")))
    assert where == ["perturb/base.py", "ttir/cli/perturbations.py"], where


def test_the_reports_order_what_the_vocabularies_declare():
    from experiments.metrics.episodes import COMPONENT_ORDER, LAYER_ORDER
    from experiments.metrics.guardstats import DIAGNOSERS as REPORTED
    from perturb.base import COMPONENTS, STAR_LAYERS
    from ttir.core.config import DEFAULT_PRIORITY, DIAGNOSERS, RecoveryConfig

    assert COMPONENT_ORDER == COMPONENTS and LAYER_ORDER == STAR_LAYERS
    assert set(DEFAULT_PRIORITY) == set(DIAGNOSERS) and REPORTED == DEFAULT_PRIORITY
    assert RecoveryConfig().priority == list(DEFAULT_PRIORITY)


def test_system_knowledge_names_interference_kinds_only():
    """A kind in diagnosers/data/system.yaml outside INTERFERENCE_KINDS would reach the recoveries as a word
    nothing handles: it is refused where the file is read, naming the key, the value and the choices."""
    from diagnosers.signals.system import SystemKnowledge, knowledge
    from ttir.core.diagnosis import INTERFERENCE_KINDS

    shipped = knowledge()
    assert set(shipped.interrupters.values()) | set(shipped.system_dialog_ids.values()) <= set(INTERFERENCE_KINDS)
    with pytest.raises(ValueError, match=r"interrupter_packages\.com\.example\.nag = 'nagware'.*expected one of permission"):
        SystemKnowledge({"interrupter_packages": {"com.example.nag": "nagware"}})
