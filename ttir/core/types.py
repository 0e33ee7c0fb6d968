"""The shared vocabulary of ttir: UI elements, observations, actions, agent steps.

Imports nothing from the project but the dump parser (:mod:`ttir.core.dump`, itself import-free). Field names and the action vocabulary follow
AndroidWorld's ``JSONAction`` so agents written for it port directly.

Where an observation's elements come from is its ``source``: the accessibility tree
(a ``uiautomator`` dump), text read from the screenshot (OCR, the ``ttir[ocr]``
extra: :mod:`ttir.core.ocr` installs the reader :meth:`Observation.from_screenshot` uses),
or nothing but the pixels.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any, Callable, Literal, NamedTuple, Optional, Protocol, Union, runtime_checkable
from xml.sax.saxutils import quoteattr as _quoteattr

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ttir.core.dump import MAX_SCREEN, dump_text, infer_screen_size, parse_dump



class Bounds(NamedTuple):
    """A screen rectangle in pixels, as uiautomator writes it (``[x1,y1][x2,y2]``, right and bottom
    exclusive). A tuple, so ``x1, y1, x2, y2 = b`` keeps working; the geometry lives here once."""

    x1: int
    y1: int
    x2: int
    y2: int

    @property
    def width(self) -> int:
        """Width in pixels (``x2 - x1``)."""
        return self.x2 - self.x1

    @property
    def height(self) -> int:
        """Height in pixels (``y2 - y1``)."""
        return self.y2 - self.y1

    @property
    def area(self) -> int:
        """Area in square pixels (0 for an empty or inverted rectangle)."""
        return max(0, self.x2 - self.x1) * max(0, self.y2 - self.y1)

    @property
    def center(self) -> tuple[int, int]:
        """The centre ``(x, y)``, rounded down: where a tap on the element lands."""
        return ((self.x1 + self.x2) // 2, (self.y1 + self.y2) // 2)

    def contains(self, x: float, y: float) -> bool:
        """Whether the point is inside (a tap at ``(x, y)`` lands here)."""
        return self.x1 <= x < self.x2 and self.y1 <= y < self.y2

    def intersection(self, other: "tuple[int, int, int, int]") -> Optional["Bounds"]:
        """The overlap with ``other``, or None when they do not overlap."""
        x1, y1 = max(self.x1, other[0]), max(self.y1, other[1])
        x2, y2 = min(self.x2, other[2]), min(self.y2, other[3])
        return Bounds(x1, y1, x2, y2) if x1 < x2 and y1 < y2 else None


# --------------------------------------------------------------------------- UI

_BOOL_ATTRS = (
    ("checkable", "checkable"),
    ("checked", "checked"),
    ("clickable", "clickable"),
    ("enabled", "enabled"),
    ("focusable", "focusable"),
    ("focused", "focused"),
    ("scrollable", "scrollable"),
    ("long-clickable", "long_clickable"),
    ("password", "password"),
    ("selected", "selected"),
)

_EDITABLE_CLASS_HINTS = ("EditText", "AutoCompleteTextView", "SearchView$SearchAutoComplete")

ElementSource = Literal["tree", "ocr"]
ScreenSource = Literal["tree", "ocr", "pixels"]
"""Where an observation's elements come from: ``"tree"`` (a dump), ``"ocr"`` (text read from the screenshot), ``"pixels"`` (none)."""


