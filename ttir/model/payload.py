"""What goes into and comes out of a chat-completion call: image data URLs,
message lists, and JSON pulled out of whatever text a model replies with.

Pure functions, no network: :mod:`ttir.model.client` uses them on both the sync and the
async path.
"""

from __future__ import annotations

import base64
import io
import json
import re
from typing import Any, Iterator, Optional, Sequence, Union

from pydantic import BaseModel, ValidationError

from ttir.core.validation import short_repr

ImageLike = Any  # a PIL image, encoded PNG/JPEG bytes, or a data:/http(s) URL string
Messages = list[dict[str, Any]]

# Reasoning models (Qwen3, DeepSeek-R1 …) prefix their answer with a think block.
_THINK_OPEN = re.compile(re.escape("<think>"), re.IGNORECASE)
_THINK_CLOSE = re.compile(re.escape("</think>"), re.IGNORECASE)
_FENCE = "```"
_INFO_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_ROLES = ("system", "user", "assistant", "developer", "tool")
# A reply is read in time linear in its length: brackets nested deeper than this are
# not a judgment (and would recurse in the JSON decoder), and only the first few
# JSON values found are tried against the schema.
MAX_JSON_DEPTH = 32
MAX_CANDIDATES = 16


class ReplyParseError(ValueError):
    """The reply holds no JSON that fits the expected shape (message says why)."""


# ------------------------------------------------------------------------ images


def encode_image(image: ImageLike, *, max_side: int = 1280, fmt: str = "png", quality: int = 85) -> str:
    """A data URL for ``image``, downscaled so its longer side is at most ``max_side``.

    Bytes are taken as an already-encoded image; strings that already are URLs
    (``data:``, ``http://``, ``https://``) pass through unchanged.
    """
    if isinstance(image, str):
        if image.startswith(("data:", "http://", "https://")):
            return image
        raise ValueError(f"image={image[:40]!r}…: a string image must be a data: or http(s) URL")
    if isinstance(image, (bytes, bytearray)):
        from PIL import Image

        image = Image.open(io.BytesIO(bytes(image)))
    if not (hasattr(image, "size") and hasattr(image, "save")):
        raise TypeError(f"image must be a PIL image, bytes or a URL string, got {type(image).__name__}")
    fmt = fmt.lower()
    if fmt == "jpg":
        fmt = "jpeg"
    if fmt not in ("png", "jpeg"):
        raise ValueError(f"image format={fmt!r} is not supported; expected 'png' or 'jpeg'")
    img = image
    if max(img.size) > max_side:
        from PIL import Image

        img = img.copy()
        img.thumbnail((max_side, max_side), Image.LANCZOS)
    if fmt == "jpeg" and img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    elif fmt == "png" and img.mode not in ("RGB", "RGBA", "L", "LA", "P", "1"):
        img = img.convert("RGBA")
    buf = io.BytesIO()
    if fmt == "jpeg":
        img.save(buf, format="JPEG", quality=quality)
    else:
        img.save(buf, format="PNG")
    return f"data:image/{fmt};base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def decode_data_url(url: str) -> tuple[str, bytes]:
    """``(mime type, raw bytes)`` of a base64 data URL."""
    m = re.match(r"data:([^;,]+);base64,(.*)$", url, re.DOTALL)
    if not m:
        raise ValueError(f"url={url[:40]!r}… is not a base64 data URL")
    return m.group(1), base64.b64decode(m.group(2))


# ---------------------------------------------------------------------- messages


