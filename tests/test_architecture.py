"""Import rules: one-way dependencies, no cycles, honest diagnosers."""

from __future__ import annotations

import ast
import functools
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


@functools.lru_cache(maxsize=None)
def _parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every check walks every module)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> set[str]:
    tree = _parsed(path)
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
    tree = _parsed(path)
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0
            and n.module.split(".")[0] in PACKAGES} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name.split(".")[0] in PACKAGES}


def test_ttir_types_imports_only_the_dump_parser():
    """The bottom layer: types builds on the dump parser, which imports nothing from the project."""
    assert _project_modules(ROOT / "ttir" / "core" / "types.py") <= {"ttir.core.dump"}
    assert _project_modules(ROOT / "ttir" / "core" / "dump.py") == set()


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_first_in_a_fresh_interpreter(package):
    proc = subprocess.run([sys.executable, "-c", f"import {package}"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------ the module import graph (issue 17)


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _module_imports(name: str, path: Path, known: set[str], *, lazy: bool, parents: bool = True) -> set[str]:
    """Project modules ``name`` imports: at module level (``lazy``: inside functions too), not under
    ``if TYPE_CHECKING``. ``from pkg import sub`` imports the submodule, not ``pkg``'s own namespace.
    ``parents``: with the packages Python runs first (importing ``a.b.c`` runs ``a`` and ``a.b``)."""
    tree = _parsed(path)
    nodes: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        nodes.extend(ast.walk(node) if (lazy or isinstance(node, (ast.If, ast.Try))) else [node])
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Import):
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[:len(base) - (n.level - 1)]
                module = ".".join(base + ([n.module] if n.module else []))
            else:
                module = n.module or ""
            subs = {f"{module}.{a.name}" for a in n.names} & known
            out |= subs
            if len(subs) < len(n.names):
                out.add(module)
    if not parents:
        return {d for d in out & known if d != name}
    deps = set()
    for m in out & known:  # importing a.b.c runs a and a.b first (unless they are what is being imported)
        parts = m.split(".")
        deps.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {d for d in deps if d in known and d != name and not name.startswith(d + ".")}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return cycles


def test_no_import_cycle_between_modules():
    """Walk the module-level import graph; any cycle fails, printed as a chain."""
    mods = _modules()
    cycles = _cycles({m: _module_imports(m, p, set(mods), lazy=False) for m, p in mods.items()})
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _lazy_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    # imports inside functions count; a package's __init__ re-exporting its own submodules does not make
    # them depend on it, so the packages Python runs first are left out here (the layer test keeps them)
    return {m: _module_imports(m, p, set(mods), lazy=True, parents=False) for m, p in mods.items()}


def test_no_import_cycle_counting_imports_inside_functions():
    """An import inside a function hides a cycle from the module-level walk, not from this one."""
    cycles = _cycles(_lazy_graph(_modules()))
    assert not cycles, "import cycles (imports inside functions counted):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_fails_on_a_planted_cycle(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from experiments.runner import run\n", encoding="utf-8")
    mods = {**_modules(), "experiments.store": planted}  # the runner imports the store: store -> runner closes a cycle
    assert any({"experiments.store", "experiments.runner"} <= set(c) for c in _cycles(_lazy_graph(mods)))


# The layers, bottom first. A module imports its own layer and the layers below it, never one above
# (imports inside functions count; ``if TYPE_CHECKING:`` is the way to name a type from above). Importing
# any ``ttir.…`` module runs the ``ttir`` package first, so ``ttir/__init__.py`` loads only ``ttir.core``
# eagerly and reaches the guard lazily (``ttir.guard``, ``ttir.GuardedAgent``).
LAYERS: tuple[str, ...] = (
    "ttir.core",       # types, dump, config, errors, validation, lexicon, prompt text
    "prompts",         # the prompt files (a leaf)
    "ttir.model",      # the model client and what bounds it
    "diagnosers",      # the four diagnosers and their signals
    "recoveries",      # the recoveries (they read diagnosers' findings)
    "benchmark",       # the simulated phone, tasks, real phones over adb
    "perturb",         # perturbations, traps and triggers wrapped around a device
    "ttir.guarded",    # the guard: checks, GuardedAgent, its report
    "ttir.testing",    # the test model server
    "experiments",     # the runner, metrics, reports, tuning
    "ttir.cli",        # the command line
)


def _layer(module: str) -> str | None:
    return next((layer for layer in sorted(LAYERS, key=len, reverse=True)
                 if module == layer or module.startswith(layer + ".")), None)


def test_every_module_has_a_layer():
    mods = _modules()
    assert not sorted(m for m in mods if m != "ttir" and _layer(m) is None), "modules in no layer"


def _upward_imports(mods: dict[str, Path]) -> dict[str, list[str]]:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    bad = {}
    for m, path in mods.items():
        if m == "ttir":
            continue
        above = sorted(d for d in _module_imports(m, path, set(mods), lazy=True)
                       if d != "ttir" and rank[_layer(d)] > rank[_layer(m)])
        if above:
            bad[m] = above
    return bad


def test_no_module_imports_a_layer_above_its_own():
    """Counting imports inside functions; the one list of layers is LAYERS."""
    bad = _upward_imports(_modules())
    assert not bad, f"imports from a layer above (layers, bottom first: {' < '.join(LAYERS)}): {bad}"


def test_importing_ttir_loads_only_its_core():
    mods = _modules()
    eager = _module_imports("ttir", mods["ttir"], set(mods), lazy=False)
    assert eager and all(_layer(d) == "ttir.core" for d in eager), eager


def test_the_layer_check_fails_on_a_planted_breach(tmp_path):
    """The check itself can fail: a core module that imports the guard inside a function is caught."""
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from ttir.guarded.middleware import GuardedAgent\n", encoding="utf-8")
    assert _upward_imports({**_modules(), "ttir.core.planted": planted}) == {"ttir.core.planted": ["ttir.guarded",
                                                                                                  "ttir.guarded.middleware"]}


# known breaches, each with why; the list only shrinks
CLI_IMPORTERS: dict[str, str] = {}


def test_the_cli_is_the_top_layer():
    """Nothing imports ttir.cli but ttir.cli itself (and the console script's entry point)."""
    mods = _modules()
    bad = sorted(m for m, p in mods.items() if not (m == "ttir.cli" or m.startswith("ttir.cli.")) and m not in CLI_IMPORTERS
                 and any(d == "ttir.cli" or d.startswith("ttir.cli.") for d in _module_imports(m, p, set(mods), lazy=True)))
    assert not bad, f"these import the CLI, the top layer: {bad}"


AREAS = ("benchmark", "diagnosers", "perturb", "recoveries", "experiments", "ttir", "reliability",
         "docs")  # tests/docs: the docs site and the figures it quotes


def test_tests_mirror_the_package_tree():
    """Each test module lives in the folder of what it tests (tests/<package>/, and tests/reliability for the
    hostile-input group across packages); shared helpers live in tests/support and hold no tests."""
    tests = ROOT / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py"))
    assert top == ["test_architecture.py"], f"test modules outside a package folder: {top}"
    for folder in sorted(p for p in tests.iterdir() if p.is_dir() and p.name not in ("fixtures", "__pycache__")):
        assert folder.name in AREAS + ("support",), f"tests/{folder.name}/ mirrors no package"
        for mod in folder.glob("*.py"):
            if folder.name == "support":
                assert not mod.name.startswith("test_") and "def test_" not in mod.read_text(encoding="utf-8"), mod
            else:
                assert mod.name == "__init__.py" or mod.name.startswith("test_"), f"a helper among tests: {mod}"
