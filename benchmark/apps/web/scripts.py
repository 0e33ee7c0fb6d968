"""Page scripts: the Python behaviour of a page (we run no JavaScript).

A page names its script in a ``<script type="text/x-page-script" data-script="maze"
data-seed="…">`` element. The script is stateless; its state is a plain dict kept
by the browser tab (so verifiers can read it): ``init_state`` builds it from the
element's ``data-*`` attributes, ``render`` writes it into a fresh DOM every frame,
``call`` handles an ``onclick="fn('arg')"``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Optional

from benchmark.apps.web.dom import Document

SCRIPT_TYPE = "text/x-page-script"


class PageScript:
    name: ClassVar[str] = ""

    def init_state(self, params: dict[str, str]) -> dict[str, Any]:
        return {}

    def render(self, doc: Document, state: dict[str, Any]) -> None:
        """Write ``state`` into ``doc`` (a fresh copy of the page file)."""

    def call(self, state: dict[str, Any], fn: str, args: list[str], values: dict[str, str]) -> None:
        """Handle ``fn(*args)`` from an onclick; ``values`` are the page's input values by id."""


SCRIPTS: dict[str, type[PageScript]] = {}


def register(cls: type[PageScript]) -> type[PageScript]:
    if not cls.name:
        raise ValueError(f"page script {cls.__name__} needs a name")
    SCRIPTS[cls.name] = cls
    return cls


def script_for(doc: Document) -> tuple[Optional[PageScript], dict[str, str]]:
    """The registered script a page asks for and its ``data-*`` parameters."""
    for el in doc.root.elements():
        if el.tag == "script" and el.attrs.get("type") == SCRIPT_TYPE:
            name = el.attrs.get("data-script", "")
            if name not in SCRIPTS:
                raise KeyError(f"page script data-script={name!r} is not registered; known: {', '.join(sorted(SCRIPTS))}")
            params = {k[5:]: v for k, v in el.attrs.items() if k.startswith("data-") and k != "data-script"}
            return SCRIPTS[name](), params
    return None, {}


_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*$", re.S)


def parse_call(code: str) -> tuple[str, list[str]]:
    """``move('up')`` -> ("move", ["up"]); arguments are literals (quotes stripped)."""
    m = _CALL.match(code)
    if m is None:
        raise ValueError(f"onclick={code!r} is not a supported call; expected fn('arg', …)")
    raw = m.group(2).strip()
    args = [a.strip().strip("'\"") for a in raw.split(",")] if raw else []
    return m.group(1), args