def build_messages(
    prompt: Union[str, Messages],
    image_urls: Sequence[str] = (),
    *,
    system: Optional[str] = None,
) -> Messages:
    """Chat messages for ``prompt`` with the images attached to the last user turn.

    ``prompt`` is either the user's text or a ready list of messages
    (``{"role": …, "content": …}``); the list is copied, never mutated.
    """
    if isinstance(prompt, str):
        messages: Messages = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, list):
        messages = []
        for i, m in enumerate(prompt):
            if not isinstance(m, dict) or "role" not in m or "content" not in m:
                raise ValueError(f"messages[{i}]={m!r} must be a dict with 'role' and 'content'")
            if m["role"] not in _ROLES:
                raise ValueError(f"messages[{i}].role={m['role']!r} is not one of {', '.join(_ROLES)}")
            messages.append(dict(m))
        if not messages:
            raise ValueError("messages=[] is empty; expected at least one message")
    else:
        raise TypeError(f"prompt must be a string or a list of messages, got {type(prompt).__name__}")
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    if image_urls:
        target = next((m for m in reversed(messages) if m["role"] == "user"), None)
        if target is None:
            raise ValueError("images were given but the messages have no 'user' turn to attach them to")
        content = target["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        parts.extend({"type": "image_url", "image_url": {"url": url}} for url in image_urls)
        target["content"] = parts
    return messages


# ------------------------------------------------------------------------- reply


def strip_think(text: str) -> str:
    """``text`` without its ``<think>…</think>`` blocks (a linear scan, whatever the reply)."""
    parts: list[str] = []
    pos = 0
    while True:
        start = _THINK_OPEN.search(text, pos)
        end = _THINK_CLOSE.search(text, start.end()) if start else None
        if start is None or end is None:
            break
        parts.append(text[pos:start.start()])
        pos = end.end()
    parts.append(text[pos:])
    return "".join(parts)


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the ```-fenced blocks of ``text``, in order, without their info string (``json``)."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(_FENCE, pos)
        end = text.find(_FENCE, start + 3) if start >= 0 else -1
        if end < 0:
            return out
        body = text[start + 3:end]
        first, newline, rest = body.partition("\n")
        if newline and set(first.strip(" \t\r")) <= _INFO_CHARS:
            body = rest
        out.append(body.strip())
        pos = end + 3


def nesting_depth(text: str) -> int:
    """The deepest ``[`` / ``{`` nesting in ``text`` (strings not told apart: an upper bound)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}" and depth:
            depth -= 1
    return deepest


def json_candidates(text: str) -> list[Any]:
    """The JSON values found in ``text``, best guesses first (at most ``MAX_CANDIDATES``).

    Order: the whole reply, then each fenced block (```json … ```), then each
    balanced ``{…}`` / ``[…]`` embedded in prose ("Sure! Here is …{…}").
    Raises :class:`ReplyParseError` when brackets nest deeper than ``MAX_JSON_DEPTH``.
    """
    text = strip_think(text).strip()
    if nesting_depth(text) > MAX_JSON_DEPTH:
        raise ReplyParseError(f"the reply nests brackets deeper than {MAX_JSON_DEPTH} levels: {_clip(text)!r}")
    found: list[Any] = []
    seen: set[str] = set()

    def add(value: Any) -> bool:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            found.append(value)
        return len(found) >= MAX_CANDIDATES

    value = _loads(text)
    if value is not _NOTHING and add(value):
        return found
    for body in fenced_blocks(text):
        value = _loads(body)
        for v in [value] if value is not _NOTHING else _embedded(body):
            if add(v):
                return found
    for v in _embedded(text):
        if add(v):
            return found
    return found


_NOTHING = object()


# strict=False: raw control characters (a newline, a tab) inside strings are read as
# themselves — grammar-constrained output (llama.cpp's json_object + schema) has them
_DECODER = json.JSONDecoder(strict=False)


def _loads(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError):
        return _NOTHING


def _embedded(text: str) -> Iterator[Any]:
    """JSON objects/arrays that start somewhere inside ``text`` (outermost only)."""
    decoder = _DECODER
    i, n = 0, len(text)
    while i < n:
        if text[i] in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):
                i += 1
                continue
            if isinstance(value, (dict, list)):
                yield value
                i = end
                continue
        i += 1


def parse_json_reply(text: Optional[str], schema: Optional[type[BaseModel]] = None,
                     context: Optional[dict[str, Any]] = None) -> Any:
    """The first JSON value in ``text`` that ``schema`` accepts (or the first object when no schema).

    ``context`` is handed to pydantic validators (``info.context``), for checks
    that need the caller's state (the current screen, say).

    Raises :class:`ReplyParseError` naming what was wrong: empty reply, no
    JSON at all, or the schema's complaints about the best candidate.
    """
    if text is None or not text.strip():
        raise ReplyParseError("the reply is empty")
    candidates = json_candidates(text)
    if not candidates:
        raise ReplyParseError(f"no JSON object found in the reply: {_clip(text)!r}")
    if schema is None:
        objects = [c for c in candidates if isinstance(c, dict)]
        return objects[0] if objects else candidates[0]
    first_error: Optional[ValidationError] = None
    for value in candidates:
        if not isinstance(value, dict):
            continue
        try:
            return schema.model_validate(value, context=context)
        except ValidationError as exc:
            first_error = first_error or exc
    if first_error is None:
        raise ReplyParseError(f"the reply holds JSON but no object for {schema.__name__}: {_clip(text)!r}")
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']} (got {short_repr(e.get('input'))})"
        for e in first_error.errors()
    )
    raise ReplyParseError(f"the reply's JSON does not match {schema.__name__}: {problems}")


def _clip(text: str, n: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= n else text[:n] + "…"
