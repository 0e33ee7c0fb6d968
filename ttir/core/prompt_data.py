"""Untrusted text going into a prompt: screen text, resource ids, package names, agents' and
models' own words. Apps and web pages write that text, so it is bounded and escaped
before a model reads it, and fenced as data the prompt tells the model not to obey.

- :func:`one_line` — whitespace collapsed (a newline cannot start a fake ``## Reply
  format`` section), control and bidi characters dropped, clipped;
- :func:`quote` — that, as a JSON string literal: quotes and backslashes escaped;
- :func:`fence` — a block of such lines between ``<data …>`` and ``</data>``; the
  tags are escaped wherever they occur inside, so data cannot close its fence.

The prompt files frame every ``<data>`` block as data, not instructions
(``prompts/data_notice.md``).
"""

from __future__ import annotations

import json
import re
import unicodedata

# bidi embeddings/overrides/isolates reorder what a reader sees (Trojan Source)
_BIDI = dict.fromkeys(map(ord, "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
_TAG = re.compile(r"<(/?)(data\b)", re.IGNORECASE)


def one_line(text: object, limit: int) -> str:
    """``text`` on one line: whitespace runs become one space, control characters go, at most ``limit`` chars."""
    s = " ".join(str(text)[: 8 * limit + 256].translate(_BIDI).split())  # sliced first: the work stays bounded
    if any(unicodedata.category(c) == "Cc" for c in s):
        s = "".join(c for c in s if unicodedata.category(c) != "Cc")
    return s if len(s) <= limit else s[: max(0, limit - 1)] + "…"


def quote(text: object, limit: int) -> str:
    """``text`` as a one-line, clipped, JSON-escaped string literal (``"Save \\"draft\\""``)."""
    return escape_tags(json.dumps(one_line(text, limit), ensure_ascii=False))


def escape_tags(text: str) -> str:
    """``<data`` / ``</data`` written as ``\\u003cdata`` so text cannot open or close a fence."""
    return _TAG.sub(lambda m: "\\u003c" + m.group(1) + m.group(2), text)


def fence(source: str, body: str) -> str:
    """``body`` (lines built from :func:`quote` / :func:`one_line` values) fenced as data from ``source``."""
    return f'<data source="{escape_tags(one_line(source, 60))}">\n{escape_tags(body)}\n</data>'


__all__ = ["escape_tags", "fence", "one_line", "quote"]
