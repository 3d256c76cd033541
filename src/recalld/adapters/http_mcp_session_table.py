"""A bound on the MCP sessions each client holds, making room by closing its longest-idle one.

The MCP SDK opens at most 10,000 streamable-HTTP sessions for the whole server and
refused every ``initialize`` past that (503) until a session was ``DELETE``d or had
gone 30 minutes without a request. A client that opens a session per call and never
closes one (an agent that leaks them) took them all within minutes: on ``recalld mcp
--transport http``, and for the trusted (tokenless loopback) callers of ``recalld
serve``, nothing bounded one client, and every other client was locked out for half an
hour; a token was refused past 1,000 instead, locking out only itself.

:class:`SessionTable` keeps recalld's own record of the sessions opened through it
(which client opened each, how many requests each has in flight, which was used last),
and when a client at its :data:`SESSIONS_PER_CLIENT` (or the server at the SDK's own
limit) opens another, it first closes the longest-idle session, one with no request in
flight and no open event stream: of that client when the client is at its limit,
otherwise of any. It closes it through the SDK's public surface, a ``DELETE`` of the
session as its opener would send it, and answers that session's next request 404
(which the MCP specification gives as "session gone, start a new one") saying why. A
client whose every session is busy is refused 503, naming its limit, as before.

Only an ``initialize`` makes room: the table reads the body of a POST without a session
id (as the SDK would, and bounded as the SDK bounds it) and hands it on unchanged; any
other request (a bogus or replayed one, a notification) opens nothing, so it closes
nothing. A session the SDK ended by itself (idle for its timeout, its task crashed) is
forgotten as it ends, so it neither counts against a limit nor has a live session
closed in its place: the SDK calls :meth:`SessionTable.ended` then, from the session's
``Connection.exit_stack`` (the SDK's public per-connection teardown; mcp_server), and
none of the SDK's private tables is read. A request in
an open session that names a protocol version the server does not speak is refused 400
saying so (the SDK took it for a sessionless request and named a missing ``_meta``
envelope instead).

A client is a token; the callers trusted without one (loopback while no token exists,
and every caller of ``recalld mcp --transport http``) are one client.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SERVER_SESSIONS", "SESSIONS_PER_CLIENT", "SessionTable"]

# How many MCP sessions one client may hold open at once: a tenth of the server's.
SESSIONS_PER_CLIENT = 1_000
# The SDK's limit for the whole server (mcp.server.streamable_http_manager.DEFAULT_MAX_SESSIONS).
SERVER_SESSIONS = 10_000
# The key of the callers trusted without a token: one client between them.
TRUSTED_CLIENT = "trusted"
# The JSON-RPC codes of the SDK's own answers: "Session not found" and "Too many open sessions".
_INVALID_REQUEST = -32600
_INTERNAL_ERROR = -32603

logger = logging.getLogger(__name__)


@dataclass
class _Session:
    """What the table knows of one open session."""

    client: str
    # The opener's request without its body headers: the DELETE that closes the
    # session is sent as its opener would (the same user, path, Host and Origin).
    opener: Scope
    last_used: int
    in_flight: int = 0


class SessionTable:
    """Hold each client to ``per_client`` sessions and the server to ``server`` sessions,
    closing the longest-idle one to make room (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        per_client: int = SESSIONS_PER_CLIENT,
        server: int = SERVER_SESSIONS,
        *,
        max_body: int = DEFAULT_MAX_REQUEST_BODY_SIZE,
    ) -> None:
        self.app = app
        self.per_client = per_client
        self.server = server
        # The largest body read to tell an initialize (the SDK refuses a larger one).
        self.max_body = max_body
        self._sessions: dict[str, _Session] = {}
        # Opening requests not answered yet, per client: a session joins the table only
        # once its answer starts, so concurrent initializes would otherwise all pass.
        self._opening: dict[str, int] = {}
        # The order of use, not a clock: "longest idle" is the one used least recently.
        self._uses = itertools.count()
        # Sessions closed to make room, and their client, so that their next request
        # is told why (bounded: the oldest are forgotten, and answered as unknown).
        # (Whether it made room for its own client, or on a full server.)
        self._evicted: OrderedDict[str, tuple[str, bool]] = OrderedDict()

    @property
    def open_sessions(self) -> int:
        """How many sessions the table holds open."""
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        client = _client_of(scope)
        session_id = headers.get("mcp-session-id")
        if session_id is not None:
            # Only in a session of the table: a sessionless (2026-07-28) request may carry
            # the header as its own text, and an unknown version there is the SDK's to
            # answer (a client negotiates a version from that answer).
            version = headers.get("mcp-protocol-version")
            held = self._sessions.get(session_id)
            known = held is not None and held.client == client  # another's is unknown
            if known and version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
                await _wrong_version_answer(version)(scope, receive, send)
                return
            await self._serve_in_session(session_id, client, scope, receive, send)
        elif scope["method"] == "POST" and _opens_a_session(headers):
            body, replay = await _read_body(receive, self.max_body)
            # Any other request opens no session (the SDK refuses it): none is closed for
            # it, though one the SDK opened after all would still be recorded.
            await self._open(client, scope, replay, send, make_room=_is_initialize(body))
        else:
            await self.app(scope, receive, send)

    async def _serve_in_session(
        self, session_id: str, client: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Serve a request in a session, counting it in flight while it runs."""
        session = self._sessions.get(session_id)
        if session is None or session.client != client:
            evicted = self._evicted.get(session_id)
            if evicted is not None and evicted[0] == client:
                limit = self.per_client if evicted[1] else self.server
                await _evicted_answer(limit, own=evicted[1])(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        session.in_flight += 1
        try:
            await self.app(scope, receive, watched)
        finally:
            session.in_flight -= 1
            session.last_used = next(self._uses)
            # A 404 says the SDK closed it (30 minutes idle); a DELETE answered, its client.
            closed = bool(status) and status[0] < 300 and scope["method"] == "DELETE"
            gone = closed or (bool(status) and status[0] == 404)
            if gone and self._sessions.get(session_id) is session:
                del self._sessions[session_id]

    async def _open(
        self, client: str, scope: Scope, receive: Receive, send: Send, *, make_room: bool
    ) -> None:
        """Serve a request that may open a session, making room for it first if it is an
        ``initialize`` (``make_room``), and recording the session it opens."""
        refusal = await self._make_room(client) if make_room else None
        if refusal is not None:
            error = {"code": _INTERNAL_ERROR, "message": refusal}
            await JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, 503)(
                scope, receive, send
            )
            return
        opener = _opener(scope)
        opened: list[_Session] = []

        async def recorded(message: Message) -> None:
            if message["type"] == "http.response.start" and int(message["status"]) < 400:
                session_id = Headers(raw=message.get("headers", [])).get("mcp-session-id")
                if session_id is not None and not opened:
                    # In flight until its initialize result is sent (never closed while
                    # it is), and held from now on rather than opening.
                    session = _Session(client, opener, next(self._uses), in_flight=1)
                    self._sessions[session_id] = session
                    opened.append(session)
                    if make_room:
                        self._opened(client)
            await send(message)

        # Only an initialize is pending: a bogus request counted would have concurrent
        # initializes make room for it.
        if make_room:
            self._opening[client] = self._opening.get(client, 0) + 1
        try:
            await self.app(scope, receive, recorded)
        finally:
            if opened:
                opened[0].in_flight -= 1
                opened[0].last_used = next(self._uses)
            elif make_room:
                self._opened(client)

    def _opened(self, client: str) -> None:
        """One opening request of ``client`` is no longer pending."""
        self._opening[client] -= 1
        if not self._opening[client]:
            del self._opening[client]

    async def _make_room(self, client: str) -> str | None:
        """Close longest-idle sessions until ``client`` may open one; why not, if it may not."""
        while True:
            held = [key for key, session in self._sessions.items() if session.client == client]
            pending = self._opening.get(client, 0)
            total = len(self._sessions) + sum(self._opening.values())
            if len(held) + pending < self.per_client and total < self.server:
                return None
            own = len(held) + pending >= self.per_client
            candidates = held if own else list(self._sessions)
            idle = [key for key in candidates if self._sessions[key].in_flight == 0]
            if not idle:
                return _refusal(len(held), pending, self.per_client if own else self.server, own)
            victim = min(idle, key=lambda key: self._sessions[key].last_used)
            # Out of the table before the first await: a concurrent opener picks another.
            session = self._sessions.pop(victim)
            status = await self._close(victim, session, own)
            if status is not None:
                said = f"answered its DELETE {status}" if status else "did not answer its DELETE"
                # Still open in the SDK: kept, and counted, and this initialize refused
                # rather than a session said closed that is not (the SDK changed).
                self._evicted.pop(victim, None)
                self._sessions.setdefault(victim, session)
                logger.error(
                    "could not close an idle MCP session to make room: the MCP SDK %s"
                    " (2xx or 404 expected); the session stays open",
                    said,
                )
                return (
                    "Too many open sessions: the least recently used session could not be"
                    f" closed to make room (the MCP SDK {said});"
                    " DELETE the sessions no longer used, then initialize again"
                )

    def ended(self, session_id: str) -> None:
        """The SDK ended ``session_id`` (its client's ``DELETE``, idle for the SDK's
        timeout, its task failed): it no longer counts against any limit."""
        self._sessions.pop(session_id, None)

    async def _close(self, session_id: str, session: _Session, own: bool) -> int | None:
        """Close ``session`` as its opener would: a ``DELETE`` through the SDK; the status
        the SDK answered if that did not close it (none: closed, or gone already)."""
        self._evicted[session_id] = (session.client, own)
        while len(self._evicted) > self.server:
            self._evicted.popitem(last=False)
        identified = (b"mcp-session-id", session_id.encode("latin-1"))
        scope = {**session.opener, "headers": [*session.opener["headers"], identified]}
        statuses: list[int] = []

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def recorded(message: Message) -> None:
            """The body goes nowhere: the session's client is told on its next request."""
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))

        await self.app(scope, receive, recorded)
        # 404: the SDK had closed it already (30 minutes idle), which is as good.
        if statuses and (200 <= statuses[0] < 300 or statuses[0] == 404):
            return None
        return statuses[0] if statuses else 0


