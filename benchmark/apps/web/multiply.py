"""AndroidWorld's BrowserMultiply page behaviour: a "Click Me" button shows a new
seeded number per click; after five clicks a form asks for their product."""

from __future__ import annotations

import math
import random
from typing import Any

from benchmark.apps.web.dom import Document, element
from benchmark.apps.web.scripts import PageScript, register

CLICKS = 5


def multiply_numbers(seed: int) -> list[int]:
    """The numbers the page shows, in order (one on load, one per click after that)."""
    rng = random.Random(seed)
    out: list[int] = []
    while len(out) < CLICKS:
        n = rng.randint(1, 10)
        if not out or n != out[-1]:  # every click shows a new number, so a click is always visible
            out.append(n)
    return out


@register
class MultiplyScript(PageScript):
    name = "multiply"

    def init_state(self, params: dict[str, str]) -> dict[str, Any]:
        seed = params.get("seed", "")
        if not seed.isdigit():
            raise ValueError(f"multiply page data-seed={seed!r} is not a non-negative integer")
        return {"numbers": multiply_numbers(int(seed)), "shown": 1, "clicks": 0, "answer": None, "solved": False}

    def render(self, doc: Document, state: dict[str, Any]) -> None:
        number = doc.by_id("number")
        if number is not None:
            number.set_text(str(state["numbers"][state["shown"] - 1]))
        if state["clicks"] >= CLICKS:
            for eid, visible in (("button", False), ("form", True)):
                el = doc.by_id(eid)
                if el is not None:
                    el.show() if visible else el.hide()
        result = doc.by_id("result")
        if result is not None and state["answer"] is not None:
            result.children = [element("h2", "Success!" if state["solved"] else "")]

    def call(self, state: dict[str, Any], fn: str, args: list[str], values: dict[str, str]) -> None:
        if fn == "handleButtonClick" and state["clicks"] < CLICKS:
            state["clicks"] += 1
            if state["clicks"] < CLICKS:
                state["shown"] += 1
        elif fn == "checkAnswer" and state["clicks"] >= CLICKS:
            raw = values.get("answer", "").strip()
            state["answer"] = raw
            state["solved"] = raw.lstrip("-").isdigit() and int(raw) == math.prod(state["numbers"])
