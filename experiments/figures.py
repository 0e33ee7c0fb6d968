"""The figures the README and the docs quote, kept in one file so that the text cannot drift.

Holds:

- ``FIGURES_FILE`` (``docs/figures.yaml``): every quoted figure with its value, what it counts,
  the command that produces it, the data it comes from and, for a measurement, the machine;
- ``Figure``: one entry of that file (a typed record; unknown keys are refused);
- ``COMPUTED``: the figures cheap enough to recompute from the shipped data (the corpus's
  manifest, labels and splits, the specs, the registries, the screen model's report), each a
  function returning the figure as the text quotes it;
- ``quotes(text)``: the marked figure spots of a Markdown text, ``<!--fig:ID-->VALUE<!--/fig-->``;
- ``check_text`` / ``check_files``: every marked spot against the file; ``recompute`` /
  ``drift``: every computed figure against the file;
- ``on_page_markdown``: the same check as a hook of the docs build (``mkdocs.yml`` names this file under
  ``hooks:``), so ``mkdocs build --strict`` fails on a quote that is not the file's;
- ``main``: ``python -m experiments.figures --check`` (what the test and the docs build check)
  and ``--write`` (rewrite the computed values of the file from the shipped data).

A measured figure (a run of the runner, ``ttir tune eval --real``, a timing) is kept with its
command and is not recomputed here: re-measure it with that command and change the file, and
the check then names every spot in the text that still quotes the old value.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

ROOT = Path(__file__).resolve().parents[1]
FIGURES_FILE = ROOT / "docs" / "figures.yaml"
QUOTING_FILES = ("README.md",)  # besides every page under docs/
FigureCheck = Literal["computed", "measured"]
FIGURE_CHECKS: tuple[FigureCheck, ...] = ("computed", "measured")

# <!--fig:ID-->VALUE<!--/fig-->: invisible on GitHub and in the built site, the value stays readable in the source
MARK = re.compile(r"<!--\s*fig:([A-Za-z0-9_.-]+)\s*-->(.*?)<!--\s*/fig\s*-->", re.S)
OPEN_MARK = re.compile(r"<!--\s*fig:([A-Za-z0-9_.-]+)\s*-->")


class Figure(BaseModel):
    """One quoted figure."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(description="The figure exactly as the text quotes it (thousands separated by commas).")
    what: str = Field(description="What it counts or measures.")
    command: str = Field(description="The command that prints it.")
    data: str = Field(description="What it is computed from: shipped files, the simulator, real screens, a model.")
    check: FigureCheck = Field(description="computed: recomputed from the shipped data by the figures test; "
                                           "measured: a run or a timing, kept with its command.")
    machine: Optional[str] = Field(None, description="For a measurement: the machine it ran on.")


def _n(x: int) -> str:
    return f"{x:,}"


