"""Bad input gets a clear error: the key, the value and what was expected.

Shared by every YAML / JSON input that pydantic validates (guard config, experiment
specs, tuning datasets, model replies). Users' YAML is the one place files are read
with limits: a size cap, a nesting cap and a cap on what aliases expand to (a
1 KB alias bomb otherwise becomes gigabytes the moment anything walks it).
"""

from __future__ import annotations

import difflib
import re
import reprlib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Union

import yaml
from pydantic import BaseModel, ValidationError

MAX_YAML_BYTES = 1 << 20  # 1 MiB: a spec or config is a few KB
MAX_YAML_DEPTH = 64  # nesting levels (a spec needs about 6)
MAX_YAML_NODES = 100_000  # scalars + collections, with every alias expanded

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 3, 8, 8, 8, 8
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 120, 120, 40


def short_repr(value: Any) -> str:
    """``repr(value)``, bounded in depth, items and length (inputs can be huge or shared)."""
    return _REPR.repr(value)


# ----------------------------------------------------------------- error lines


Loc = tuple[Any, ...]
LineMap = dict[tuple[str, ...], int]  # a key path (strings; list indices as digits) -> its 1-based line

# pydantic names each member of a union in the error's location ("literal['all']", "list[str]", "AgentSpec")
_UNION_TAG = re.compile(r"(literal|list|dict|set|tuple|frozenset)\[.*\]|str|int|float|bool|none|[A-Z][A-Za-z0-9]*")


def renamed_key(data: Any, old: str, new: str) -> Any:
    """``data`` with its key ``old`` read as ``new``, for records written before a field was renamed
    (a pydantic ``mode="before"`` validator's input); anything else, or a mapping that already has
    ``new``, comes back as it was.

    Args:
        data: the raw input of a model.
        old: the field's former name.
        new: its name now.

    Returns:
        A new dict with the key renamed, or ``data`` itself.
    """
    if isinstance(data, Mapping) and new not in data and old in data:
        return {(new if k == old else k): v for k, v in data.items()}
    return data


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and bool(_UNION_TAG.fullmatch(part))


def _describe_tag(tag: str) -> str:
    """``literal['a','b']`` -> ``'a' or 'b'``; ``list[str]`` -> ``a list``; ``AgentSpec`` -> ``a mapping``."""
    if tag.startswith("literal["):
        return " or ".join(re.findall(r"'[^']*'", tag)) or tag
    for head, words in (("list[", "a list"), ("dict[", "a mapping"), ("set[", "a list"), ("tuple[", "a list")):
        if tag.startswith(head):
            return words
    return {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
            "none": "nothing (null)"}.get(tag, "a mapping")


def _kind_of(value: Any) -> str:
    if isinstance(value, str):
        return f"the string {short_repr(value)}"
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, list):
        return f"a list {short_repr(value)}"
    if isinstance(value, dict):
        return f"a mapping {short_repr(value)}"
    return short_repr(value)


def error_items(exc: ValidationError, model: Optional[type[BaseModel]] = None) -> list[tuple[Loc, str]]:
    """Each problem of ``exc`` as ``(key path, "key.path: message")``, in plain words.

    An unknown key lists the valid keys there and the closest one (with ``model``, the class
    that was validated); a value outside a fixed set says which one was probably meant; a
    union (``'all'`` or a list) is one line saying what was expected instead of one line of
    pydantic jargon per member.
    """
    errors = exc.errors()
    groups: dict[Loc, list[dict[str, Any]]] = {}
    plain: list[tuple[Loc, dict[str, Any]]] = []
    for e in errors:
        loc = tuple(e["loc"])
        cut = next((i for i, part in enumerate(loc) if _is_tag(part)), None)
        if cut is None:
            plain.append((loc, e))
        else:
            groups.setdefault(loc[:cut], []).append(e)
    out: list[tuple[Loc, str]] = []
    order: list[tuple[int, tuple[Loc, str]]] = []
    for loc, e in plain:
        order.append((errors.index(e), (loc, _one(loc, e, model))))
    for base, members in groups.items():
        first = min(errors.index(e) for e in members)
        # a member whose error lies deeper than its tag nearly matched: its errors are the real ones
        deep = [e for e in members if len(e["loc"]) > len(base) + 1]
        if deep:
            for e in deep:
                loc = tuple(p for p in e["loc"] if not _is_tag(p))
                order.append((first, (loc, _one(loc, e, model))))
            continue
        expected = " or ".join(dict.fromkeys(_describe_tag(str(e["loc"][len(base)])) for e in members))
        value = members[0].get("input")
        hint = ""
        if isinstance(value, str) and "a list" in expected:
            hint = f" (for a list of one, write [{value}])"
        order.append((first, (base, f"{_where(base)}: expected {expected}, got {_kind_of(value)}{hint}")))
    order.sort(key=lambda item: item[0])
    out.extend(item for _, item in order)
    return out


