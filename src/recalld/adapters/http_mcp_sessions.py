"""MCP sessions at ``/mcp`` that belong to the token that opened them.

The MCP SDK keeps each streamable-HTTP session (``Mcp-Session-Id``) for whoever
opened it, but it knows the opener only from an authenticated user in the ASGI
scope (``scope["user"]``), which its own OAuth middleware sets and recalld's
bearer tokens did not. Any other token allowed on ``/mcp`` could then drive a
session it had only learned the id of: call tools in it (its transcript, its
subscriptions), open its one event stream before its owner, or ``DELETE`` it
from under its owner. :func:`owned_by` names the token as that user, so the SDK
answers another token's request on the session as it answers an unknown
session (404, "Session not found"), and the opener goes on undisturbed.

Callers trusted without a token (loopback, no token configured) are one and the
same caller: their sessions stay open to each other, as before.

The SDK opens at most 10,000 sessions at once for the whole server, and closes one
only when its client ``DELETE``s it or after 30 minutes without a request: a client
that opens a session per call and never closes it (or a token used to that end) took
every one within minutes, and every other token's ``initialize`` was refused (503
"Too many open sessions") for up to half an hour. :func:`limit_sessions_per_token`
holds each token to :data:`SESSIONS_PER_TOKEN` of them.
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.auth.provider import AccessToken
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld.tokens import Caller

__all__ = ["SESSIONS_PER_TOKEN", "SESSION_OWNER_PREFIX", "limit_sessions_per_token", "owned_by"]

# How many MCP sessions one token may hold open at once: a tenth of the SDK's limit for
# the whole server (mcp.server.streamable_http_manager.DEFAULT_MAX_SESSIONS, 10,000).
SESSIONS_PER_TOKEN = 1_000

# The client id the SDK compares sessions by: the token's public id, never its secret.
SESSION_OWNER_PREFIX = "recalld-token:"


def owned_by(scope: Scope, caller: Caller) -> Scope:
    """``scope``, naming ``caller``'s token as its user (unchanged for a trusted caller),
    so that the SDK ties each session to the token that opened it."""
    if caller.token_id is None:
        return scope
    owner = f"{SESSION_OWNER_PREFIX}{caller.token_id}"
    user = AuthenticatedUser(AccessToken(token=owner, client_id=owner, scopes=[]))
    return {**scope, "user": user}


def limit_sessions_per_token(
    app: ASGIApp, manager: Any, limit: int = SESSIONS_PER_TOKEN
) -> ASGIApp:
    """``app`` (the SDK's ``/mcp`` endpoint of ``manager``, its session manager), refusing
    a request that would open a session for a token holding ``limit`` open already.

    Only a 2025-era request without ``Mcp-Session-Id`` opens one (2026-07-28 requests are
    sessionless); a trusted caller is not limited (the SDK's own limit applies). The
    refusal is the SDK's for its own limit, 503 with a JSON-RPC error, saying which
    limit and how to free a session. The count reads the manager's private record of
    each session's owner (pinned by tests/adapters/test_http_mcp_session_limits.py).
    """

    # Each token's requests that may open a session and are not answered yet: the SDK
    # records a session's owner only once the request is under way (after an await), so
    # counting the record alone let any number of concurrent initializes past the limit.
    # An opening request is counted until it is answered, so for that while its session
    # counts twice: concurrent initializes near the limit are refused a little early,
    # never let past it.
    opening: dict[str, int] = {}

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and isinstance(user, AuthenticatedUser)
            and _opens_a_session(Headers(scope=scope))
        ):
            await app(scope, receive, send)
            return
        owner = authorization_context(user)
        key = user.access_token.client_id
        owners: dict[str, Any] = getattr(manager, "_session_owners", {})
        held = sum(1 for opener in list(owners.values()) if opener == owner)
        pending = opening.get(key, 0)
        if held + pending >= limit:
            also = f" (and is opening {pending} more)" if pending else ""
            message = (
                f"Too many open sessions for this token: it holds {held}{also}, the limit "
                f"per token is {limit}; DELETE the sessions it no longer uses (a session "
                "also closes after 30 minutes without a request), then initialize again"
            )
            error = {"code": -32603, "message": message}
            answer = JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, 503)
            await answer(scope, receive, send)
            return
        opening[key] = pending + 1
        try:
            await app(scope, receive, send)
        finally:
            opening[key] -= 1
            if not opening[key]:
                del opening[key]

    return limited


def _opens_a_session(headers: Headers) -> bool:
    """Whether a POST with ``headers`` would open a session (module docstring)."""
    if headers.get("mcp-session-id") is not None:
        return False
    version = headers.get("mcp-protocol-version")
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS
