"""Why a JSON body was not read: its ``Content-Type`` said it was something else.

FastAPI parses a body as JSON only when the request says it is JSON
(``application/json``, or a ``+json`` type); any other type, or none (``curl -d``
sends ``application/x-www-form-urlencoded``), leaves the body unparsed, and the
refusal read "Input should be a valid dictionary or object to extract fields
from" for an object that was well formed, never naming the header at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.datastructures import Headers

__all__ = ["body_type_problem"]


def _is_json(content_type: str) -> bool:
    essence = content_type.split(";", 1)[0].strip().lower()
    return essence == "application/json" or (
        essence.startswith("application/") and essence.endswith("+json")
    )


def body_type_problem(problem: Mapping[str, Any], headers: Headers) -> str | None:
    """What to say about a whole body refused (``problem``, FastAPI's first error, is at
    ``("body",)`` and not a missing body) from a request whose ``Content-Type`` is not
    JSON; None when that is not the reason. A body FastAPI left unread is refused as its
    raw bytes: one it did read as JSON (without a ``Content-Type``, where FastAPI's
    ``strict_content_type`` is off or older FastAPI reads it) keeps its own message."""
    if tuple(problem.get("loc", ())) != ("body",) or problem.get("type") == "missing":
        return None
    if not isinstance(problem.get("input"), bytes):
        return None
    given = headers.get("content-type")
    if given is not None and _is_json(given):
        return None
    said = "no Content-Type" if given is None else f"Content-Type {given[:100]!r}"
    return f"was not read as JSON: the request has {said}; send Content-Type: application/json"