def _where(loc: Loc) -> str:
    return ".".join(str(x) for x in loc) or "(root)"


def plain_message(e: Mapping[str, Any]) -> str:
    """One pydantic error's message without pydantic's "Value error, " label (our validators' own words).

    Args:
        e: an item of ``ValidationError.errors()``.

    Returns:
        The message.
    """
    return e["msg"].removeprefix("Value error, ") if e.get("type") == "value_error" else e["msg"]


def _one(loc: Loc, e: dict[str, Any], model: Optional[type[BaseModel]]) -> str:
    where = _where(loc)
    if e.get("type") == "extra_forbidden":
        return f"{where}: {unknown_key_message(str(loc[-1]), _model_at(model, loc[:-1]) if model else None)}"
    message = f"{where}: {plain_message(e)} (got {short_repr(e.get('input'))})"
    if e.get("type") == "literal_error" and isinstance(e.get("input"), str):
        choices = re.findall(r"'([^']*)'", str((e.get("ctx") or {}).get("expected", "")))
        close = difflib.get_close_matches(e["input"], choices, n=1, cutoff=0.6) or \
            [c for c in choices if c.lower() == e["input"].lower()]
        if close:
            message += f"; did you mean {close[0]!r}?"
    return message


def error_lines(exc: ValidationError, prefix: str = "", model: Optional[type[BaseModel]] = None,
                lines: Optional[LineMap] = None) -> list[str]:
    """One line per problem: ``[prefix[:line]: ]key.path: message (got value)``.

    With ``model`` (the class that was validated), an unknown key also lists the
    valid keys at that place and the closest one ("did you mean …"). With ``lines``
    (from :func:`load_yaml_mapping_lines`), each line names the line of the file it is about.
    """
    return [located(prefix, loc, text, lines) for loc, text in error_items(exc, model)]


def located(source: str, loc: Loc, text: str, lines: Optional[LineMap] = None) -> str:
    """``source:LINE: text`` where ``loc`` (a key path) is found in ``lines``, else ``source: text``
    (or ``text`` alone without a source)."""
    if not source:
        return text
    line = line_of(loc, lines)
    return f"{source}:{line}: {text}" if line else f"{source}: {text}"


def line_of(loc: Loc, lines: Optional[LineMap]) -> Optional[int]:
    """The line of the longest prefix of ``loc`` found in ``lines`` (``None`` when none is)."""
    if not lines:
        return None
    parts = tuple(str(p) for p in loc if not _is_tag(p))
    for n in range(len(parts), 0, -1):
        if parts[:n] in lines:
            return lines[parts[:n]]
    return None


def unknown_key_message(key: str, model: Optional[type[BaseModel]]) -> str:
    """``unknown key; valid keys here: a, b; did you mean 'b'?`` (the list when ``model`` is known)."""
    if model is None:
        return "unknown key"
    valid = list(model.model_fields)
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key; valid keys here: {', '.join(valid)}{hint}"


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> Optional[type[BaseModel]]:
    """The model class found by following ``loc`` (field names, list indices) from ``model``."""
    current: Optional[type[BaseModel]] = model
    for part in loc:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part))
        current = _submodel(field.annotation) if field is not None else None
    return current


