"""Docstring coverage of the public API, and the docstring examples run as doctests.

What is counted: every name in the ``__all__`` of ``ttir`` and of each package (``benchmark``,
``perturb``, ``diagnosers``, ``recoveries``, ``experiments``, ``ttir.core``, ``ttir.guarded``,
``ttir.model``, ``ttir.testing``), and, for each class among them, its public methods and
properties — the ones the project defines, not those inherited from pydantic's ``BaseModel``,
``Protocol`` or ``object``. A function or class counts as documented when it has its own docstring
(not one inherited from a base class); a constant or type alias when the module that defines it
follows the assignment with a string literal (an attribute docstring, which mkdocstrings renders);
a submodule named in ``__all__`` when it has a module docstring (and its own ``__all__`` is counted
in turn). Each class or function counts once, under the module that defines it. The pydantic models
among them also need a description on every field.

``python -m pytest -p no:randomly -n 0 -q -s tests/ttir/test_docstrings.py -k report`` prints
the coverage table.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
import importlib.util
import inspect
import sys
import textwrap
import types
from functools import cached_property
from typing import Any, Iterator

import pydantic
import pytest

PACKAGES = ("ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments",
            "ttir.core", "ttir.guarded", "ttir.model", "ttir.testing")
PROJECT_ROOTS = {"ttir", "benchmark", "perturb", "diagnosers", "recoveries", "experiments"}
THRESHOLD = 0.95
# names every class has from pydantic or object; an override of one of them is not part of the API
_FOREIGN = set(dir(pydantic.BaseModel)) | set(dir(object))


def _is_project(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in PROJECT_ROOTS


def _definition(module: types.ModuleType, name: str) -> tuple[str, str]:
    """Where ``name`` is assigned, as (module, name there): ``module`` itself, or where it imports it
    from (followed through re-exports)."""
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _definition(importlib.import_module(node.module), alias.name)
    return module.__name__, name


def _has_attribute_docstring(module_name: str, name: str) -> bool:
    """Whether ``module_name`` follows its assignment of ``name`` with a string literal."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module_name)))
    body = tree.body
    for i, node in enumerate(body):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            nxt = body[i + 1] if i + 1 < len(body) else None
            return (isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                    and isinstance(nxt.value.value, str) and bool(nxt.value.value.strip()))
    return False


def _own_doc(obj: Any) -> bool:
    doc = obj.__dict__.get("__doc__") if isinstance(obj, type) else getattr(obj, "__doc__", None)
    if isinstance(obj, type) and (dataclasses.is_dataclass(obj) or hasattr(obj, "_fields")) and doc \
            and doc.startswith(f"{obj.__name__}("):
        return False  # the signature a dataclass or a NamedTuple writes for itself is no docstring
    return bool(doc and doc.strip())


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """The public methods and properties ``cls`` itself defines."""
    for name, value in vars(cls).items():
        if name.startswith("_") or name in _FOREIGN:
            continue
        if isinstance(value, (staticmethod, classmethod)):
            yield name, value.__func__
        elif isinstance(value, property):
            yield name, value.fget
        elif isinstance(value, cached_property):
            yield name, value.func
        elif inspect.isfunction(value):
            yield name, value


def _project_classes(cls: type) -> Iterator[type]:
    for base in cls.__mro__:
        if _is_project(base) and base is not object:
            yield base


def _walk(module_name: str, seen: dict[str, bool], classes: dict[str, type]) -> None:
    """Count ``module_name``'s ``__all__`` into ``seen``; a submodule it names is walked in turn."""
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if obj is None and importlib.util.find_spec(f"{module_name}.{name}") is not None:
            obj = importlib.import_module(f"{module_name}.{name}")
        if isinstance(obj, types.ModuleType):
            seen[obj.__name__] = bool(obj.__doc__ and obj.__doc__.strip())
            _walk(obj.__name__, seen, classes)
        elif isinstance(obj, type) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
            # each class or function once, under the name of the module that defines it
            seen[f"{obj.__module__}.{obj.__qualname__}"] = _own_doc(obj)
            if isinstance(obj, type):
                for base in _project_classes(obj):
                    classes[f"{base.__module__}.{base.__qualname__}"] = base
        else:  # a constant or a type alias: an attribute docstring where it is assigned
            where, there = _definition(module, name)
            seen[f"{where}.{there}"] = _has_attribute_docstring(where, there)


