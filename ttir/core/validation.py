"""Bad input gets a clear error: the key, the value and what was expected.

Shared by every YAML / JSON input that pydantic validates (guard config, experiment
specs, tuning datasets, model replies). Users' YAML is the one place files are read
with limits: a size cap, a nesting cap and a cap on what aliases expand to (a
1 KB alias bomb otherwise becomes gigabytes the moment anything walks it).
"""

from __future__ import annotations

import difflib
import reprlib
import typing
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


def error_lines(exc: ValidationError, prefix: str = "", model: Optional[type[BaseModel]] = None) -> list[str]:
    """One line per problem: ``[prefix: ]key.path: message (got value)``.

    With ``model`` (the class that was validated), an unknown key also lists the
    valid keys at that place and the closest one ("did you mean …").
    """
    head = f"{prefix}: " if prefix else ""
    out = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e["loc"]) or "(root)"
        if e.get("type") == "extra_forbidden" and model is not None:
            out.append(f"{head}{where}: {unknown_key_message(str(e['loc'][-1]), _model_at(model, e['loc'][:-1]))}")
        else:
            out.append(f"{head}{where}: {e['msg']} (got {short_repr(e.get('input'))})")
    return out


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
    loader = _BoundedLoader(text, max_depth=max_depth, max_nodes=max_nodes)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:  # a structure deeper than the interpreter allows, whatever the cap says
        raise ValueError(f"{source}: not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def read_text_file(path: Union[str, Path], what: str, *, max_bytes: int = MAX_YAML_BYTES) -> str:
    """The UTF-8 text of a user's file, at most ``max_bytes`` long; errors name the file and ``what``."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} file {p} does not exist")
    if not p.is_file():
        raise ValueError(f"{what} file {p} is not a regular file")
    with p.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"{p}: the {what} file is larger than {max_bytes:,} bytes; a {what} is a few KB")
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
    p = Path(path)
    data = load_yaml_file(p, what)
    if data is None:
        if not allow_empty:
            raise ValueError(f"{p}: the {what} file is empty (or only comments); expected a mapping of {what} keys")
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return data