class UIElement(BaseModel):
    """One accessibility node, as ``uiautomator dump`` reports it.

    ``parent`` is the index of the parent node in the observation's element
    list (``None`` for a window root), so the tree survives a flat list.
    ``source`` is ``"ocr"`` for a line of text read from the screenshot: it has
    text and bounds, and nothing a dump would add (class, package, id, flags).
    """

    model_config = ConfigDict(frozen=False, extra="forbid")

    text: str = Field("", description="The node's ``text`` attribute: what the control displays.")
    content_desc: str = Field("", description='The ``content-desc`` attribute: the accessibility label, often the only name an icon button has.')
    resource_id: str = Field("", description='The ``resource-id`` attribute, e.g. ``com.android.settings:id/switch_widget``; empty when the app sets none.')
    class_name: str = Field("", description="The widget's Android class, e.g. ``android.widget.Button``.")
    package: str = Field("", description='The package of the app that drew the node, e.g. ``com.android.settings``.')
    bounds: Bounds = Field(Bounds(0, 0, 0, 0), description="The node's rectangle on screen in pixels, ``(x1, y1, x2, y2)``, right and bottom exclusive.")
    hint: str = Field("", description='The ``hint`` attribute: the placeholder text of an empty text field.')
    clickable: bool = Field(False, description='Whether the node reacts to a tap.')
    long_clickable: bool = Field(False, description='Whether the node reacts to a long press.')
    editable: bool = Field(False, description='Whether the node takes typed text (its class is an ``EditText`` or a kin of it).')
    checkable: bool = Field(False, description='Whether the node has an on / off state (a switch, a checkbox, a radio button).')
    checked: bool = Field(False, description='Whether a checkable node is on.')
    enabled: bool = Field(True, description='Whether the node accepts input (a greyed-out control is not enabled).')
    focusable: bool = Field(False, description='Whether the node can take input focus.')
    focused: bool = Field(False, description='Whether the node has input focus (the text field typing goes to).')
    scrollable: bool = Field(False, description='Whether the node scrolls (a list, a pager).')
    selected: bool = Field(False, description='Whether the node is selected (a tab, a list item).')
    password: bool = Field(False, description='Whether the node is a password field (its text is masked).')
    parent: Optional[int] = Field(None, description="Index of the parent node in the observation's ``elements``; None for a window root.")
    depth: int = Field(0, description='Nesting depth in the tree: 0 for a window root.')
    source: ElementSource = Field("tree", description='Where the element comes from: ``"tree"`` (a dump node) or ``"ocr"`` (a line of text read from the screenshot).')

    @field_validator("bounds")
    @classmethod
    def _check_bounds(cls, v: Bounds) -> Bounds:
        x1, y1, x2, y2 = v
        if x2 < x1 or y2 < y1:
            raise ValueError(f"bounds {tuple(v)} must be (x1, y1, x2, y2) with x2 >= x1 and y2 >= y1")
        return v if isinstance(v, Bounds) else Bounds(x1, y1, x2, y2)

    @classmethod
    def unchecked(cls, **fields: Any) -> "UIElement":
        """An element from values its maker already checked (a dump's parser, the simulator's
        renderer): not validated, like ``model_construct``, in a third of its time (a copy of a
        blank element: ``model_construct`` resolves every field's default for every node).

        Args:
            **fields: the element's fields; the others keep their defaults.

        Returns:
            The element (``model_fields_set`` names the fields given).
        """
        return _BLANK_ELEMENT.model_copy(update=fields)

    @property
    def box(self) -> Bounds:
        """``bounds`` as a :class:`Bounds` (fast paths build elements with :meth:`unchecked`
        and a plain tuple)."""
        b = self.bounds
        return b if isinstance(b, Bounds) else Bounds(*b)

    @property
    def center(self) -> tuple[int, int]:
        """The centre ``(x, y)`` of ``bounds``: where a tap on the element lands."""
        return self.box.center

    @property
    def width(self) -> int:
        """Width of ``bounds`` in pixels."""
        return self.box.width

    @property
    def height(self) -> int:
        """Height of ``bounds`` in pixels."""
        return self.box.height

    @property
    def area(self) -> int:
        """Area of ``bounds`` in square pixels."""
        return self.box.area

    @property
    def short_id(self) -> str:
        """The resource id without its ``package:id/`` prefix."""
        return self.resource_id.split("/", 1)[-1] if self.resource_id else ""

    @property
    def label(self) -> str:
        """The best human-readable name of the node: text, else description, else hint."""
        return self.text or self.content_desc or self.hint

    @property
    def informative(self) -> bool:
        """It says something about the screen: a label, or a control. A dump whose nodes
        are all uninformative (a bare window root, empty containers over a WebView or a
        Flutter canvas) tells nothing about what is on screen."""
        return bool(self.text or self.content_desc or self.hint or self.clickable or self.long_clickable
                    or self.editable or self.checkable or self.scrollable)

    def contains(self, x: float, y: float) -> bool:
        """Whether the point ``(x, y)`` is inside ``bounds`` (a tap there lands on this element)."""
        return self.box.contains(x, y)


# ----------------------------------------------------------------- observation


def as_screenshot(image: Any, field: str = "screenshot") -> Any:
    """A screenshot as a PIL image: a PIL image is checked, PNG / JPEG bytes are opened.

    Args:
        image: a PIL image, or the bytes of an encoded image (``adb exec-out screencap -p``).
        field: the argument's name, for the error.

    Returns:
        The PIL image.

    Raises:
        ValueError: not an image, an image that cannot be read, or a side outside 1 to
            ``MAX_SCREEN`` pixels (the message names the field, the value and what was expected).
    """
    if isinstance(image, (bytes, bytearray, memoryview)):
        import io

        from PIL import Image, UnidentifiedImageError

        try:
            opened = Image.open(io.BytesIO(bytes(image)))  # lazy: the header only, so the size is checked first
        except (UnidentifiedImageError, OSError) as exc:
            raise ValueError(f"{field}: {len(image)} bytes that are no image PIL can read ({exc}); expected a PIL "
                             "image or PNG / JPEG bytes such as `adb exec-out screencap -p` writes") from None
        _check_side(opened.size, field)
        try:
            opened.load()
        except (OSError, SyntaxError, ValueError) as exc:
            raise ValueError(f"{field}: a {opened.format} image that cannot be decoded ({exc})") from None
        return opened
    if not (hasattr(image, "size") and hasattr(image, "mode")):
        raise ValueError(f"{field}: expected a PIL image or PNG / JPEG bytes, got {type(image).__name__}; "
                         "e.g. PIL.Image.open(path)")
    _check_side(tuple(image.size), field)
    return image


def _check_side(size: Any, field: str) -> None:
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"{field}: its size {size!r} is not two numbers") from None
    if not (1 <= w <= MAX_SCREEN and 1 <= h <= MAX_SCREEN):
        raise ValueError(f"{field}: {w}x{h} pixels; expected each side from 1 to {MAX_SCREEN} (a phone's screen)")


_NEEDS_ESCAPE = re.compile(r'[&<>"\n\r\t]')


def _xml_attr(value: str) -> str:
    """``xml.sax.saxutils.quoteattr``'s output (the same bytes), without its work for the value
    that holds nothing to escape — most of a dump's (``false``, ids, class names): a dump is
    written at every simulated step, five quoted values a node."""
    return f'"{value}"' if _NEEDS_ESCAPE.search(value) is None else _quoteattr(value)


_BLANK_ELEMENT = UIElement()  # what UIElement.unchecked copies
# a copy shares its defaults with the blank element: a mutable default (a list) would be shared by every element
if not all(isinstance(v, (str, int, float, tuple, type(None))) for v in _BLANK_ELEMENT.__dict__.values()):
    raise TypeError("UIElement.unchecked copies a blank element: every field's default must be immutable")


