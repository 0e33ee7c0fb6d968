"""Prompt templates as files, and a tiny loader.

Templates use ``string.Template`` placeholders: ``$name`` or ``${name}``
(``$$`` is a literal dollar sign). ``$`` was chosen over ``{name}`` because
the prompts are full of JSON examples whose braces would need escaping.

    from prompts import load, available
    text = load("diagnose").render(goal="…", history="…", screen="…", pending="…", step=3)
    load("/path/to/my_diagnose.md")          # a user's own file works the same

Rendering checks the variables: a missing one raises :class:`PromptError`
naming it and the file; extra keyword arguments are ignored, so one set of
variables can feed several templates. Imports nothing from the project.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

PROMPTS_DIR = Path(__file__).resolve().parent
SUFFIXES = (".md", ".txt")


MAX_PROMPT_BYTES = 1 << 20  # a prompt is a few KB; a larger file is not one


class PromptError(ValueError):
    """A prompt that cannot be found, parsed or rendered; the message names the file."""


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt file: its ``name``, ``path``, raw ``text`` and the ``variables`` it uses."""

    name: str
    path: Path
    text: str

    def __post_init__(self) -> None:
        bad = _invalid_placeholders(self.text)
        if bad:
            line, snippet = bad[0]
            raise PromptError(
                f"prompt {self.path}: line {line}: {snippet!r} is not a valid placeholder; "
                "use $name or ${name}, and $$ for a literal dollar sign"
            )

    @property
    def variables(self) -> list[str]:
        """The placeholder names, in order of first use."""
        seen: list[str] = []
        for m in string.Template.pattern.finditer(self.text):
            name = m.group("named") or m.group("braced")
            if name and name not in seen:
                seen.append(name)
        return seen

    def render(self, **values: Any) -> str:
        """The text with every placeholder filled (values are turned into strings)."""
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise PromptError(
                f"prompt {self.name!r} ({self.path}) needs variable(s) {', '.join(missing)} "
                f"that were not given; given: {', '.join(sorted(values)) or 'none'}"
            )
        return string.Template(self.text).substitute({k: _text(v) for k, v in values.items()})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _invalid_placeholders(text: str) -> list[tuple[int, str]]:
    out = []
    for m in string.Template.pattern.finditer(text):
        if m.group("invalid") is not None:
            pos = m.start()
            line = text.count("\n", 0, pos) + 1
            out.append((line, text[pos : pos + 8].split("\n", 1)[0]))
    return out


def available() -> list[str]:
    """Names of the prompts shipped in this folder."""
    return sorted(p.stem for p in PROMPTS_DIR.iterdir() if p.suffix in SUFFIXES and p.is_file()
                  and not p.name.startswith(("_", ".")) and p.stem.upper() != "README")


def path_of(name_or_path: Union[str, Path]) -> Path:
    """The file a name (``"diagnose"``) or a path (``"my/prompt.md"``) refers to."""
    raw = str(name_or_path)
    if not raw.strip():
        raise PromptError("prompt name is empty; expected a name from prompts/ or a file path")
    candidate = Path(raw).expanduser()
    looks_like_path = isinstance(name_or_path, Path) or "/" in raw or "\\" in raw or candidate.suffix in SUFFIXES
    if looks_like_path:
        if not candidate.exists():
            raise PromptError(f"prompt file {candidate} does not exist")
        if not candidate.is_file():  # /dev/zero, a folder: "does not exist" was wrong, and reading it endless
            raise PromptError(f"prompt file {candidate} is not a regular file; expected a text file such as a copy "
                              "of prompts/diagnose.md")
        return candidate
    for suffix in SUFFIXES:
        p = PROMPTS_DIR / f"{raw}{suffix}"
        if p.is_file():
            return p
    if candidate.is_file():  # a bare file name in the working directory
        return candidate
    raise PromptError(f"unknown prompt {raw!r}; available: {', '.join(available())} (or give a file path)")


def load(name_or_path: Union[str, Path]) -> PromptTemplate:
    """The template for a shipped prompt name or a user's own file path."""
    path = path_of(name_or_path)
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_PROMPT_BYTES + 1)  # bounded: a user's file named in a config
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(f"prompt file {path} cannot be read: {exc}") from exc
    if len(data) > MAX_PROMPT_BYTES:
        raise PromptError(f"prompt file {path} is larger than {MAX_PROMPT_BYTES:,} bytes; a prompt is a few KB")
    if not text.strip():
        raise PromptError(f"prompt file {path} is empty")
    return PromptTemplate(name=path.stem, path=path, text=text)


__all__ = ["PROMPTS_DIR", "PromptError", "PromptTemplate", "available", "load", "path_of"]
