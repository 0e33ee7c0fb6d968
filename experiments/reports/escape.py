"""Escaping text that strangers wrote (app screens, agents, models, specs) into the report's
Markdown and the viewer's HTML. Nothing from a run reaches either file live.

- ``markdown_text``: plain text inside Markdown (a table cell, a line of prose). HTML is
  turned into entities (a renderer that allows inline HTML shows ``<script>`` as text),
  link and image brackets and code ticks are backslash-escaped, and a table's ``|`` and
  line breaks cannot end its cell or row.
- ``script_json``: JSON for a ``<script type="application/json">`` data island. ``<``, ``>``
  and ``&`` become ``\\u`` escapes, so no ``</script>``, ``<!--`` or ``<script`` can end or
  swallow the element (JSON.parse reads the escapes back as the same characters), and
  U+2028 / U+2029 are escaped for parsers that treat them as line ends.
"""

from __future__ import annotations

import json
from typing import Any

_MARKDOWN = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "[": "\\[", "]": "\\]",
                           "`": "\\`", "\\": "\\\\", "\r": " ", "\n": " "})
_SCRIPT = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def markdown_text(value: Any) -> str:
    """``value`` as inert text for a Markdown document (and a table cell)."""
    return "" if value is None else str(value).translate(_MARKDOWN)


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element of an HTML page."""
    # the escapes only ever replace characters inside JSON strings: <, >, & and U+2028/9 are not JSON syntax
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).translate(_SCRIPT)
