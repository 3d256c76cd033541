"""How every native tool answers: compact JSON, serialised in this one place.

Agents pay for every byte of a result, so the native dialect's text is JSON
without whitespace, and a model is dumped without null fields and without the
fields still at their declared default (``fire_count: 0``, ``resolved: []``,
``scrub: "none"``); the structured content is the same body. A tool's
``verbose: true`` bypasses :func:`compact` (every field), never
:func:`compact_result`.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args, get_origin

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = ["CONTENT_BUDGET", "compact", "compact_result", "within_budget"]

# How many bytes of full contents a compact answer listing memories holds at most.
CONTENT_BUDGET = 64 * 1024


def compact(model: BaseModel, **options: Any) -> dict[str, Any]:
    """``model`` as JSON-ready data without null fields or fields at their default.

    A field whose only possible value is its default (a union's tag, such as a
    trigger's ``type: "mention"``) stays: without it the data cannot be read
    back. ``options`` are further ``model_dump`` arguments (``include``,
    ``exclude``).
    """
    data: dict[str, Any] = _without_defaults(
        model, model.model_dump(mode="json", exclude_none=True, **options)
    )
    return data


def compact_result(body: dict[str, Any], *, error: bool = False) -> CallToolResult:
    """The tool result of ``body``: compact JSON text, and ``body`` as structured content."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=error
    )


def within_budget(body: dict[str, Any], items: str, verbose: bool) -> dict[str, Any]:
    """``body`` with the full contents of its compact ``items`` held to
    ``CONTENT_BUDGET`` bytes (UTF-8), in their order: an item past it keeps its
    one-line summary, and ``content_left_out`` counts those (the first content is always
    whole). 100 hits of 64 KiB put 6 MB into the prompt of the model that called the
    tool (recall, list, sense, pending_recollections). ``verbose`` answers are whole,
    as asked."""
    if verbose:
        return body
    left = CONTENT_BUDGET
    kept = omitted = 0
    for item in body[items]:
        content = item.get("content")
        if not isinstance(content, str):
            continue
        size = len(content.encode("utf-8", "surrogatepass"))
        if omitted or (kept and size > left):
            del item["content"]
            omitted += 1
        else:
            left -= size
            kept += 1
    if omitted:
        body["content_left_out"] = omitted
    return body


def _without_defaults(value: Any, data: Any) -> Any:
    """``data`` (the JSON dump of ``value``) without the fields ``value`` has at their default."""
    if isinstance(value, BaseModel) and isinstance(data, dict):
        fields = type(value).model_fields
        kept: dict[str, Any] = {}
        for name, dumped in data.items():
            field = fields.get(name)
            current = getattr(value, name, None)
            if field is not None and _at_default(field, current):
                continue
            kept[name] = _without_defaults(current, dumped)
        return kept
    if isinstance(value, list | tuple) and isinstance(data, list) and len(value) == len(data):
        return [_without_defaults(item, dumped) for item, dumped in zip(value, data, strict=True)]
    if isinstance(value, dict) and isinstance(data, dict):
        return {key: _without_defaults(value.get(key), dumped) for key, dumped in data.items()}
    return data


def _at_default(field: FieldInfo, value: Any) -> bool:
    if field.is_required():
        return False
    annotation = field.annotation
    if get_origin(annotation) is Literal and len(get_args(annotation)) == 1:
        return False  # a tag: the one thing that says which model this is
    default = field.get_default(call_default_factory=True)
    return bool(value == default)
