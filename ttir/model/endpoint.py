"""What an endpoint accepts, learnt from its answers and remembered per endpoint.

Structured replies: OpenAI and vLLM take ``response_format: {"type": "json_schema",
"json_schema": {...}}``; llama-cpp-python's server refuses that (HTTP 422, or 500 in 0.3) and takes
``{"type": "json_object", "schema": {...}}`` instead; others take neither. Images: a
text-only model's server refuses image parts (its chat template cannot render them).
The client tries the richest form first, steps down on a refusal that names the
offending part, and remembers what worked for ``(base_url, model)`` in this process,
so the probe is paid once, not once per call (or per episode).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from pydantic import BaseModel

Structured = Literal["json_schema", "json_object", "off"]
"""The forms of a structured reply an endpoint may accept: ``json_schema``, ``json_object`` (with a schema), ``off`` (plain text)."""
STRUCTURED_ORDER: tuple[Structured, ...] = ("json_schema", "json_object", "off")
"""The forms tried in order when ``vlm.structured`` is ``auto``, richest first."""
# free-text fields of the replies: bounded in the schema too, so a grammar-constrained
# small model cannot ramble until max_tokens cuts the JSON off
TEXT_FIELD_CHARS = {"reason": 300, "thought": 300, "summary": 200}
"""The longest each free-text reply field may be, in characters (bounded in the schema too)."""
_REFUSAL_STATUSES = (400, 415, 422, 500, 501)
_FORMAT_WORDS = ("response_format", "json_schema", "json_object")
_IMAGE_WORDS = ("image", "vision", "multimodal", "multi-modal", "content part", "mmproj")
# a chat template that renders message content as a string fails on a list of parts
# (llama-cpp-python 0.3: HTTP 500 'can only concatenate str (not "list") to str')
_TEMPLATE_SIGNS = ('(not "list")', "template", "content")


@dataclass
class EndpointTraits:
    """What one endpoint was seen to accept (None: not learnt yet)."""

    structured: Optional[Structured] = None
    vision: Optional[bool] = None
    refused: set[str] = field(default_factory=set)  # response_format forms the endpoint refused


_KNOWN: dict[tuple[str, str], EndpointTraits] = {}
_LOCK = threading.Lock()


def traits_for(base_url: Optional[str], model: str) -> EndpointTraits:
    """The (shared, mutable) traits of ``base_url`` serving ``model``."""
    key = ((base_url or "").rstrip("/"), model)
    with _LOCK:
        return _KNOWN.setdefault(key, EndpointTraits())


def forget() -> None:
    """Forget every endpoint (tests; or after a server was swapped behind the same URL)."""
    with _LOCK:
        _KNOWN.clear()


def structured_choices(setting: str, traits: EndpointTraits) -> list[Structured]:
    """The forms to try, in order, for a call whose reply has a schema."""
    if setting != "auto":
        return [setting]  # type: ignore[list-item]
    if traits.structured is not None:
        return [traits.structured]
    return [f for f in STRUCTURED_ORDER if f not in traits.refused]


def reply_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent for ``model``'s replies: the model's own (or its
    ``reply_json_schema()``), without titles, descriptions and defaults, optional
    fields as plain types, free-text fields bounded (:data:`TEXT_FIELD_CHARS`)."""
    own = getattr(model, "reply_json_schema", None)
    schema = own() if callable(own) else model.model_json_schema()
    return _simplify(schema)


def _simplify(node: Any, name: str = "") -> Any:
    if isinstance(node, list):
        return [_simplify(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "description", "default", "examples"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: _simplify(v, k) for k, v in value.items()}
        else:
            out[key] = _simplify(value)
    options = out.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):  # Optional[X] -> X (it is not required anyway)
            del out["anyOf"]
            out.update(kept[0])
    if out.get("type") == "string" and name in TEXT_FIELD_CHARS and "enum" not in out:
        out.setdefault("maxLength", TEXT_FIELD_CHARS[name])
    return out


def response_format(form: Structured, model: type[BaseModel]) -> Optional[dict[str, Any]]:
    """The ``response_format`` of a request in ``form`` for replies shaped like ``model``."""
    if form == "off":
        return None
    schema = reply_schema(model)
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": model.__name__, "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


def _error_text(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    parts = [str(getattr(exc, "message", "") or ""), str(body) if body is not None else ""]
    response = getattr(exc, "response", None)
    if not parts[1] and response is not None:
        try:
            parts.append(response.text[:2000])
        except Exception:  # noqa: BLE001 - the body may be gone
            pass
    return " ".join(parts).lower()


def refuses_response_format(exc: BaseException) -> bool:
    """The endpoint refused the request's ``response_format`` (not the request as a whole)."""
    status = getattr(exc, "status_code", None)  # llama-cpp-python 0.3 answers 500 (earlier: 422)
    return status in _REFUSAL_STATUSES and any(w in _error_text(exc) for w in _FORMAT_WORDS)


def refuses_images(exc: BaseException) -> bool:
    """The endpoint (plausibly) refused the request's image parts: a 4xx/5xx that names images,
    or the 500 of a chat template that cannot render a list of content parts."""
    status = getattr(exc, "status_code", None)
    if status not in _REFUSAL_STATUSES:
        return False
    text = _error_text(exc)
    return any(w in text for w in _IMAGE_WORDS) or (status == 500 and any(w in text for w in _TEMPLATE_SIGNS))


__all__ = ["EndpointTraits", "STRUCTURED_ORDER", "Structured", "TEXT_FIELD_CHARS", "forget", "refuses_images",
           "refuses_response_format", "reply_schema", "response_format", "structured_choices", "traits_for"]
