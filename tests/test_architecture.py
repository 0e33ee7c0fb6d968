"""Import rules: one-way dependencies, no cycles, honest diagnosers."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["ttir", "benchmark", "perturb", "diagnosers", "recoveries", "prompts", "experiments"]
ALLOWED = {
    "prompts": set(),
    "diagnosers": {"ttir", "prompts", "diagnosers"},
    "recoveries": {"ttir", "prompts", "diagnosers", "recoveries"},
    "benchmark": {"ttir", "benchmark", "prompts"},  # prompts is a leaf: the VLM agent's prompt file
    "perturb": {"benchmark", "ttir", "perturb"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out & set(PACKAGES)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_flow_one_way(package):
    bad = {}
    for path in (ROOT / package).rglob("*.py"):
        extra = _imports(path) - ALLOWED[package]
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert not bad, f"{package} may only import {sorted(ALLOWED[package])}: {bad}"


def test_diagnosers_and_recoveries_are_honest():
    """They never see the benchmark or the perturbation log (no import of either)."""
    for package in ("diagnosers", "recoveries"):
        for path in (ROOT / package).rglob("*.py"):
            assert not _imports(path) & {"benchmark", "perturb"}, path


def _project_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0
            and n.module.split(".")[0] in PACKAGES} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name.split(".")[0] in PACKAGES}


def test_ttir_types_imports_only_the_dump_parser():
    """The bottom layer: types builds on the dump parser, which imports nothing from the project."""
    assert _project_modules(ROOT / "ttir" / "types.py") <= {"ttir.dump"}
    assert _project_modules(ROOT / "ttir" / "dump.py") == set()


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_first_in_a_fresh_interpreter(package):
    proc = subprocess.run([sys.executable, "-c", f"import {package}"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