def _client_of(scope: Scope) -> str:
    """The client a request comes from: its token, or the one trusted client."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        return f"token:{user.access_token.client_id}"
    return TRUSTED_CLIENT


def _opener(scope: Scope) -> Scope:
    """``scope`` as a bodiless ``DELETE`` of its session would carry it (no state or
    extensions of its own, no body headers; the session id is added when it is sent)."""
    body_headers = (b"content-type", b"content-length", b"transfer-encoding", b"mcp-session-id")
    headers = [(name, value) for name, value in scope["headers"] if name not in body_headers]
    # Not its extensions: recalld's abort holds the opener's connection, which a session
    # kept for 30 minutes would keep in memory with it.
    kept = {key: value for key, value in scope.items() if key != "extensions"}
    return {**kept, "method": "DELETE", "headers": headers, "state": {}, "query_string": b""}


def _opens_a_session(headers: Headers) -> bool:
    """Whether a POST with ``headers`` would open a session: a 2025-era request (no
    version header, or a handshake version) without ``Mcp-Session-Id``; 2026-07-28
    requests are sessionless."""
    version = headers.get("mcp-protocol-version")
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, Receive]:
    """The body of a request, up to ``limit`` bytes past which it is not read further,
    and a ``receive`` that hands on all of it (and then what follows) unchanged."""
    read: list[Message] = []
    size = 0
    while size <= limit:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            break
    # Past the limit it is no initialize the SDK would take (it answers 413).
    body = b"".join(message.get("body", b"") for message in read) if size <= limit else b""

    async def replay() -> Message:
        if read:
            return read.pop(0)
        return await receive()

    return body, replay


def _is_initialize(body: bytes) -> bool:
    """Whether ``body`` is what the SDK opens a session for: one JSON-RPC ``initialize``
    request (an id, not a notification; not in a batch)."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    return (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and message.get("id") is not None
    )


