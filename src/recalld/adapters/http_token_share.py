"""At most :data:`TOKEN_REQUESTS` REST requests of one token at once.

Every request's work runs on one pool of 40 threads (AnyIO's default) shared by every
client, first come first served: one token sending hundreds of searches or exports at
once took every thread, and every other token's requests waited behind them for as long
as it liked. :class:`TokenShare` answers a token's request past its share at once, 429
``too_many_requests`` with ``Retry-After``, naming the limit, and runs nothing of it; the
other tokens keep at least ``40 - TOKEN_REQUESTS`` threads between them.

A trusted caller (no token: loopback while no token exists) is the only client there
is, and is not limited; ``/mcp`` keeps its own limits (sessions per token), its event
streams holding no thread. Its tool calls run on the same pool (the MCP SDK runs each in
a worker thread) and are not counted here: a token calling many tools at once through
``/mcp`` still takes threads the other tokens wait for (integration read, stop 67).
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld.tokens import CALLER_STATE_KEY, Caller

__all__ = ["RETRY_SECONDS", "TOKEN_REQUESTS", "TokenShare"]

# How many REST requests one token may have running at once: three quarters of the
# worker threads (AnyIO's default pool, 40), so that the rest stay for other tokens.
TOKEN_REQUESTS = 30
# What Retry-After says: a request that waited for a thread normally gets one within it.
RETRY_SECONDS = 1


class TokenShare:
    """Refuse a token's request while it has ``limit`` running (module docstring)."""

    def __init__(self, app: ASGIApp, limit: int = TOKEN_REQUESTS) -> None:
        self.app = app
        self.limit = limit
        self._running: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = scope.get("state", {}).get(CALLER_STATE_KEY)
        if (
            scope["type"] != "http"
            or not isinstance(caller, Caller)
            or caller.token_id is None
            or str(scope.get("path", "")).startswith("/mcp")
        ):
            await self.app(scope, receive, send)
            return
        token_id = caller.token_id
        running = self._running.get(token_id, 0)
        if running >= self.limit:
            message = (
                f"this token has {running} requests running, the limit per token is"
                f" {self.limit} (the server's worker threads are shared by every client):"
                " wait for one to finish, then send this again"
            )
            error = {"type": "too_many_requests", "field": None, "message": message}
            headers = {"Retry-After": str(RETRY_SECONDS)}
            await JSONResponse({"error": error}, 429, headers)(scope, receive, send)
            return
        self._running[token_id] = running + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self._running[token_id] -= 1
            if not self._running[token_id]:
                del self._running[token_id]
