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


def test_guard_event_types_are_declared_once():
    """Every type the guard writes to its step log, and every one the runner's readers look for, is declared
    in GuardEventType (ttir/guarded/report.py)."""
    from ttir.guarded.report import GUARD_EVENT_TYPES

    written = set(re.findall(r"\.event\(\"([a-z_]+)\"", (ROOT / "ttir" / "guarded" / "middleware.py").read_text(encoding="utf-8")))
    assert len(written) >= 8 and written <= set(GUARD_EVENT_TYPES), sorted(written - set(GUARD_EVENT_TYPES))
    read = set()
    for path in ("experiments/metrics/steps.py", "experiments/metrics/guardstats.py", "experiments/viewer.py"):
        read |= set(re.findall(r"get\(\"type\"\) == \"([a-z_]+)\"", (ROOT / path).read_text(encoding="utf-8")))
    assert read and read <= set(GUARD_EVENT_TYPES), sorted(read - set(GUARD_EVENT_TYPES))