def inventory() -> dict[str, bool]:
    """Each public name (``module.Name`` or ``module.Class.method``, each once) and whether it is documented."""
    seen: dict[str, bool] = {}
    classes: dict[str, type] = {}
    for package_name in PACKAGES:
        _walk(package_name, seen, classes)
    for qualname, cls in classes.items():
        for name, func in _members(cls):
            seen[f"{qualname}.{name}"] = bool(func.__doc__ and func.__doc__.strip())
    return seen


def test_public_names_are_documented() -> None:
    seen = inventory()
    missing = sorted(k for k, ok in seen.items() if not ok)
    coverage = 1 - len(missing) / len(seen)
    assert len(seen) > 100, f"the inventory found only {len(seen)} public names: the walk is broken"
    assert coverage >= THRESHOLD, (f"docstring coverage {coverage:.1%} of {len(seen)} public names is below "
                                   f"{THRESHOLD:.0%}; undocumented ({len(missing)}):\n  " + "\n  ".join(missing))


def test_public_models_describe_every_field() -> None:
    # every pydantic model named in an __all__ the inventory walks: ttir's own, the packages', the submodules'
    models: dict[str, type[pydantic.BaseModel]] = {}

    def collect(module_name: str) -> None:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if obj is None and importlib.util.find_spec(f"{module_name}.{name}") is not None:
                collect(f"{module_name}.{name}")
            elif isinstance(obj, type) and issubclass(obj, pydantic.BaseModel):
                models[f"{obj.__module__}.{obj.__qualname__}"] = obj

    for package_name in PACKAGES:
        collect(package_name)
    assert "ttir.core.types.Action" in models and "ttir.core.config.TTIRConfig" in models
    missing = [f"{key}.{f}" for key, model in sorted(models.items())
               for f, info in model.model_fields.items() if not info.description]
    assert not missing, "fields without a description (add Field(description=...)):\n  " + "\n  ".join(missing)


def test_the_walk_counts_what_is_undocumented(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the measure must be able to fail: a package with one documented and one undocumented thing of each kind
    pkg = tmp_path / "ttirfake"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        """A package."""
        import dataclasses

        LIMIT = 3
        """The limit."""
        BARE = 4

        def told():
            """Documented."""

        def untold():
            pass

        class Tool:
            """Documented."""

            def use(self):
                pass

            @property
            def size(self):
                """Documented."""

        @dataclasses.dataclass
        class Point:
            x: int

        __all__ = ["BARE", "LIMIT", "Point", "Tool", "told", "untold", "sub"]
    '''), encoding="utf-8")
    (pkg / "sub.py").write_text("__all__ = []\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys.modules[__name__], "PROJECT_ROOTS", {*PROJECT_ROOTS, "ttirfake"})
    seen: dict[str, bool] = {}
    classes: dict[str, type] = {}
    try:
        _walk("ttirfake", seen, classes)
    finally:
        for name in ("ttirfake", "ttirfake.sub"):
            sys.modules.pop(name, None)
    for qualname, cls in classes.items():
        for name, func in _members(cls):
            seen[f"{qualname}.{name}"] = bool(func.__doc__)
    assert seen == {"ttirfake.BARE": False, "ttirfake.LIMIT": True, "ttirfake.Point": False, "ttirfake.Tool": True,
                    "ttirfake.told": True, "ttirfake.untold": False, "ttirfake.sub": False,
                    "ttirfake.Tool.use": False, "ttirfake.Tool.size": True}


def test_report() -> None:
    # the coverage table, shown with -s (pytest captures it otherwise)
    seen = inventory()
    missing = sorted(k for k, ok in seen.items() if not ok)
    print(f"\ndocumented {len(seen) - len(missing)} of {len(seen)} public names "
          f"({1 - len(missing) / len(seen):.1%}); undocumented: {', '.join(missing) or 'none'}")


EXAMPLES = (("ttir", "guard"), ("ttir", "Observation.from_xml"), ("ttir", "Action"))


@pytest.mark.parametrize(("module_name", "attr_path"), EXAMPLES, ids=[".".join(e) for e in EXAMPLES])
def test_docstring_examples_run(module_name: str, attr_path: str) -> None:
    obj: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        obj = getattr(obj, part)
    dotted = f"{module_name}.{attr_path}"
    # the class's own docstring only (recurse=False): each named example is checked on its own
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, dotted, globs={}) if t.examples]
    assert tests, f"{dotted} has no doctest example (an `Examples:` section with >>> lines) in its docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {dotted} failed (output above)"