class Observation(BaseModel):
    """What an agent sees at one step.

    ``screenshot`` is a PIL image (or None); ``elements`` are the accessibility
    nodes in document order; ``xml`` is the uiautomator-format dump they came
    from (regenerated by :meth:`replace` whenever the elements change).
    ``source`` says where the elements come from: ``"tree"`` (the dump),
    ``"ocr"`` (text read from the screenshot, :meth:`from_screenshot`) or
    ``"pixels"`` (no elements: the screenshot alone); ``tree_error`` says why
    there is no tree when the device could not get one.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    screenshot: Any = Field(None, description='The screen as a PIL image, or None when the device gave no screenshot.')
    elements: list[UIElement] = Field(
        default_factory=list, description="The accessibility nodes in document order (a parent before its children).")
    xml: Optional[str] = Field(None, description='The uiautomator-format dump the elements came from (regenerated when they change); None without a tree.')
    foreground: Optional[str] = Field(None, description='The app in front as ``package/activity`` (or just the package); None when unknown.')
    screen_size: tuple[int, int] = Field((1080, 2400), description="The screen's ``(width, height)`` in pixels.")
    orientation: Literal["portrait", "landscape"] = Field("portrait", description="The screen's orientation.")
    step: int = Field(0, description='The number of actions the device had executed when the screen was read (0 for the first screen).')
    time: float = Field(0.0, description="Seconds on the device's clock when the screen was read, counted from the device's start.")
    source: ScreenSource = Field("tree", description='Where the elements come from: ``"tree"`` (the dump), ``"ocr"`` (text read from the screenshot) or ``"pixels"`` (no elements).')
    tree_error: Optional[str] = Field(None, description='Why there is no accessibility tree, when the device could not get one; None otherwise.')

    @field_validator("screenshot")
    @classmethod
    def _check_screenshot(cls, v: Any) -> Any:
        if v is not None and not (hasattr(v, "size") and hasattr(v, "mode")):
            raise ValueError(f"screenshot must be a PIL image or None, got {type(v).__name__}")
        return v

    # -- convenience ---------------------------------------------------------
    @property
    def package(self) -> Optional[str]:
        """The foreground package (without the activity)."""
        if not self.foreground:
            return None
        return self.foreground.split("/", 1)[0]

    @property
    def activity(self) -> Optional[str]:
        """The foreground activity (the part of ``foreground`` after ``/``), or None when it is not known."""
        if not self.foreground or "/" not in self.foreground:
            return None
        return self.foreground.split("/", 1)[1]

    def children(self, index: int) -> list[int]:
        """The indices (into ``elements``) of the direct children of ``elements[index]``."""
        return [i for i, e in enumerate(self.elements) if e.parent == index]

    def find(
        self,
        text: Optional[str] = None,
        *,
        resource_id: Optional[str] = None,
        content_desc: Optional[str] = None,
        exact: bool = True,
    ) -> list[UIElement]:
        """Elements whose text / id / description match (case-insensitive)."""

        def match(value: str, wanted: Optional[str]) -> bool:
            if wanted is None:
                return True
            if exact:
                return value.lower() == wanted.lower()
            return wanted.lower() in value.lower()

        out = []
        for e in self.elements:
            if not match(e.text, text):
                continue
            if resource_id is not None and not (
                e.resource_id == resource_id or e.short_id == resource_id
            ):
                continue
            if not match(e.content_desc, content_desc):
                continue
            out.append(e)
        return out

    def element_at(self, x: float, y: float, *, clickable_only: bool = False) -> Optional[UIElement]:
        """The topmost (last in document order) element containing the point."""
        for e in reversed(self.elements):
            if e.contains(x, y) and (e.clickable or e.long_clickable or e.editable or not clickable_only):
                return e
        return None

    def texts(self) -> list[str]:
        """Every non-empty text and content description on the screen, in document order."""
        return [t for e in self.elements for t in (e.text, e.content_desc) if t]

    def replace(self, **changes: Any) -> "Observation":
        """A copy with fields changed; the XML is regenerated when elements change."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data.update(changes)
        if "elements" in changes and "xml" not in changes:
            data["xml"] = None
        obs = Observation.model_construct(**data)
        if obs.xml is None and obs.elements and obs.source == "tree":
            obs.xml = obs.to_xml()
        return obs

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable description (no pixels)."""
        out: dict[str, Any] = {
            "foreground": self.foreground,
            "screen_size": list(self.screen_size),
            "orientation": self.orientation,
            "step": self.step,
            "time": self.time,
            "n_elements": len(self.elements),
        }
        if self.source != "tree":
            out["source"] = self.source
        if self.tree_error:
            out["tree_error"] = self.tree_error
        return out

    # -- the screenshot alone ------------------------------------------------
    @classmethod
    def from_screenshot(
        cls,
        image: Any,
        foreground: Optional[str] = None,
        *,
        step: int = 0,
        time: float = 0.0,
        tree_error: Optional[str] = None,
    ) -> "Observation":
        """An observation of a screen without a usable accessibility tree: its text read
        from ``image`` (OCR, the ``ttir[ocr]`` extra), one element per line of text
        with its bounds and ``source="ocr"``. Results are cached by screen content, so
        the guard and the agent reading the same screen pay once.

        Raises :class:`ttir.core.ocr.OCRUnavailable` (a ``RuntimeError``) naming the extra
        when it is not installed."""
        image = as_screenshot(image, "image")
        if _SCREENSHOT_READER is None:
            raise RuntimeError("no screenshot reader is installed (import ttir installs the OCR reader of ttir.core.ocr)")
        elements = _SCREENSHOT_READER(image)
        w, h = image.size
        return cls.model_construct(
            screenshot=image,
            elements=elements,
            xml=None,
            foreground=foreground,
            screen_size=(int(w), int(h)),
            orientation="landscape" if w > h else "portrait",
            step=step,
            time=time,
            source="ocr",
            tree_error=tree_error,
        )

    # -- uiautomator XML -----------------------------------------------------
    @classmethod
    def from_xml(
        cls,
        xml: Union[str, bytes],
        screenshot: Any = None,
        foreground: Optional[str] = None,
        *,
        step: int = 0,
        time: float = 0.0,
    ) -> "Observation":
        """Parse a real ``uiautomator dump`` or an Appium page source (see :mod:`ttir.core.dump`).

        The parse is bounded (size, node count, depth) and never resolves entities: a dump is
        untrusted text. A dump whose root holds no node gives an observation without elements.

        Args:
            xml: the dump's text or bytes (``adb exec-out uiautomator dump /dev/tty``, or
                Appium's ``driver.page_source``).
            screenshot: the screen as a PIL image or PNG / JPEG bytes; it also sets
                ``screen_size``. Without it the size comes from the dump.
            foreground: the app in front (``package/activity``); without it, the package of
                the first window root.
            step: the number of actions executed before this screen.
            time: seconds on the device's clock when the screen was read.

        Returns:
            The observation, with ``source="tree"`` and the dump kept in ``xml``.

        Raises:
            ttir.core.dump.DumpError: (a ``ValueError``) the text is not a dump it can read;
                the message says why.
            ValueError: ``screenshot`` is not an image, or has a side outside 1 to
                ``MAX_SCREEN`` pixels.

        Examples:
            >>> from ttir import Observation
            >>> dump = (
            ...     '<?xml version="1.0" encoding="UTF-8"?><hierarchy rotation="0">'
            ...     '<node class="android.widget.FrameLayout" package="com.android.settings" '
            ...     'bounds="[0,0][1080,2400]">'
            ...     '<node text="Wi-Fi" class="android.widget.Switch" package="com.android.settings" '
            ...     'clickable="true" checkable="true" checked="false" bounds="[48,400][1032,520]" />'
            ...     '</node></hierarchy>')
            >>> obs = Observation.from_xml(dump)
            >>> obs.foreground, obs.screen_size, len(obs.elements)
            ('com.android.settings', (1080, 2400), 2)
            >>> switch = obs.find("wi-fi")[0]  # case-insensitive
            >>> switch.checked, switch.center
            (False, (540, 460))
            >>> Observation.from_xml("not a dump")
            Traceback (most recent call last):
                ...
            ttir.core.dump.DumpError: xml is not a screen dump: no <hierarchy> root element found
        """
        parsed = parse_dump(xml)
        elements: list[UIElement] = []
        for node in parsed.nodes:
            a = node.attrib
            cls_name = a.get("class", "")
            flags = {name: a.get(attr, "false").strip().lower() == "true" for attr, name in _BOOL_ATTRS}
            if "enabled" not in a:
                flags["enabled"] = True
            elements.append(UIElement.unchecked(
                text=a.get("text", ""),
                content_desc=a.get("content-desc", ""),
                resource_id=a.get("resource-id", ""),
                class_name=cls_name,
                package=a.get("package", ""),
                bounds=node.bounds,
                hint=a.get("hint", ""),
                editable=any(h in cls_name for h in _EDITABLE_CLASS_HINTS),
                parent=node.parent,
                depth=node.depth,
                **flags,
            ))
        if screenshot is not None:
            screenshot = as_screenshot(screenshot, "screenshot")
            size = tuple(screenshot.size)
        else:
            size = parsed.declared_size or infer_screen_size(parsed.nodes)
        orientation = "landscape" if parsed.rotation in (1, 3) or size[0] > size[1] else "portrait"
        if foreground is None:
            foreground = next((e.package for e in elements if e.parent is None and e.package), None)
        return cls.model_construct(
            screenshot=screenshot,
            elements=elements,
            xml=dump_text(xml),
            foreground=foreground,
            screen_size=(int(size[0]), int(size[1])),
            orientation=orientation,
            step=step,
            time=time,
            source="tree",
            tree_error=None,
        )

    def to_xml(self) -> str:
        """Emit the elements in the exact ``uiautomator dump`` format. Text read from the
        screenshot is no node of any dump: an observation without a tree emits an empty
        hierarchy."""
        kids: dict[Optional[int], list[int]] = {}
        for i, e in enumerate(self.elements):
            if e.source == "tree":
                kids.setdefault(e.parent, []).append(i)
        rotation = 1 if self.orientation == "landscape" else 0
        parts = [
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
            f'<hierarchy rotation="{rotation}">',
        ]

        def emit(i: int, sibling_index: int) -> None:
            e = self.elements[i]
            x1, y1, x2, y2 = e.bounds
            attrs = [
                f'index="{sibling_index}"',
                f"text={_xml_attr(e.text)}",
                f"resource-id={_xml_attr(e.resource_id)}",
                f"class={_xml_attr(e.class_name)}",
                f"package={_xml_attr(e.package)}",
                f"content-desc={_xml_attr(e.content_desc)}",
            ]
            for attr, field in _BOOL_ATTRS:
                attrs.append(f'{attr}="{str(getattr(e, field)).lower()}"')
            if e.hint:
                attrs.append(f"hint={_xml_attr(e.hint)}")
            attrs.append(f'bounds="[{x1},{y1}][{x2},{y2}]"')
            children = kids.get(i, [])
            if children:
                parts.append(f"<node {' '.join(attrs)}>")
                for k, c in enumerate(children):
                    emit(c, k)
                parts.append("</node>")
            else:
                parts.append(f"<node {' '.join(attrs)} />")

        for k, r in enumerate(kids.get(None, [])):
            emit(r, k)
        parts.append("</hierarchy>")
        return "".join(parts)


# A function ``image -> list[UIElement]`` that reads a screenshot's text; installed by
# ``ttir`` (its package init) from :mod:`ttir.core.ocr`, whose OCR engine is an optional extra.
_SCREENSHOT_READER: Optional[Callable[[Any], list[UIElement]]] = None


def set_screenshot_reader(reader: Optional[Callable[[Any], list[UIElement]]]) -> None:
    """Install the function :meth:`Observation.from_screenshot` reads text with."""
    global _SCREENSHOT_READER
    _SCREENSHOT_READER = reader


# ---------------------------------------------------------------------- action

ActionType = Literal[
    "click",
    "long_press",
    "double_tap",
    "input_text",
    "scroll",
    "swipe",
    "navigate_back",
    "navigate_home",
    "keyboard_enter",
    "app_switch",
    "open_app",
    "wait",
    "status",
    "answer",
]
ACTION_TYPES: tuple[str, ...] = ActionType.__args__  # type: ignore[attr-defined]
DESCRIBE_TEXT_CHARS = 80  # a text longer than this is cut in Action.describe (its length said)
STEP_TEXT_CHARS = 4_000  # a step's thought or summary kept (AgentStep.bounded): a few paragraphs
RAW_REPLY_CHARS = 20_000  # a step's raw model reply kept (AgentStep.bounded)
"""Every action type, in :data:`ActionType`'s order."""
# the action types in groups, each declared once here and imported wherever it is meant
TOUCH_TYPES = ("click", "long_press", "double_tap")  # a finger on one point
"""Actions that put a finger on one point: click, long_press, double_tap."""
TARGETED_TYPES = (*TOUCH_TYPES, "input_text")  # aimed at one element
"""Actions aimed at one element: the touches and input_text."""
INDEXED_TYPES = (*TARGETED_TYPES, "scroll")  # may name an element by index
"""Actions that may name their element by ``index``: the targeted ones and scroll."""
LOCATED_TYPES = (*INDEXED_TYPES, "swipe")  # land at a place on the screen
"""Actions that land at a place on the screen: the indexed ones and swipe."""
ENDING_TYPES = ("status", "answer")  # end the episode: the agent's verdict, or its reply
"""Actions that end the episode: status (the agent's verdict) and answer (its reply)."""
INERT_TYPES = ("wait", *ENDING_TYPES)  # change nothing on the screen
"""Actions that change nothing on the screen: wait and the ending ones."""
NAVIGATION_TYPES = ("navigate_back", "navigate_home", "open_app", "app_switch")  # the system moves between screens or apps
"""Actions that move between screens or apps through the system: back, home, open_app, app_switch."""
ACTION_GROUPS: dict[str, tuple[str, ...]] = {
    "touch": TOUCH_TYPES, "targeted": TARGETED_TYPES, "indexed": INDEXED_TYPES, "located": LOCATED_TYPES,
    "ending": ENDING_TYPES, "inert": INERT_TYPES, "navigation": NAVIGATION_TYPES,
}
"""The groups above by name (``touch``, ``targeted``, ``indexed``, ``located``, ``ending``, ``inert``, ``navigation``)."""
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
"""The directions a scroll takes: up, down, left, right."""
GOAL_STATUSES = ("complete", "infeasible")
_NO_ARG_TYPES = ("navigate_back", "navigate_home", "keyboard_enter", "app_switch")
_TARGET_FIELDS = ("index", "x", "y")


