"""Reading a screen dump that a stranger's phone wrote: bounded, and never silently empty.

Two formats real users have:

- ``uiautomator dump``: ``<hierarchy rotation="0"><node index= text= resource-id= class=
  package= content-desc= … bounds="[x1,y1][x2,y2]">``, with its variants — the
  "UI hierchary dumped to: …" status line before or after the document, a BOM,
  UTF-16 with a BOM (what Windows PowerShell's ``>`` writes), CRLF line ends,
  pretty-printed copies, and focus-only dumps of old versions that hold only the
  focused (dialog) window;
- Appium's page source (UiAutomator2 driver): ``<hierarchy index="0" class="hierarchy"
  rotation="0" width= height=>`` with elements named by their class
  (``<android.widget.FrameLayout … bounds=…>``).

The parser is iterative (no recursion: depth is bounded by :data:`MAX_DEPTH`, not by
the interpreter's stack), refuses documents over :data:`MAX_CHARS` or with more than
:data:`MAX_NODES` nodes, refuses DOCTYPE / entity declarations (no real dump has
one), and checks every bounds and rotation value, naming the attribute, the node and
what was expected. A document it cannot read raises :class:`DumpError`; a dump whose
root holds no node at all (what a phone returns when it cannot read the screen) is an
empty tree, not an error.

Imports nothing from the project: :mod:`ttir.core.types` builds its elements from this.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Optional, Union

MAX_CHARS = 8 * 1024 * 1024  # real dumps are < 1 MB; long lists reach 2-3 MB
MAX_NODES = 50_000
MAX_DEPTH = 512  # real view trees are < 100 deep
MAX_COORD = 100_000  # |coordinate| beyond this is not a screen position
MAX_SCREEN = 16_384  # the largest screen side we accept when inferring a size
ATTR_CLIP = 10_000  # characters kept of one attribute value (a text field can hold a book)
_CHUNK = 1 << 16

_DOCTYPE = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.I)
_BOUNDS = re.compile(r"^\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]\s*$")
_IOS_HINT = "XCUIElementType"
# one line naming a .xml file (no markup, no line break): a path handed over instead of the dump's text
# (uiautomator's own status line, "UI hierchary dumped to: /sdcard/window_dump.xml", is told apart below)
_PATH_LIKE = re.compile(r"[^<>\n]{1,4096}\.xml\s*", re.IGNORECASE)


class DumpError(ValueError):
    """The text is not a screen dump this parser can read (the message says why)."""

@dataclass
class DumpNode:
    """One node: its attributes (clipped), the index of its parent node, its depth."""

    attrib: dict[str, str]
    tag: str
    parent: Optional[int]
    depth: int
    bounds: tuple[int, int, int, int]


@dataclass
class ParsedDump:
    format: str  # "uiautomator" | "appium"
    nodes: list[DumpNode] = field(default_factory=list)
    rotation: int = 0
    declared_size: Optional[tuple[int, int]] = None  # Appium's width / height on the root


def text_encoding(data: bytes) -> str:
    """The codec of a dump's bytes: UTF-16 when they start with its BOM (Windows PowerShell 5
    writes `adb exec-out uiautomator dump /dev/tty > f` so), else UTF-8 (a BOM allowed)."""
    return "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def dump_text(xml: Union[str, bytes]) -> str:
    """The dump as text: bytes decoded (UTF-8, or UTF-16 by its BOM), bounded in size."""
    if isinstance(xml, bytes):
        if len(xml) > MAX_CHARS:
            raise DumpError(f"dump is {len(xml):,} bytes; at most {MAX_CHARS:,} are read")
        encoding = text_encoding(xml)
        try:
            xml = xml.decode(encoding)
        except UnicodeDecodeError as exc:
            raise DumpError(f"dump is not {'UTF-16' if encoding == 'utf-16' else 'UTF-8'} text: {exc}") from None
        if "\x00" in xml[:200]:
            raise DumpError("dump is not UTF-8 text: it holds NUL bytes (UTF-16 without a byte-order mark?); "
                            "save it as UTF-8, or as UTF-16 with its BOM")
    if isinstance(xml, os.PathLike) or (isinstance(xml, str) and _PATH_LIKE.fullmatch(xml)
                                                          and "dumped to" not in xml):
        # a path where the text was meant: "no <hierarchy> root element found" hid it
        raise DumpError(f"xml looks like a file path ({str(xml)[:120]!r}), not a dump; pass the file's text, e.g. "
                        f"Observation.from_xml(Path({str(xml)[:120]!r}).read_text(encoding='utf-8'))")
    if not isinstance(xml, str):
        raise DumpError(f"xml must be a str or bytes dump, got {type(xml).__name__}")
    if len(xml) > MAX_CHARS:
        raise DumpError(f"dump is {len(xml):,} characters; at most {MAX_CHARS:,} are read")
    return xml.lstrip("\ufeff")


def _document(text: str) -> str:
    """The ``<hierarchy>`` element, without status lines before or after it."""
    if not text.strip():
        raise DumpError("xml must be a non-empty screen dump")
    if _DOCTYPE.search(text):
        raise DumpError("dump declares a DOCTYPE or entities; screen dumps never do, so it is refused")
    start = text.find("<hierarchy")
    if start == -1:
        if _IOS_HINT in text[:20000]:
            raise DumpError("this is an iOS (XCUITest) page source; only Android dumps are read")
        if "dumped to" in text and "<" not in text:
            raise DumpError(f"the dump holds only uiautomator's status line ({text.strip()[:80]!r}), no document")
        raise DumpError("xml is not a screen dump: no <hierarchy> root element found")
    end = text.rfind("</hierarchy>")
    if end != -1 and end > start:
        return text[start : end + len("</hierarchy>")]
    return text[start:]


def parse_bounds(raw: Optional[str], where: str) -> tuple[int, int, int, int]:
    """``"[x1,y1][x2,y2]"`` as integers; a missing value is an empty box at the origin."""
    if raw is None or raw == "":
        return (0, 0, 0, 0)
    m = _BOUNDS.match(raw)
    if not m:
        raise DumpError(f"{where}: bounds={raw[:60]!r} is not in the form '[x1,y1][x2,y2]'")
    x1, y1, x2, y2 = (int(v) for v in m.groups())
    if any(abs(v) > MAX_COORD for v in (x1, y1, x2, y2)):
        raise DumpError(f"{where}: bounds={raw[:60]!r} has a coordinate beyond ±{MAX_COORD:,}; "
                        "expected screen pixels")
    # an off-screen or inverted box (real dumps have both) becomes an empty box where it starts
    x1, y1 = max(0, x1), max(0, y1)
    return (x1, y1, max(x2, x1), max(y2, y1))


def _rotation(root: ET.Element) -> int:
    raw = root.get("rotation", "0") or "0"
    try:
        value = int(raw.strip())
    except ValueError:
        raise DumpError(f"<hierarchy>: rotation={raw[:20]!r} is not an integer; expected 0, 1, 2 or 3") from None
    if value not in (0, 1, 2, 3):
        raise DumpError(f"<hierarchy>: rotation={value} is out of range; expected 0, 1, 2 or 3")
    return value


def _declared_size(root: ET.Element) -> Optional[tuple[int, int]]:
    w, h = root.get("width"), root.get("height")
    if w is None or h is None:
        return None
    try:
        size = (int(w), int(h))
    except ValueError:
        raise DumpError(f"<hierarchy>: width={w[:20]!r} height={h[:20]!r} are not integers") from None
    if not (0 < size[0] <= MAX_SCREEN and 0 < size[1] <= MAX_SCREEN):
        raise DumpError(f"<hierarchy>: width={size[0]} height={size[1]} are outside 1..{MAX_SCREEN}")
    return size


def _is_node(el: ET.Element) -> bool:
    return el.tag == "node" or "bounds" in el.attrib or "class" in el.attrib


def parse_dump(xml: Union[str, bytes]) -> ParsedDump:
    """Parse a uiautomator dump or an Appium page source into a flat list of nodes."""
    doc = _document(dump_text(xml))
    parser = ET.XMLPullParser(events=("start", "end"))
    nodes: list[DumpNode] = []
    stack: list[Optional[int]] = []  # node index per open element (None for the root and wrappers)
    root: Optional[ET.Element] = None
    fmt = "uiautomator"
    try:
        for at in range(0, len(doc), _CHUNK):
            parser.feed(doc[at : at + _CHUNK])
            for event, el in parser.read_events():
                if event == "end":
                    stack.pop()
                    if stack:
                        el.clear()  # keep memory flat on large dumps
                    continue
                if root is None:
                    root = el
                    stack.append(None)
                    continue
                if len(stack) > MAX_DEPTH:
                    raise DumpError(f"dump nests deeper than {MAX_DEPTH} elements; real view trees are far shallower")
                if not _is_node(el):
                    stack.append(None)  # a wrapper (<display>, <window>): its nodes hang under the last node
                    continue
                if len(nodes) >= MAX_NODES:
                    raise DumpError(f"dump has more than {MAX_NODES:,} nodes")
                if el.tag != "node":
                    fmt = "appium"
                parent = next((p for p in reversed(stack) if p is not None), None)
                attrib = {k: (v if len(v) <= ATTR_CLIP else v[:ATTR_CLIP]) for k, v in el.attrib.items()}
                attrib.setdefault("class", el.tag if el.tag != "node" else "")
                where = f"node #{len(nodes)} ({attrib['class'][:60] or 'no class'})"
                nodes.append(DumpNode(attrib=attrib, tag=el.tag, parent=parent,
                                      depth=nodes[parent].depth + 1 if parent is not None else 0,
                                      bounds=parse_bounds(el.get("bounds"), where)))
                stack.append(len(nodes) - 1)
        parser.close()
    except ET.ParseError as exc:
        raise DumpError(f"xml is not well-formed: {exc}") from None
    if root is None or root.tag != "hierarchy":
        raise DumpError("xml is not a screen dump: its root element is not <hierarchy>")
    result = ParsedDump(format=fmt, nodes=nodes, rotation=_rotation(root), declared_size=_declared_size(root))
    if not nodes and len(root) > 0:
        raise DumpError("<hierarchy> holds elements but none is a UI node (expected <node …> or Appium's "
                        "class-named elements with bounds)")
    return result


def infer_screen_size(nodes: list[DumpNode]) -> tuple[int, int]:
    """The screen size the window roots imply.

    A root that starts at the origin spans the screen. A focus-only dump of a
    centred dialog does not: its screen is then about as wide as the dialog's left
    margin plus its right edge (and as tall, for the height)."""
    roots = [n.bounds for n in nodes if n.parent is None and n.bounds[2] > n.bounds[0]]
    if not roots:
        return (1080, 2400)
    x1 = min(b[0] for b in roots)
    y1 = min(b[1] for b in roots)
    x2 = max(b[2] for b in roots)
    y2 = max(b[3] for b in roots)
    w = x2 + x1 if x1 > 0 else x2
    h = y2 + y1 if y1 > 0 else y2
    return (min(max(w, 1), MAX_SCREEN), min(max(h, 1), MAX_SCREEN))
