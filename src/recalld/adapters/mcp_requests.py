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

Over HTTP the SDK's own checks come first: the message is handed on, so a bad Host or
Origin (DNS-rebinding protection), Content-Type or Accept header, or a missing or unknown
session is answered as the SDK answers it for any notification. Only where the SDK
would accept it (``202``) is the answer the refusal, and what reaches the session is a
notification no handler takes (:data:`INERT_NOTIFICATION`), never the refused message (the
SDK's own diagnostics, such as a debug line for a notification nothing handles, may show
it). An ``initialize`` needs no session, though the notification it is swapped for does:
there the SDK's "Missing session ID" is answered with the refusal too.

:func:`name_invalid_params` is a server middleware for every transport: the SDK answers
request params it cannot read (a ``tools/call`` without ``name``, an ``initialize``
whose ``protocolVersion`` is a number), and any request before ``initialize``, with
``-32602`` "Invalid request parameters" and empty ``data``, naming nothing; the
middleware keeps the code and says which parameter and why, or that the session is not
initialized yet. It also refuses a second ``initialize`` on one session (``-32600``),
and a ``cursor`` on a list request (``-32602``, as MCP's pagination says of an invalid
cursor): every list this server gives is whole, one page with no ``nextCursor``, so a
cursor is none it gave (the SDK ignored it and answered the first page again).

A POSTed body that is JSON but no JSON-RPC message (a batch among them) is answered by
:func:`unreadable` as stdio answers such a line (:func:`refusal`): the SDK's ``-32602``
quoted pydantic's whole report, every value of the body in it. So is a message one of
whose objects gives a key twice (:func:`duplicate_key`), which the SDK read as its last.

The SDK's transport-level refusals of a request (404 "Session not found", 400 "Missing
session ID", 503 "Too many open sessions") carry ``id: null``; JSON-RPC
keeps null for a request whose id could not be read, so a client matching answers by id
found none for its request. :func:`request_id` reads the id, and the endpoint's error
answers carry it (:func:`_answering_with_id`).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import pydantic
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld import _validate as check
from recalld._text import shown

__all__ = [
    "ENDLESS_METHODS",
    "INERT_NOTIFICATION",
    "batch_messages",
    "buffered",
    "duplicate_key",
    "id_problem",
    "invalid_id",
    "name_invalid_params",
    "refusal",
    "refusal_reason",
    "refuse_notifications_with_ids",
    "request_id",
    "unreadable",
]

# What the SDK says, naming nothing, of params it cannot read and of a request before
# initialize (its "pinned compat" shape).
_SDK_INVALID_PARAMS = "Invalid request parameters"
_NOT_INITIALIZED = (
    "the session is not initialized: send initialize, then notifications/initialized, "
    "before any request but ping"
)

# The list requests MCP paginates; this server answers each with one whole page.
PAGINATED_METHODS = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
)
# 2026-07-28 requests answered only when the client leaves (a stop does not wait for them).
ENDLESS_METHODS = frozenset({"subscriptions/listen"})
# What the SDK is handed in place of a refused message: it checks the request as it would
# the message (both are notifications to it), then delivers this, which no handler takes.
INERT_NOTIFICATION = b'{"jsonrpc": "2.0", "method": "notifications/recalld/refused"}'


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


def duplicate_key(text: str | bytes) -> str | None:
    """Why ``text`` is refused if one of its JSON objects gives a key twice, else None.

    JSON leaves such an object's meaning open and the SDK's parser keeps the last
    value, silently: ``{"name": "forget", "arguments": {"id": "a", "id": "b"}}``
    forgot ``b``, where a proxy or log that reads the first saw ``a``. None for text
    that is no JSON at all (refused as such elsewhere)."""
    try:
        _decoded, twice = _read(text)
    except (ValueError, RecursionError):
        return None
    return None if twice is None else _given_twice(twice)


def _given_twice(key: str) -> str:
    """Why a message is refused when one of its objects gives ``key`` twice."""
    return f"the key {shown(key)} is given twice in one object: give each key once"