def _refusal(held: int, pending: int, limit: int, own: bool) -> str:
    """Why an ``initialize`` is refused: every session it could close is busy."""
    also = f" (and is opening {pending} more)" if pending else ""
    which = f"the limit per client is {limit}" if own else f"the server's limit is {limit}"
    whose = "for this client" if own else "on this server"
    return (
        f"Too many open sessions {whose}: this client holds {held}{also}, {which}, and"
        " every one that could be closed for a new one has a request in flight or an open"
        " event stream; DELETE the sessions no longer used, then initialize again"
    )


def _wrong_version_answer(version: str) -> JSONResponse:
    """The 400 for a request with an ``Mcp-Session-Id`` naming a protocol version this
    server does not speak: the SDK took it for a sessionless (2026-07-28) request and
    answered about a missing ``_meta`` envelope, not about the version."""
    versions = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
    message = (
        f"Mcp-Protocol-Version: {json.dumps(version)[:80]} is not a protocol version this"
        f" server speaks (one of {versions}); a session speaks the one its initialize"
        " negotiated"
    )
    error = {"code": _INVALID_REQUEST, "message": message}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, 400)


def _evicted_answer(limit: int, *, own: bool) -> JSONResponse:
    """The 404 for a request in a session closed to make room for a newer one."""
    room = (
        f"a newer session of this client (at most {limit} are open per client"
        if own
        else f"a session of another client (at most {limit} are open on this server"
    )
    message = (
        f"Session not found: it was closed to make room for {room}; the one used least"
        " recently is closed first); initialize a new session"
    )
    error = {"code": _INVALID_REQUEST, "message": message}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, 404)
