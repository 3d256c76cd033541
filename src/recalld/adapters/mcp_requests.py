"""Requests the MCP SDK would take for notifications, answered as JSON-RPC says.

A message with an ``id`` that is no string or integer (``null``, ``1.5``, ``true``,
``[7]``) is not a valid request: JSON-RPC 2.0 has the server answer it with ``-32600``
(Invalid Request) and id null. The SDK reads it as a notification instead, and
answers nothing on stdio and ``202 Accepted`` over streamable HTTP, so the client
waits for a reply that never comes. :func:`id_problem` says what is wrong with such a
message; stdio refuses the line (:mod:`recalld.adapters._stdio`), and
:func:`refuse_notifications_with_ids` wraps the streamable-HTTP endpoint (``recalld
serve``'s ``/mcp`` and ``recalld mcp --transport http``) to refuse the request with
``400`` and that error, the status the SDK gives every other message it cannot read.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from mcp import types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["id_problem", "invalid_id", "refuse_notifications_with_ids"]


def id_problem(text: str | bytes) -> str | None:
    """Why ``text`` (one JSON-RPC message the SDK read as a notification) is no valid
    message: it carries an ``id``, which makes it a request, but one whose id is not a
    string or an integer. None when it is a real notification (or not a JSON object)."""
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or "id" not in decoded:
        return None
    found = json.dumps(decoded["id"])[:40]
    return f"a request id must be a string or an integer (got {found})"


def invalid_id(reason: str) -> types.JSONRPCError:
    """The JSON-RPC answer to a request whose id is unusable (so its id is null)."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid request: {reason}"),
    )


def refuse_notifications_with_ids(app: ASGIApp, path: str | None = None) -> ASGIApp:
    """``app`` (the SDK's streamable-HTTP endpoint, or its whole app serving ``path``),
    answering a POSTed notification that carries an id with 400 and ``-32600``.

    The body is read first and handed on unchanged; one larger than the SDK's own cap
    is handed on unread, for the SDK to refuse (413).
    """

    async def refusing(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or (path is not None and scope["path"].rstrip("/") != path.rstrip("/"))
        ):
            await app(scope, receive, send)
            return
        read, body, whole = await _buffered(receive)
        if whole and _reads_as_notification(body):
            reason = id_problem(body)
            if reason is not None:
                answer = invalid_id(reason).model_dump(mode="json", by_alias=True)
                answer["error"] = {key: answer["error"][key] for key in ("code", "message")}
                await JSONResponse(answer, status_code=400)(scope, receive, send)
                return

        async def replay() -> Message:
            return read.popleft() if read else await receive()

        await app(scope, replay, send)

    return refusing


async def _buffered(receive: Receive) -> tuple[deque[Message], bytes, bool]:
    """The request's messages as read, its body, and whether that body is whole (not
    over the SDK's cap, nor cut short by a disconnect)."""
    read: deque[Message] = deque()
    body = bytearray()
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return read, bytes(body), False
        body.extend(message.get("body", b""))
        if len(body) > DEFAULT_MAX_REQUEST_BODY_SIZE:
            return read, bytes(body), False
        if not message.get("more_body", False):
            return read, bytes(body), True


def _reads_as_notification(body: bytes) -> bool:
    """Whether the SDK would take ``body`` for a notification (what it never answers)."""
    try:
        message: Any = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValueError:
        return False  # not a message at all: the SDK answers that itself
    return isinstance(message, types.JSONRPCNotification)
