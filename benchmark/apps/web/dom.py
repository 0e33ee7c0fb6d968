"""A tiny DOM: HTML text parsed (stdlib ``html.parser``) into an element tree that
page scripts can read and change before the page is drawn."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from typing import Callable, Iterator, Optional, Union

VOID_TAGS = frozenset({"br", "input", "meta", "link", "img", "hr", "area", "base", "col", "source", "wbr"})
RAW_TEXT_TAGS = frozenset({"script", "style", "title"})

Child = Union["Element", str]


@dataclass(eq=False)
class Element:
    """One HTML element; ``children`` holds elements and text strings in document order."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Child] = field(default_factory=list)

    # -- identity ---------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.attrs.get("id", "")

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(self.attrs.get("class", "").split())

    def add_class(self, name: str) -> None:
        if name not in self.classes:
            self.attrs["class"] = " ".join((*self.classes, name))

    # -- tree -----------------------------------------------------------------------
    def elements(self) -> Iterator["Element"]:
        """This element and every element below it, in document order."""
        yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.elements()

    def find(self, pred: Callable[["Element"], bool]) -> Optional["Element"]:
        return next((e for e in self.elements() if pred(e)), None)

    def by_id(self, element_id: str) -> Optional["Element"]:
        return self.find(lambda e: e.id == element_id)

    def by_tag(self, tag: str) -> list["Element"]:
        return [e for e in self.elements() if e.tag == tag]

    def text_content(self) -> str:
        return "".join(c if isinstance(c, str) else c.text_content() for c in self.children)

    def append(self, child: Child) -> Child:
        self.children.append(child)
        return child

    def set_text(self, value: str) -> None:
        self.children = [value]

    def clear(self) -> None:
        self.children = []

    # -- visibility (what a script toggles with style.display) ------------------------
    def hide(self) -> None:
        self.attrs["hidden"] = ""

    def show(self) -> None:
        self.attrs.pop("hidden", None)
        style = self.attrs.get("style", "")
        if "display" in style:
            kept = [d for d in style.split(";") if d.strip() and not d.strip().startswith("display")]
            self.attrs["style"] = ";".join(kept)


def element(tag: str, text: str = "", **attrs: str) -> Element:
    """Build an element; ``class_`` stands for the ``class`` attribute."""
    if "class_" in attrs:
        attrs["class"] = attrs.pop("class_")
    return Element(tag, dict(attrs), [text] if text else [])


class Document:
    """A parsed page: the ``<html>`` root plus shortcuts to its parts."""

    def __init__(self, root: Element):
        self.root = root

    @property
    def head(self) -> Element:
        return self._part("head")

    @property
    def body(self) -> Element:
        return self._part("body")

    def _part(self, tag: str) -> Element:
        found = self.root.find(lambda e: e.tag == tag)
        if found is None:
            found = Element(tag)
            self.root.append(found)
        return found

    @property
    def title(self) -> str:
        t = self.root.find(lambda e: e.tag == "title")
        return " ".join(t.text_content().split()) if t is not None else ""

    def by_id(self, element_id: str) -> Optional[Element]:
        return self.root.by_id(element_id)

    def stylesheet(self) -> str:
        return "\n".join(e.text_content() for e in self.root.elements() if e.tag == "style")

    def copy(self) -> "Document":
        return Document(copy.deepcopy(self.root))


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("html")
        self.stack: list[Element] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        values = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "html":
            self.root.attrs.update(values)
            return
        el = Element(tag, values)
        self.stack[-1].append(el)
        if tag not in VOID_TAGS:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS and self.stack[-1].tag == tag:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        # close up to the matching open element; ignore stray end tags
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if data:
            self.stack[-1].append(data)


@lru_cache(maxsize=64)
def _parse_cached(html: str) -> Document:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return Document(builder.root)


def parse(html: str) -> Document:
    """Parse HTML into a fresh :class:`Document` (callers may change it freely)."""
    return _parse_cached(html).copy()