# -- computed figures --------------------------------------------------------------------------------------
def _manifest() -> list[dict]:
    from experiments.real_screens.corpus import CORPUS_DIR

    with open(CORPUS_DIR / "manifest.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _screens(split: str = "all") -> list:
    from experiments.real_screens.corpus import load_corpus

    return load_corpus(split)


def _split_files(split: str) -> str:
    return _n(len(_screens(split)))


def _split_repos(split: str) -> str:
    return _n(len({s.repo for s in _screens(split)}))


def _readable(split: str) -> list:
    return [s for s in _screens(split) if not s.label.malformed]


def _category(split: str, category: str) -> str:
    return _n(sum(1 for s in _screens(split) if s.label.category == category))


def _languages() -> str:
    return _n(len({s.label.language for s in _screens() if s.label.language and s.label.language != "unknown"}))


def _images() -> str:
    from experiments.real_screens.corpus import CORPUS_DIR

    exts = {".png", ".jpg", ".jpeg", ".webp"}
    return _n(sum(1 for p in (CORPUS_DIR / "files").rglob("*") if p.suffix.lower() in exts))


EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
SCREEN_TEXT = re.compile(r'(?:text|content-desc)="([^"]*)"')


def _with_email() -> str:
    """Corpus files whose screen text (``text`` / ``content-desc``) holds something shaped like an e-mail address."""
    from ttir.core.dump import dump_text

    count = 0
    for s in _screens():
        try:
            xml = dump_text(s.data)
        except Exception:  # a malformed file: read as bytes, leniently
            xml = s.data.decode("utf-8", "replace")
        count += any(EMAIL.search(t) for t in SCREEN_TEXT.findall(xml))
    return _n(count)


def _licence_not_stated() -> str:
    return _n(sum(1 for m in _manifest() if not m.get("licence")))


def _episodes(spec: str) -> str:
    from experiments.spec import ExperimentSpec

    return _n(len(ExperimentSpec.from_yaml(ROOT / "experiments" / "specs" / f"{spec}.yaml").episodes()))


def _model_report() -> dict:
    with open(ROOT / "diagnosers" / "data" / "screen_model.json", encoding="utf-8") as f:
        return json.load(f)


def _model_cv() -> dict:
    report = _model_report()
    return report["cross_validation"][str(float(report["C"]))]


def _model_kb() -> str:
    return f"{round((ROOT / 'diagnosers' / 'data' / 'screen_model.npz').stat().st_size / 1000)} KB"


def _tasks() -> str:
    from benchmark import task_names

    return _n(len(task_names()))


def _apps() -> str:
    from benchmark.apps import APP_CLASSES

    return _n(len(APP_CLASSES))


def _registry(name: str) -> str:
    import perturb

    return _n(len(getattr(perturb, name)))


COMPUTED: dict[str, Callable[[], str]] = {
    "corpus_files": lambda: _n(len(_manifest())),
    "corpus_repos": lambda: _n(len({m["repo"] for m in _manifest()})),
    "corpus_dev_files": lambda: _split_files("dev"),
    "corpus_dev_repos": lambda: _split_repos("dev"),
    "corpus_test_files": lambda: _split_files("test"),
    "corpus_test_repos": lambda: _split_repos("test"),
    "corpus_test_readable": lambda: _n(len(_readable("test"))),
    "corpus_test_readable_repos": lambda: _n(len({s.repo for s in _readable("test")})),
    "corpus_dev_interference": lambda: _category("dev", "interference"),
    "corpus_test_interference": lambda: _category("test", "interference"),
    "corpus_test_ordinary": lambda: _category("test", "ordinary"),
    "corpus_test_wanted": lambda: _category("test", "wanted"),
    "corpus_languages": _languages,
    "corpus_images": _images,
    "corpus_licence_not_stated": _licence_not_stated,
    "corpus_with_email": _with_email,
    "corpus_appium": lambda: _n(sum(1 for m in _manifest() if m.get("format") == "appium")),
    "corpus_focus_only": lambda: _n(sum(1 for s in _screens() if s.label.focus_only)),
    "corpus_malformed": lambda: _n(sum(1 for s in _screens() if s.label.malformed)),
    "tasks": _tasks,
    "apps": _apps,
    "perturbations_androidreality": lambda: _registry("ANDROIDREALITY"),
    "perturbations_antrap": lambda: _registry("ANTRAP"),
    "perturbations_extensions": lambda: _registry("EXTENSIONS"),
    "episodes_quickstart": lambda: _episodes("quickstart"),
    "episodes_androidreality": lambda: _episodes("androidreality"),
    "episodes_androidreality_sweep": lambda: _episodes("androidreality_sweep"),
    "episodes_antrap": lambda: _episodes("antrap"),
    "episodes_tree_loss": lambda: _episodes("tree_loss"),
    "episodes_tuning": lambda: _episodes("tuning"),
    "episodes_tuning_heldout": lambda: _episodes("tuning_heldout"),
    "screen_model_size": _model_kb,
    "screen_model_screens": lambda: _n(_model_report()["screens"]),
    "screen_model_interference": lambda: _n(_model_report()["interference"]),
    "screen_model_repos": lambda: _n(_model_report()["repositories"]),
    "screen_model_oof_found": lambda: _n(_model_cv()["interference"]["at_or_above"]),
    "screen_model_oof_ordinary": lambda: f"{_model_cv()['ordinary']['at_or_above']} of {_model_cv()['ordinary']['n']}",
    "screen_model_oof_wanted": lambda: f"{_model_cv()['wanted']['at_or_above']} of {_model_cv()['wanted']['n']}",
}


# -- the file ------------------------------------------------------------------------------------------------
def load(path: Path = FIGURES_FILE) -> dict[str, Figure]:
    """Read the figures file.

    Args:
        path: the YAML file (``docs/figures.yaml``).

    Returns:
        Each figure by its id.

    Raises:
        ValueError: an entry that is not a valid ``Figure``, naming the id and the problem.
    """
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out: dict[str, Figure] = {}
    for fid, entry in raw.items():
        try:
            out[str(fid)] = Figure.model_validate(entry)
        except ValidationError as exc:  # said with the file, the id and the field, on one line
            said = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']} (got {e.get('input')!r})"
                             for e in exc.errors())
            raise ValueError(f"{path}: figure {fid!r}: {said}") from None
    return out