def _submodel(tp: Any) -> Optional[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in typing.get_args(tp):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------- package data


_PACKAGE_DATA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_package_yaml(text: str) -> Any:
    """The parsed YAML of a data file shipped inside the project's own packages (lexicons,
    system ids, perturbation and phone tables).

    These files are the project's, not a user's: they are parsed with libyaml's C parser
    where PyYAML has it (several times faster than the pure-Python one every process would
    otherwise pay on start-up), without the limits of :func:`load_yaml_text`, which stays the
    way to read any file a user names.

    Args:
        text: the file's text.

    Returns:
        What ``yaml.safe_load`` returns for it.
    """
    return yaml.load(text, Loader=_PACKAGE_DATA_LOADER)  # noqa: S506 - a safe loader, the C one


# ------------------------------------------------------------------- bounded YAML


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses deep nesting and documents whose aliases expand past a cap."""

    def __init__(self, stream: str, *, max_depth: int, max_nodes: int):
        super().__init__(stream)
        self._max_depth = max_depth
        self._max_nodes = max_nodes
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D401 - PyYAML hook
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark
                raise yaml.YAMLError(f"nesting deeper than {self._max_depth} levels at line {mark.line + 1}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _expanded_size(node, self._max_nodes)
        return node


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """How many nodes ``root`` stands for with every alias expanded; raises past ``limit``
    (or on a recursive alias). Shared nodes are sized once, so this is linear in the file."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise yaml.YAMLError(f"a recursive alias at line {node.start_mark.line + 1}")
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            active.add(key)
            children = node.value if isinstance(node, yaml.SequenceNode) else [c for kv in node.value for c in kv]
            for child in children:
                total += size(child)
                if total > limit:
                    raise yaml.YAMLError(f"aliases expand the document to more than {limit:,} nodes "
                                         f"(an alias bomb?) at line {node.start_mark.line + 1}")
            active.discard(key)
        sizes[key] = total
        return total

    return size(root)


def load_yaml_text(text: str, source: str = "YAML", *, max_depth: int = MAX_YAML_DEPTH,
                   max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load(text)`` with the nesting and alias-expansion limits; errors name ``source``."""
    return load_yaml_text_lines(text, source, max_depth=max_depth, max_nodes=max_nodes)[0]


def load_yaml_text_lines(text: str, source: str = "YAML", *, max_depth: int = MAX_YAML_DEPTH,
                         max_nodes: int = MAX_YAML_NODES) -> tuple[Any, LineMap]:
    """Like :func:`load_yaml_text`, plus the line of every key and list item (a :data:`LineMap`),
    so errors about a value can say ``file.yaml:LINE:``. A syntax error says
    ``source:LINE:COLUMN: not valid YAML: …`` and quotes the file by its name."""
    loader = _BoundedLoader(text, max_depth=max_depth, max_nodes=max_nodes)
    loader.name = source  # PyYAML's marks otherwise say "<unicode string>"
    try:
        node = loader.get_single_node()
        lines: LineMap = {}
        if node is not None:
            _node_lines(node, (), lines)
        return (loader.construct_document(node) if node is not None else None), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        raise ValueError(f"{where}: not valid YAML: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:  # a structure deeper than the interpreter allows, whatever the cap says
        raise ValueError(f"{source}: not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def _node_lines(node: yaml.Node, path: tuple[str, ...], out: LineMap) -> None:
    seen: set[int] = set()
    stack = [(node, path)]
    while stack:  # iterative, and each node once: aliases share nodes
        current, where = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                sub = (*where, str(key.value) if isinstance(key, yaml.ScalarNode) else "?")
                out.setdefault(sub, key.start_mark.line + 1)
                stack.append((value, sub))
        elif isinstance(current, yaml.SequenceNode):
            for i, item in enumerate(current.value):
                sub = (*where, str(i))
                out.setdefault(sub, item.start_mark.line + 1)
                stack.append((item, sub))


def read_text_file(path: Union[str, Path], what: str, *, max_bytes: int = MAX_YAML_BYTES,
                   typical: str = "a few KB") -> str:
    """The UTF-8 text of a user's file, at most ``max_bytes`` long; errors name the file and ``what``
    (``typical``: how large such a file is, for the message on a larger one)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} file {p} does not exist")
    if not p.is_file():
        raise ValueError(f"{what} file {p} is not a regular file")
    with p.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{p}: the {what} file is larger than {max_bytes:,} bytes; a {what} is {typical}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{p}: the {what} file is not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, "
                         f"offset {exc.start}); save it as UTF-8") from None


def load_yaml_file(path: Union[str, Path], what: str, *, max_bytes: int = MAX_YAML_BYTES) -> Any:
    """The parsed YAML of a user's file, with the size, nesting and alias limits."""
    return load_yaml_text(read_text_file(path, what, max_bytes=max_bytes), str(path))


def load_yaml_mapping(path: Union[str, Path], what: str, *, allow_empty: bool = True) -> dict[str, Any]:
    """The top-level mapping of a YAML file (``what`` names the file's role in errors).

    An empty or comment-only file is ``{}``, or an error when ``allow_empty`` is False."""
    return load_yaml_mapping_lines(path, what, allow_empty=allow_empty)[0]


def load_yaml_mapping_lines(path: Union[str, Path], what: str, *,
                            allow_empty: bool = True) -> tuple[dict[str, Any], LineMap]:
    """:func:`load_yaml_mapping` plus the line of every key (for ``file.yaml:LINE:`` errors)."""
    p = Path(path)
    data, lines = load_yaml_text_lines(read_text_file(p, what), str(p))
    if data is None:
        if not allow_empty:
            raise ValueError(f"{p}: the {what} file is empty (or only comments); expected a mapping of {what} keys")
        return {}, lines
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return data, lines