def swipe_direction(x: Optional[int], y: Optional[int], x2: Optional[int], y2: Optional[int]) -> Optional[str]:
    """The way a finger moving from (x, y) to (x2, y2) goes, by its dominant axis; None without movement.
    One definition for the diagnosers and the labellers: two swipes from one point the same way are
    the same gesture whatever their length (an agent retrying "farther" is still retrying)."""
    if None in (x, y, x2, y2):
        return None
    dx, dy = x2 - x, y2 - y  # type: ignore[operator]
    if dx == 0 and dy == 0:
        return None
    if abs(dx) >= abs(dy):
        return "right" if dx > 0 else "left"
    return "down" if dy > 0 else "up"


class Action(BaseModel):
    """One GUI action, e.g. ``Action(action_type="click", x=540, y=1200)``.

    Vocabulary and field names follow AndroidWorld's JSONAction; ``x2``/``y2``
    /``duration_ms`` (swipe), ``seconds`` (wait) and ``app_switch`` are ours.
    The model is frozen, and each action type takes only its own fields: a touch
    needs a target (``x`` and ``y``, or the ``index`` of an element), ``input_text``
    needs ``text``, ``scroll`` a ``direction``, ``swipe`` two points, ``open_app``
    an ``app_name``, ``status`` a ``goal_status`` (``status`` and ``answer`` end
    the episode).

    Raises:
        pydantic.ValidationError: (a ``ValueError``) an unknown ``action_type``, a field the
            type does not take, a missing target or argument, a negative coordinate; the
            message names the field, the value and what was expected.

    Examples:
        >>> from ttir import Action
        >>> tap = Action(action_type="click", x=540, y=1200)
        >>> tap.describe()
        'click(x=540, y=1200)'
        >>> Action(action_type="input_text", index=3, text="Alice").to_dict()
        {'action_type': 'input_text', 'index': 3, 'text': 'Alice'}
        >>> Action.from_json('{"action_type": "scroll", "direction": "down"}').direction
        'down'
        >>> try:
        ...     Action(action_type="click")
        ... except ValueError as exc:  # pydantic's ValidationError is a ValueError
        ...     print(exc.errors()[0]["msg"])
        Value error, action_type='click' needs a target: x and y, or index
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    action_type: ActionType = Field(..., description='What to do: one of ``ACTION_TYPES`` (click, long_press, double_tap, input_text, scroll, swipe, navigate_back, navigate_home, keyboard_enter, app_switch, open_app, wait, status, answer).')
    index: Optional[int] = Field(None, description="The target as an index into the observation's ``elements`` (touches, input_text, scroll); instead of ``x``/``y``.")
    x: Optional[int] = Field(None, description="The target's horizontal pixel (with ``y``); a swipe's start.")
    y: Optional[int] = Field(None, description="The target's vertical pixel (with ``x``); a swipe's start.")
    x2: Optional[int] = Field(None, description='Where a swipe ends, horizontally.')
    y2: Optional[int] = Field(None, description='Where a swipe ends, vertically.')
    duration_ms: Optional[int] = Field(None, description="How long a swipe or a long press lasts, in milliseconds (0 to 60000); the device's default when None.")
    text: Optional[str] = Field(None, description="The text to type (input_text) or the agent's reply (answer).")
    direction: Optional[Literal["up", "down", "left", "right"]] = Field(None, description='Which way to scroll (scroll): up, down, left or right.')
    goal_status: Optional[Literal["complete", "infeasible"]] = Field(None, description="The agent's verdict on the task (status): complete or infeasible.")
    app_name: Optional[str] = Field(None, description='The app to open by its label, e.g. ``Contacts`` (open_app).')
    seconds: Optional[float] = Field(None, description="How long to wait, 0 to 600 seconds (wait); the device's default when None.")
    keycode: Optional[str] = Field(None, description='The Android key to press instead of Enter (keyboard_enter), e.g. ``KEYCODE_SEARCH``.')
    clear_text: Optional[bool] = Field(None, description='Whether to clear the field before typing (input_text).')

    @model_validator(mode="before")
    @classmethod
    def _coerce(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        at = data.get("action_type")
        if at not in ACTION_TYPES:
            raise ValueError(
                f"action_type={at!r} is not a known action; expected one of {', '.join(ACTION_TYPES)}"
            )
        for key in ("x", "y", "x2", "y2", "index", "duration_ms"):
            v = data.get(key)
            if isinstance(v, float):
                if not math.isfinite(v):
                    raise ValueError(f"{key}={v!r} must be a finite number")
                data[key] = int(round(v))
            elif isinstance(v, str) and v.strip().lstrip("-").isdigit():
                data[key] = int(v)
        return data

    @model_validator(mode="after")
    def _check_combination(self) -> "Action":
        t = self.action_type
        given = {k for k, v in self.model_dump().items() if v is not None and k != "action_type"}

        def only(allowed: set[str]) -> None:
            extra = sorted(given - allowed)
            if extra:
                raise ValueError(
                    f"action_type={t!r} does not take {', '.join(extra)}; allowed fields: "
                    f"{', '.join(sorted(allowed)) or 'none'}"
                )

        def target(required: bool) -> None:
            has_xy = self.x is not None or self.y is not None
            if self.index is not None and has_xy:
                raise ValueError(f"action_type={t!r}: give either index or x/y, not both")
            if has_xy and (self.x is None or self.y is None):
                raise ValueError(f"action_type={t!r}: x and y must be given together (x={self.x}, y={self.y})")
            if required and self.index is None and not has_xy:
                raise ValueError(f"action_type={t!r} needs a target: x and y, or index")
            for k in ("x", "y"):
                v = getattr(self, k)
                if v is not None and v < 0:
                    raise ValueError(f"action_type={t!r}: {k}={v} must be >= 0")
            if self.index is not None and self.index < 0:
                raise ValueError(f"action_type={t!r}: index={self.index} must be >= 0")

        if t in TOUCH_TYPES:
            only({"index", "x", "y", "duration_ms"} if t == "long_press" else {"index", "x", "y"})
            target(required=True)
        elif t == "input_text":
            only({"index", "x", "y", "text", "clear_text"})
            if self.text is None:
                raise ValueError("action_type='input_text' needs text (the string to type)")
            target(required=False)
        elif t == "scroll":
            only({"index", "x", "y", "direction"})
            if self.direction is None:
                raise ValueError(f"action_type='scroll' needs direction, one of {', '.join(SCROLL_DIRECTIONS)}")
            target(required=False)
        elif t == "swipe":
            only({"x", "y", "x2", "y2", "duration_ms"})
            missing = [k for k in ("x", "y", "x2", "y2") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"action_type='swipe' needs x, y, x2 and y2; missing {', '.join(missing)}")
        elif t in _NO_ARG_TYPES:
            only({"keycode"} if t == "keyboard_enter" else set())
        elif t == "open_app":
            only({"app_name"})
            if not self.app_name:
                raise ValueError("action_type='open_app' needs app_name (the app's label, e.g. 'Contacts')")
        elif t == "wait":
            only({"seconds"})
            if self.seconds is not None and not (0 <= self.seconds <= 600):
                raise ValueError(f"action_type='wait': seconds={self.seconds} must be within 0..600")
        elif t == "status":
            only({"goal_status"})
            if self.goal_status is None:
                raise ValueError("action_type='status' needs goal_status, one of complete, infeasible")
        elif t == "answer":
            only({"text"})
            if self.text is None:
                raise ValueError("action_type='answer' needs text")
        if self.duration_ms is not None and not (0 <= self.duration_ms <= 60000):
            raise ValueError(f"duration_ms={self.duration_ms} must be within 0..60000")
        return self

    # -- helpers -------------------------------------------------------------
    @classmethod
    def from_json(cls, data: Union[str, dict[str, Any]]) -> "Action":
        """An action from its JSON text or its dict (the form :meth:`json_str` / :meth:`to_dict` write).

        Args:
            data: a JSON object as text, or the decoded dict.

        Returns:
            The validated action.

        Raises:
            json.JSONDecodeError: ``data`` is text that is not JSON (a ``ValueError``).
            pydantic.ValidationError: the fields do not make a valid action (a ``ValueError``).
        """
        import json

        if isinstance(data, str):
            data = json.loads(data)
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """The action as a dict of the fields that are set (None fields left out)."""
        return self.model_dump(exclude_none=True)

    def json_str(self) -> str:
        """The action as compact JSON text of the fields that are set (None fields left out)."""
        return self.model_dump_json(exclude_none=True)

    @property
    def is_touch(self) -> bool:
        """Whether the action puts a finger on one point (click, long_press, double_tap)."""
        return self.action_type in TOUCH_TYPES

    def by_coordinates(self, elements: list[UIElement]) -> "Action":
        """This action with ``index`` replaced by the centre of ``elements[index]`` — for a device whose
        screen is not the list the agent was shown (an overlay drawn over it, a tree read from pixels).
        Unchanged when it names no element of ``elements``."""
        if self.index is None or self.action_type not in INDEXED_TYPES or not 0 <= self.index < len(elements):
            return self
        x, y = elements[self.index].center
        data = self.model_dump(exclude_none=True)
        data.pop("index")
        data.update(x=x, y=y)
        return Action(**data)

    def point(self, elements: Optional[list[UIElement]] = None) -> Optional[tuple[int, int]]:
        """The screen point the action targets (x/y, or the centre of ``elements[index]``)."""
        if self.x is not None and self.y is not None:
            return (self.x, self.y)
        if self.index is not None and elements is not None:
            if self.index >= len(elements):
                raise IndexError(f"index={self.index} is out of range: the screen has {len(elements)} elements")
            return elements[self.index].center
        return None

    @property
    def swipe_direction(self) -> Optional[str]:
        """Which way a swipe's finger moves (the dominant axis): up / down / left / right; None for
        any other action or a swipe that does not move."""
        if self.action_type != "swipe":
            return None
        return swipe_direction(self.x, self.y, self.x2, self.y2)

    def describe(self) -> str:
        """A short human-readable form, e.g. ``click(540, 1200)``; a long text is cut to its first
        :data:`DESCRIBE_TEXT_CHARS` characters and its length (a model's 100,000-character
        ``input_text`` made every error message about it as long)."""

        def shown(v: Any) -> str:
            if isinstance(v, str) and len(v) > DESCRIBE_TEXT_CHARS:
                return f"{v[:DESCRIBE_TEXT_CHARS]!r}… ({len(v):,} characters)"
            return repr(v)

        args = [f"{k}={shown(v)}" for k, v in self.to_dict().items() if k != "action_type"]
        return f"{self.action_type}({', '.join(args)})"


# ----------------------------------------------------------------- agent steps


class AgentStep(BaseModel):
    """What an agent returns for one step: the action, and the agent's words about it.

    An agent may return a bare :class:`Action` (it becomes an ``AgentStep`` without words),
    but the diagnosers read the words: ``summary`` says what the step means to achieve, and
    the action-effect diagnoser checks the screen against it (a tap that landed on another
    element than the one the summary names in quotes, text typed into another field than
    the one it names), the stuck-loop diagnoser compares consecutive summaries and thoughts,
    and re-orientation goes back to the last summary written on an on-task app. Naming the
    target in quotes (``Tap "Save"``) gives the guard the most to check.
    """

    model_config = ConfigDict(extra="forbid")

    action: Action = Field(description="The action to execute.")
    thought: str = Field("", description="The agent's reasoning before acting (the stuck-loop diagnoser compares "
                                         "consecutive thoughts).")
    summary: str = Field("", description='What the action is meant to achieve, naming its target in quotes '
                                         '(e.g. `Tap "Save" to store the contact`); the diagnosers check the next '
                                         'screen against it.')
    raw: Optional[str] = Field(None, description="The model's raw reply the step was parsed from, kept for the "
                                                 "report; None when there was none.")

    def to_dict(self) -> dict[str, Any]:
        """The step as a JSON-serialisable dict (``raw`` only when set)."""
        d: dict[str, Any] = {"action": self.action.to_dict(), "thought": self.thought, "summary": self.summary}
        if self.raw is not None:
            d["raw"] = self.raw
        return d

    def bounded(self) -> "AgentStep":
        """This step with its words cut to what is kept of them: ``thought`` and ``summary`` to
        :data:`STEP_TEXT_CHARS`, ``raw`` to :data:`RAW_REPLY_CHARS`, each cut one marked with its
        length; the step itself when nothing is that long. The guard's history and the episode's
        step log hold this: a model's runaway reply (5 MB of thought) cost the stuck-loop check a
        second a step and made a trajectory 15 MB a step.

        Returns:
            The step, or a copy with its long texts cut.
        """
        cut = {k: _cut(v, limit) for k, v, limit in (("thought", self.thought, STEP_TEXT_CHARS),
                                                      ("summary", self.summary, STEP_TEXT_CHARS),
                                                      ("raw", self.raw, RAW_REPLY_CHARS))
               if v is not None and len(v) > limit}
        return self.model_copy(update=cut) if cut else self


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}… [cut: {len(text):,} characters]"


class StepRecord(BaseModel):
    """One past step as the guard remembers it: the screen the step was chosen on and the step.

    The guard keeps a bounded history of these (``TTIRConfig.history``); the diagnosers read
    it through :class:`ttir.DiagnosisContext` (``history``, ``previous``, ``last_action``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    observation: Observation = Field(description="The screen the step was chosen on.")
    step: AgentStep = Field(description="The step that was executed on it.")
    source: Literal["agent", "recovery"] = Field(
        "agent", description='Who chose the step: ``"agent"`` (the wrapped agent) or ``"recovery"`` (the guard\'s '
                             'recovery, in the agent\'s place).')


@runtime_checkable
class Agent(Protocol):
    """The tiny agent interface: ``reset(goal)`` then ``step(obs)`` per step.

    Any object with these two methods is an agent (a structural protocol: nothing to
    inherit); ``step`` may also be ``async def``. A plain callable ``fn(obs)`` works
    too, through :func:`as_agent`. ``step`` may return an :class:`AgentStep`, an
    :class:`Action` or an action dict.
    """

    def reset(self, goal: str) -> None:
        """Start a new task.

        Args:
            goal: the task in natural language, e.g. ``"Turn on Wi-Fi"``.
        """
        ...

    def step(self, obs: Observation) -> AgentStep:
        """Choose the next action for the screen ``obs``.

        Args:
            obs: the current screen.

        Returns:
            The action with the agent's thought and summary (an :class:`Action` or an action
            dict is accepted too).
        """
        ...


def as_step(result: Union[AgentStep, Action, dict[str, Any]]) -> AgentStep:
    """Normalise what an agent returned into an :class:`AgentStep`."""
    if isinstance(result, AgentStep):
        return result
    if isinstance(result, Action):
        return AgentStep(action=result)
    if isinstance(result, dict):
        if "action" in result:
            return AgentStep(**result)
        return AgentStep(action=Action(**result))
    raise TypeError(
        f"an agent step must return AgentStep, Action or an action dict, got {type(result).__name__}"
    )


class CallableAgent:
    """Adapts a plain callable ``fn(obs) -> AgentStep | Action`` to the Agent protocol."""

    def __init__(self, fn: Callable[[Observation], Any]):
        if not callable(fn):
            raise TypeError(f"agent must be callable or have step(obs); got {type(fn).__name__}")
        self.fn = fn
        self.goal = ""

    def reset(self, goal: str) -> None:
        """Remember ``goal`` (the callable is not told: it sees only observations)."""
        self.goal = goal

    def step(self, obs: Observation) -> AgentStep:
        """Call ``fn(obs)`` and normalise what it returned into an :class:`AgentStep`.

        Raises:
            TypeError: ``fn`` returned neither an AgentStep, an Action nor an action dict.
        """
        return as_step(self.fn(obs))


class AsyncCallableAgent:
    """Adapts a plain ``async def fn(obs) -> AgentStep | Action`` to the (async) Agent protocol."""

    def __init__(self, fn: Callable[[Observation], Any]):
        self.fn = fn
        self.goal = ""

    def reset(self, goal: str) -> None:
        """Remember ``goal`` (the callable is not told: it sees only observations)."""
        self.goal = goal

    async def step(self, obs: Observation) -> AgentStep:
        """Await ``fn(obs)`` and normalise what it returned into an :class:`AgentStep`.

        Raises:
            TypeError: ``fn`` returned neither an AgentStep, an Action nor an action dict.
        """
        return as_step(await self.fn(obs))


class _StepOnlyAgent:
    """Adds a no-op ``reset`` to an object that only has ``step``."""

    def __init__(self, inner: Any):
        self.inner = inner

    def reset(self, goal: str) -> None:
        pass

    def step(self, obs: Observation) -> Any:
        result = self.inner.step(obs)
        return result if inspect.isawaitable(result) else as_step(result)  # an async step: awaited by the caller

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def as_agent(obj: Any) -> Agent:
    """Return ``obj`` as an :class:`Agent`: agents pass through, callables are adapted.

    Args:
        obj: an object with ``step(obs)`` (``reset(goal)`` is added as a no-op when it has
            none), or a callable ``fn(obs) -> AgentStep | Action`` (sync or ``async def``).

    Returns:
        An object with ``reset(goal)`` and ``step(obs)``; an async callable gives an agent
        whose ``step`` is a coroutine function.

    Raises:
        TypeError: ``obj`` has no ``step`` and is not callable, or is a class whose ``step`` needs
            an instance (``guard(MyAgent)`` for ``guard(MyAgent())``: calling the class would
            build an agent per screen, or hand the screen to ``step`` as ``self``).
    """
    if inspect.isclass(obj) and not isinstance(inspect.getattr_static(obj, "step", None), (staticmethod, classmethod)):
        raise TypeError(f"agent={obj.__name__} is a class, not an agent: pass an instance, e.g. "
                        f"guard({obj.__name__}()), or a function fn(obs) -> AgentStep | Action")
    if hasattr(obj, "step") and callable(obj.step):
        if hasattr(obj, "reset") and callable(obj.reset):
            return obj
        return _StepOnlyAgent(obj)
    if callable(obj):
        return AsyncCallableAgent(obj) if is_async_agent(obj) else CallableAgent(obj)
    raise TypeError(
        f"agent={type(obj).__name__!r} is not an agent: expected an object with step(obs) "
        "(and reset(goal)) or a callable fn(obs) -> AgentStep | Action"
    )


def is_async_agent(obj: Any) -> bool:
    """True when the agent's ``step`` (or the callable itself, or its ``__call__``) is a coroutine function."""
    fn = getattr(obj, "step", obj)
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


__all__ = [
    "ACTION_TYPES",
    "Action",
    "Agent",
    "AgentStep",
    "AsyncCallableAgent",
    "Bounds",
    "CallableAgent",
    "Observation",
    "SCROLL_DIRECTIONS",
    "ScreenSource",
    "StepRecord",
    "TOUCH_TYPES",
    "TARGETED_TYPES",
    "LOCATED_TYPES",
    "ENDING_TYPES",
    "INERT_TYPES",
    "NAVIGATION_TYPES",
    "ACTION_GROUPS",
    "UIElement",
    "as_agent",
    "as_step",
    "is_async_agent",
    "set_screenshot_reader",
]
