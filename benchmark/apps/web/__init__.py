"""Web content for the simulated Chrome: a tiny DOM, a CSS subset, a renderer into
widgets and per-page Python scripts (importing this registers the page scripts)."""

from benchmark.apps.web import maze, multiply  # noqa: F401  (register page scripts)
from benchmark.apps.web.dom import Document, Element, element, parse
from benchmark.apps.web.render import RenderContext, render_page
from benchmark.apps.web.scripts import SCRIPTS, PageScript, parse_call, register, script_for

__all__ = [
    "Document", "Element", "PageScript", "RenderContext", "SCRIPTS",
    "element", "parse", "parse_call", "register", "render_page", "script_for",
]