def _read(text: str | bytes) -> tuple[Any, str | None]:
    """``text`` decoded (``json.loads``, whose errors it raises), and the first key one of
    its objects gives twice, if one does."""
    twice: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        unique = _given(items)
        if isinstance(unique, _GivenTwice) and not twice:
            twice.append(unique.twice)
        return unique

    decoded = json.loads(text, object_pairs_hook=pairs)
    return decoded, twice[0] if twice else None


class _GivenTwice(dict[str, Any]):
    """A decoded JSON object one of whose keys was given twice (its last value kept, as
    the SDK reads it), with its keys and values as given (to write it again as it came)."""

    def __init__(self, items: list[tuple[str, Any]], twice: str) -> None:
        super().__init__(items)
        self.pairs = items
        self.twice = twice


def _given(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: the object, a :class:`_GivenTwice` if it
    gives a key twice."""
    unique = dict(items)
    if len(unique) == len(items):
        return unique
    seen: set[str] = set()
    for key, _value in items:
        if key in seen:
            return _GivenTwice(items, key)
        seen.add(key)
    raise AssertionError("unreachable: fewer keys than pairs means one came twice")


def _written(value: Any) -> str:
    """``value`` (decoded with :func:`_given`) in JSON again, each object's keys as given."""
    if isinstance(value, dict):
        items = value.pairs if isinstance(value, _GivenTwice) else value.items()
        return "{" + ", ".join(f"{json.dumps(key)}: {_written(item)}" for key, item in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_written(item) for item in value) + "]"
    return json.dumps(value)


def batch_messages(line: str) -> list[str] | None:
    """The messages of ``line`` if it is a JSON-RPC batch (a non-empty JSON array), each
    in JSON of its own, else None.

    A message one of whose objects gives a key twice is written with the key twice, as
    it came, so that it is refused on its own (:func:`duplicate_key`), answered in the
    batch's array with its id, while the batch's other messages are read: refusing the
    whole batch left every other request of it unanswered."""
    try:
        decoded, twice = _read(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, list) or not decoded:
        return None
    if twice is None:  # (json.dumps is the faster writer, where the two agree)
        return [json.dumps(message) for message in decoded]
    messages: list[str] = []
    for message in decoded:
        try:
            messages.append(_written(message))
        except RecursionError:  # (nested past what the SDK reads: refused as it is)
            messages.append(json.dumps(message))
    return messages


def invalid_id(reason: str) -> types.JSONRPCError:
    """The JSON-RPC answer to a request whose id is unusable (so its id is null)."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid request: {reason}"),
    )


def refusal_reason(error: Exception) -> str:
    """What is wrong with a line, in a few words (pydantic's first problems, without the
    input it would echo back)."""
    if isinstance(error, pydantic.ValidationError):
        return "; ".join(
            f"{problem['msg']} at {'.'.join(map(str, problem['loc']))}".removesuffix(" at ")
            for problem in error.errors(include_url=False, include_input=False)[:3]
        )
    return str(error)


def refusal(line: str | bytes, error: Exception) -> types.JSONRPCError:
    """The JSON-RPC answer to ``line``, which is not a valid message (``error`` says why)."""
    reason = refusal_reason(error)
    try:
        decoded = json.loads(line, object_pairs_hook=_given)
    except (ValueError, RecursionError):
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {reason}"),
        )
    request_id = _single_id(decoded)
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid request: {reason}"),
    )


def _single_id(decoded: Any) -> str | int | None:
    """The id of the message ``decoded`` (read with :func:`_given`), None if it has none
    that is a string or an integer, or gives ``id`` twice: which of the two the client
    waits on is unknown, and JSON-RPC answers a request whose id cannot be read with id
    null."""
    if not isinstance(decoded, dict):
        return None
    if isinstance(decoded, _GivenTwice) and [key for key, _ in decoded.pairs].count("id") > 1:
        return None
    found = decoded.get("id")
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def refuse_notifications_with_ids(app: ASGIApp, path: str | None = None) -> ASGIApp:
    """``app`` (the SDK's streamable-HTTP endpoint, or its whole app serving ``path``),
    answering a POSTed notification that carries an id with 400 and ``-32600`` where the
    SDK would accept it (its own checks of the request come first: module docstring).

    The body is read first and handed on unchanged unless refused; one larger than the
    SDK's own cap is handed on unread, for the SDK to refuse (413).
    """

    async def refusing(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or (path is not None and scope["path"].rstrip("/") != path.rstrip("/"))
        ):
            await app(scope, receive, send)
            return
        read, body, whole = await buffered(receive)
        refused = unreadable(body) if whole else None
        if refused is not None:
            answer = refused.model_dump(mode="json", by_alias=True)
            answer["error"] = {key: answer["error"][key] for key in ("code", "message")}
            await JSONResponse(answer, status_code=400)(scope, receive, send)
            return
        reason = id_problem(body) if whole and _reads_as_notification(body) else None
        if reason is not None:
            read = deque([{"type": "http.request", "body": INERT_NOTIFICATION}])
            send = _refusing_acceptance(scope, receive, send, reason, _initializes(body))
        elif whole and (answered := request_id(body)) is not None:
            send = _answering_with_id(send, answered)

        async def replay() -> Message:
            return read.popleft() if read else await receive()

        await app(scope, replay, send)

    return refusing


def unreadable(body: bytes) -> types.JSONRPCError | None:
    """The ``-32600`` answer to a POSTed ``body`` that is JSON but no JSON-RPC message (a
    batch among them: 2025-06-18 removed batches), as stdio answers such a line; None
    when it is a message, or no JSON at all (the SDK answers that with ``-32700``). The
    SDK answered ``-32602`` with pydantic's whole report, the body's values in it."""
    try:
        decoded, twice = _read(body)  # (one read for both checks: every POST is read so)
    except (ValueError, RecursionError):
        return None
    if isinstance(decoded, list):
        reason = (
            "a batch (JSON array) is not read over streamable HTTP (protocol 2025-06-18 "
            "removed batches): send each message in a request of its own"
        )
        return refusal(body, ValueError(reason))
    try:
        types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    except pydantic.ValidationError as error:
        return refusal(body, error)
    return None if twice is None else refusal(body, ValueError(_given_twice(twice)))


def request_id(body: bytes) -> str | int | None:
    """The id of the JSON-RPC request ``body`` (a JSON object with a ``method`` and a
    string or integer ``id``); None for anything else."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or not isinstance(decoded.get("method"), str):
        return None
    found = decoded.get("id")
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _answering_with_id(send: Send, answered: str | int) -> Send:
    """``send``, with an error answer in JSON whose ``id`` is null (the SDK's transport
    refusals) given the id of the request it answers (module docstring)."""
    held: list[Message] = []

    async def answer(message: Message) -> None:
        if not held and not _json_error_start(message):
            await send(message)
            return
        held.append(message)
        if message["type"] != "http.response.body" or message.get("more_body"):
            return
        start, body = held[0], b"".join(part.get("body", b"") for part in held[1:])
        held.clear()
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict) and "error" in decoded and decoded.get("id") is None:
            decoded["id"] = answered
            body = json.dumps(decoded, separators=(",", ":")).encode()
            headers = [
                (name, value)
                for name, value in start["headers"]
                if name.lower() != b"content-length"
            ]
            start = {**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await send(start)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return answer


def _json_error_start(message: Message) -> bool:
    """Whether ``message`` starts an error answer (4xx, 5xx) in JSON."""
    if message["type"] != "http.response.start" or message["status"] < 400:
        return False
    content_type: bytes = next(
        (value for name, value in message.get("headers", []) if name.lower() == b"content-type"),
        b"",
    )
    return content_type.startswith(b"application/json")


def _refusing_acceptance(
    scope: Scope, receive: Receive, send: Send, reason: str, initializes: bool
) -> Send:
    """``send``, with the SDK's ``202 Accepted`` replaced by the ``-32600`` refusal of
    ``reason`` (for an ``initialize``, its "Missing session ID" too: module docstring);
    any other answer of the SDK (its checks failed) goes out as it is."""
    refused = False
    held: list[Message] = []  # a 400 of an initialize, until its body says which

    async def refuse() -> None:
        nonlocal refused
        refused = True
        refusal = invalid_id(reason).model_dump(mode="json", by_alias=True)
        refusal["error"] = {key: refusal["error"][key] for key in ("code", "message")}
        await JSONResponse(refusal, status_code=400)(scope, receive, send)

    async def answer(message: Message) -> None:
        if refused:  # after the refusal: the rest of the SDK's answer
            return
        if message["type"] == "http.response.start" and message["status"] == 202:
            await refuse()
            return
        if initializes and (held or message["type"] == "http.response.start"):
            if message["type"] == "http.response.start" and message["status"] != 400:
                await send(message)
                return
            held.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                text = b"".join(part.get("body", b"") for part in held[1:])
                if b"Missing session ID" in text:
                    await refuse()
                    return
                for part in held:
                    await send(part)
                held.clear()
            return
        await send(message)

    return answer


async def buffered(receive: Receive) -> tuple[deque[Message], bytes, bool]:
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


def _initializes(body: bytes) -> bool:
    """Whether ``body`` (a JSON object, read already) asks to ``initialize``."""
    decoded: Any = json.loads(body)
    return isinstance(decoded, dict) and decoded.get("method") == "initialize"


def _reads_as_notification(body: bytes) -> bool:
    """Whether the SDK would take ``body`` for a notification (what it never answers)."""
    try:
        message: Any = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValueError:
        return False  # not a message at all: the SDK answers that itself
    return isinstance(message, types.JSONRPCNotification)


async def name_invalid_params(
    context: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """A server middleware (module docstring): the SDK's nameless ``-32602`` for request
    params it cannot read, or for a request before ``initialize``, says what is wrong;
    a second ``initialize`` on one session is refused (``-32600``), and so is a list
    request's ``cursor`` (``-32602``)."""
    connection = getattr(context.session, "_connection", None)
    if context.method == "initialize" and getattr(connection, "client_params", None) is not None:
        # The SDK answered it again and switched the session's protocol version (from
        # 2025-06-18 to 2024-11-05) mid-session.
        version = getattr(connection, "protocol_version", "?")
        message = (
            f"Invalid request: the session is already initialized (protocol {version}); "
            "start a new session to initialize again"
        )
        raise MCPError(code=types.INVALID_REQUEST, message=message)
    cursor = context.params.get("cursor") if context.params is not None else None
    if context.method in PAGINATED_METHODS and isinstance(cursor, str):
        # (Any other type is left to the SDK's check of the params, which names it.)
        message = (
            f"Invalid params: params.cursor: {shown(cursor)} is not a cursor this "
            f"server gave: {context.method} answers the whole list in one page (no "
            "nextCursor); send it without cursor"
        )
        raise MCPError(code=types.INVALID_PARAMS, message=message, data={"field": "params.cursor"})
    try:
        return await call_next(context)
    except pydantic.ValidationError as error:
        problems = [_problem(problem) for problem in error.errors(include_url=False)[:5]]
        message = f"{_SDK_INVALID_PARAMS}: " + "; ".join(
            f"{problem['field']}: {problem['message']}" for problem in problems
        )
        raise MCPError(code=types.INVALID_PARAMS, message=message, data=problems) from None
    except MCPError as error:
        nameless = (error.error.code, error.error.message, error.error.data) == (
            types.INVALID_PARAMS,
            _SDK_INVALID_PARAMS,
            "",
        )
        connection = getattr(context.session, "_connection", None)
        before_initialize = not getattr(connection, "initialize_accepted", True)
        if nameless and before_initialize and context.method != "initialize":
            # The one other place the SDK raises this shape: its gate before initialize.
            message = f"{_SDK_INVALID_PARAMS}: {_NOT_INITIALIZED}"
            raise MCPError(code=types.INVALID_PARAMS, message=message) from None
        raise


def _problem(problem: Any) -> dict[str, str]:
    """One pydantic problem as the field it names (under ``params``) and what is wrong,
    without the input it would echo back."""
    # The SDK checks a request's params as part of the whole message (they are under
    # "params" already), a handler's params model on its own.
    parts = [str(part) for part in problem["loc"]]
    location = ".".join(parts if parts[:1] == ["params"] else ["params", *parts])
    return {"field": check.field_name(location), "message": str(problem["msg"])}
