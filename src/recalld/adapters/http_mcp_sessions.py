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

How many sessions each token (and the trusted callers between them) may hold is
:mod:`recalld.adapters.http_mcp_session_table`'s concern.
"""

from __future__ import annotations

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.types import Scope

from recalld.tokens import Caller

__all__ = ["SESSION_OWNER_PREFIX", "owned_by"]

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
