"""UI languages: the string tables in ``benchmark/data/locale/<lang>.yaml`` and the
pass that shows a screen in one of them.

Android apps look their strings up per locale (``res/values-es/strings.xml``); the
simulated apps are written in English, so the device translates each frame's widget
tree instead, as a string table would: exact strings (labels, titles, hints,
descriptions), templates for strings with a variable part (``"{n} selected"``,
``"More options for {name}"``) and the clock's month and day names. What users
typed or saved (names, notes, messages, file names) and web pages stay as they are,
as on a real phone. A string a table lacks stays English, as in a partly
translated app.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Optional

from benchmark.ui.widgets import Screen, Widget
from ttir.core.validation import load_package_yaml

DEFAULT_LANGUAGE = "en"
_PLACEHOLDER = re.compile(r"\{(\w+)(:t)?\}")


def language_of(locale: str) -> str:
    """The language part of a BCP 47 tag: ``es-ES`` -> ``es``."""
    return (locale or DEFAULT_LANGUAGE).split("-", 1)[0].lower()


@lru_cache(maxsize=1)
def languages() -> tuple[str, ...]:
    """Every language with a table (English first)."""
    folder = resources.files("benchmark.data").joinpath("locale")
    found = sorted(e.name[:-5] for e in folder.iterdir() if e.name.endswith(".yaml"))
    return tuple(sorted(found, key=lambda x: (x != DEFAULT_LANGUAGE, x)))


@dataclass(frozen=True)
class _Template:
    pattern: re.Pattern[str]
    target: str
    translated: frozenset[str]  # placeholders whose captured text is translated too


@dataclass
class StringTable:
    """One language's strings: exact translations, templates and date words."""

    language: str
    name: str
    exact: dict[str, str] = field(default_factory=dict)
    templates: list[_Template] = field(default_factory=list)
    dates: dict[str, Any] = field(default_factory=dict)

    def translate(self, value: str) -> str:
        """``value`` in this language (unchanged when the table has no entry for it)."""
        return _translate(self.language, value)


@lru_cache(maxsize=None)
def table(language: str) -> StringTable:
    """The string table of ``language`` (``es``, ``de``, ``zh`` …); raises ValueError for one without a file."""
    if language not in languages():
        raise ValueError(f"language={language!r} has no string table; available: {', '.join(languages())} "
                         f"(benchmark/data/locale/<language>.yaml)")
    path = f"locale/{language}.yaml"
    data = load_package_yaml(resources.files("benchmark.data").joinpath(path).read_text(encoding="utf-8")) or {}
    where = f"benchmark/data/{path}"
    unknown = sorted(set(data) - {"name", "strings", "templates", "dates"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; expected name, strings, templates, dates")
    dates = dict(data.get("dates") or {})
    exact = {str(k): str(v) for k, v in (data.get("strings") or {}).items()}
    # the clock's words are table entries too: an app's own "Mon" or "PM" reads as the clock's
    base = _english_dates() if language != DEFAULT_LANGUAGE else dates
    for key in ("weekdays", "months"):
        for en, local in zip(base.get(key, []), dates.get(key, [])):
            exact.setdefault(str(en), str(local))
    for key in ("am", "pm"):
        if key in dates and key in base:
            exact.setdefault(str(base[key]), str(dates[key]))
    templates = []
    for src, dst in (data.get("templates") or {}).items():
        names = [m.group(1) for m in _PLACEHOLDER.finditer(str(src))]
        missing = [n for n in _PLACEHOLDER.findall(str(dst)) if n[0] not in names]
        if missing:
            raise ValueError(f"{where}: template {src!r} -> {dst!r} uses {{{missing[0][0]}}}, which the source lacks")
        regex = "^" + _PLACEHOLDER.sub(lambda m: f"(?P<{m.group(1)}>.+?)", _escape_outside(str(src))) + "$"
        templates.append(_Template(re.compile(regex, re.S), _PLACEHOLDER.sub(lambda m: "{" + m.group(1) + "}", str(dst)),
                                   frozenset(m.group(1) for m in _PLACEHOLDER.finditer(str(src)) if m.group(2))))
    return StringTable(language=language, name=str(data.get("name", language)), exact=exact, templates=templates,
                       dates=dates)


def _escape_outside(src: str) -> str:
    """``re.escape`` everything but the ``{placeholders}``."""
    out, pos = [], 0
    for m in _PLACEHOLDER.finditer(src):
        out.append(re.escape(src[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(re.escape(src[pos:]))
    return "".join(out)


def _english_dates() -> dict[str, Any]:
    return table(DEFAULT_LANGUAGE).dates


@lru_cache(maxsize=65536)
def _translate(language: str, value: str) -> str:
    t = table(language)
    if not value or language == DEFAULT_LANGUAGE:
        return value
    hit = t.exact.get(value)
    if hit is not None:
        return hit
    if ", " in value:  # a list of known words ("Mon, Tue, Wed") reads item by item
        local = [t.exact.get(i) for i in value.split(", ")]
        if all(x is not None for x in local):
            return ", ".join(local)  # type: ignore[arg-type]
    for tpl in t.templates:
        m = tpl.pattern.match(value)
        if m is not None:
            parts = {k: (_translate(language, v) if k in tpl.translated else v) for k, v in m.groupdict().items()}
            return tpl.target.format(**parts)
    return value


def translate(locale: str, value: str) -> str:
    """``value`` shown in ``locale``'s language (English and unknown strings unchanged)."""
    return _translate(language_of(locale), value)


# ---------------------------------------------------------------- widget trees


def localize(widget: Optional[Widget], language: str) -> None:
    """Translate a widget tree in place: texts, descriptions, hints — never what a
    field holds, nor a subtree marked ``i18n=False`` (a web page)."""
    if widget is None or language == DEFAULT_LANGUAGE:
        return
    stack = [widget]
    while stack:
        w = stack.pop()
        if w.style.get("i18n") is False:
            continue
        if w.text and w.kind != "field":
            w.text = _translate(language, w.text)
        if w.desc:
            w.desc = _translate(language, w.desc)
        if w.hint:
            w.hint = _translate(language, w.hint)
        stack.extend(w.children)


def localize_screen(screen: Screen, language: str) -> None:
    for part in (screen.top, screen.body, screen.bottom, screen.fab, screen.dialog):
        localize(part, language)