def recompute(ids: Optional[Iterable[str]] = None) -> dict[str, str]:
    """Recompute the computed figures from the shipped data.

    Args:
        ids: which ones (all of ``COMPUTED`` when None).

    Returns:
        Each figure's value, as the text quotes it.
    """
    return {fid: COMPUTED[fid]() for fid in (ids if ids is not None else COMPUTED)}


def drift(figures: dict[str, Figure], values: Optional[dict[str, str]] = None) -> list[str]:
    """Every disagreement between the file and the code: a computed figure whose value changed, a
    figure marked computed that nothing computes, a computed figure missing from the file.

    Args:
        figures: the figures file, read.
        values: the computed values (``recompute()`` when None).

    Returns:
        One message per problem.
    """
    problems = []
    for fid, fig in figures.items():
        if fig.check == "computed" and fid not in COMPUTED:
            problems.append(f"{fid}: marked computed, but experiments/figures.py has no function for it "
                            f"(add one to COMPUTED, or mark it measured)")
    for fid, value in (recompute() if values is None else values).items():
        if fid not in figures:
            problems.append(f"{fid}: computed ({value}) but missing from {FIGURES_FILE.name} "
                            f"(run `python -m experiments.figures --write`)")
        elif figures[fid].value != value:
            problems.append(f"{fid}: {FIGURES_FILE.name} says {figures[fid].value!r}, the shipped data gives {value!r} "
                            f"(run `python -m experiments.figures --write`, then fix the quotes it names)")
    return problems


def quotes(text: str) -> list[tuple[str, str, int]]:
    """The marked figure spots of a Markdown text.

    Args:
        text: Markdown.

    Returns:
        (figure id, quoted value, line number) for each ``<!--fig:ID-->VALUE<!--/fig-->``.
    """
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in MARK.finditer(text)]


