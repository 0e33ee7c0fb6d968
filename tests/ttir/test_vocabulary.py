"""Each vocabulary is declared once (issue 17): a second definition is how two lists drift apart."""

from __future__ import annotations

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