def check_text(text: str, figures: dict[str, Figure], source: str) -> list[str]:
    """Every marked spot of ``text`` against the figures file: an unknown id, a quoted value that is not
    the file's, or a marker left open.

    Args:
        text: Markdown.
        figures: the figures file, read.
        source: the file's name, for the messages.

    Returns:
        One ``source:line: ...`` message per problem.
    """
    problems = []
    for fid, value, line in quotes(text):
        if fid not in figures:
            from difflib import get_close_matches

            near = get_close_matches(fid, list(figures), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            problems.append(f"{source}:{line}: figure {fid!r} is not in {FIGURES_FILE.name}{hint}")
        elif value != figures[fid].value:
            problems.append(f"{source}:{line}: figure {fid!r} quoted as {value!r}, {FIGURES_FILE.name} says "
                            f"{figures[fid].value!r} ({figures[fid].command})")
    for m in MARK.finditer(text):  # Markdown (Python-Markdown and GitHub's) opens an HTML block at a line's `<!--`
        line_start = text.rfind("\n", 0, m.start()) + 1
        if not text[line_start:m.start()].strip():
            problems.append(f"{source}:{text.count(chr(10), 0, m.start()) + 1}: figure {m.group(1)!r} begins a line, "
                            f"which Markdown reads as the start of an HTML block (the text around it breaks): "
                            f"put the word before it on the same line")
    closed = {m.start() for m in MARK.finditer(text)}
    for m in OPEN_MARK.finditer(text):
        if m.start() not in closed:
            problems.append(f"{source}:{text.count(chr(10), 0, m.start()) + 1}: figure {m.group(1)!r} has no "
                            f"closing <!--/fig-->")
    return problems


def quoting_files(root: Path = ROOT) -> list[Path]:
    """The README and every Markdown page of the docs site."""
    return [p for p in (root / f for f in QUOTING_FILES) if p.exists()] + sorted((root / "docs").rglob("*.md"))


def check_files(figures: dict[str, Figure], root: Path = ROOT) -> list[str]:
    """``check_text`` over the README and every docs page."""
    out = []
    for path in quoting_files(root):
        out += check_text(path.read_text(encoding="utf-8"), figures, str(path.relative_to(root)))
    return out


def write(path: Path = FIGURES_FILE, values: Optional[dict[str, str]] = None) -> list[str]:
    """Rewrite the computed values of the figures file from the shipped data (other keys, measured
    figures and comments are kept: only ``value:`` lines of computed figures change).

    Args:
        path: the figures file.
        values: the computed values (``recompute()`` when None).

    Returns:
        The ids whose value changed.
    """
    figures = load(path)
    values = recompute() if values is None else values
    missing = [fid for fid in values if fid not in figures]
    if missing:
        raise SystemExit(f"{path.name}: add an entry (what, command, data, check: computed) for {', '.join(missing)}")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed, current = [], None
    for i, line in enumerate(lines):
        head = re.match(r"^([A-Za-z0-9_.-]+):\s*$", line)
        if head:
            current = head.group(1)
        elif current in values and re.match(r"^\s+value:", line) and figures[current].value != values[current]:
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = f"{indent}value: {json.dumps(values[current], ensure_ascii=False)}\n"
            changed.append(current)
    path.write_text("".join(lines), encoding="utf-8")
    return changed


def main(argv: Optional[list[str]] = None) -> int:
    """``python -m experiments.figures --check | --write``."""
    ap = argparse.ArgumentParser(prog="python -m experiments.figures",
                                 description="Check the figures the README and docs quote against docs/figures.yaml "
                                             "and the shipped data (--check), or rewrite the computed ones (--write).")
    ap.add_argument("--write", action="store_true", help="rewrite the computed values of docs/figures.yaml")
    ap.add_argument("--check", action="store_true", help="check the file and every marked quote (the default)")
    args = ap.parse_args(argv)
    if args.write:
        changed = write()
        print(f"{FIGURES_FILE.name}: {len(changed)} value(s) rewritten" + (f": {', '.join(changed)}" if changed else ""))
    figures = load()
    problems = drift(figures) + check_files(figures)
    for p in problems:
        print(p, file=sys.stderr)
    n_quotes = sum(len(quotes(p.read_text(encoding="utf-8"))) for p in quoting_files())
    print(f"{len(figures)} figures ({sum(f.check == 'computed' for f in figures.values())} computed), "
          f"{n_quotes} marked quotes: {'ok' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


def on_page_markdown(markdown: str, page: object, **_: object) -> str:
    """The docs build's hook: each page's marked quotes against the figures file, a warning per problem (which
    ``mkdocs build --strict`` turns into a failed build). The page is returned unchanged."""
    import logging

    source = str(getattr(getattr(page, "file", None), "src_uri", page))
    for problem in check_text(markdown, load(), f"docs/{source}"):
        logging.getLogger("mkdocs.plugins.ttir_figures").warning(problem)
    return markdown


if __name__ == "__main__":
    raise SystemExit(main())
