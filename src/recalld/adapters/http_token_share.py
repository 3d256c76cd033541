"""At most :data:`TOKEN_REQUESTS` REST requests of one token at once.

Every request's work runs on one pool of 40 threads (AnyIO's default) shared by every
client, first come first served: one token sending hundreds of searches or exports at
once took every thread, and every other token's requests waited behind them for as long
as it liked. :class:`TokenShare` answers a token's request past its share at once, 429
``too_many_requests`` with ``Retry-After``, naming the limit, and runs nothing of it; the
other tokens keep at least ``40 - TOKEN_REQUESTS`` threads between them.

A trusted caller (no token: loopback while no token exists) is the only client there
is, and is not limited. A request to ``/mcp`` is not counted as a whole (an event stream
holds no thread), but each of its ``tools/call`` is, in the same share: the MCP SDK runs
each tool in a worker thread of the same pool, and a token calling many tools at once
through ``/mcp`` took threads the other tokens waited for (stop 67 left it). The share
goes to ``/mcp`` in the request's state; :func:`counting_tool_calls`, a server middleware
of the MCP server, answers a call past it with a tool error (``isError``) naming the limit,
in the called tool's dialect's error shape (integration read, stop 68: it was plain text
for every dialect, which a native client reading the error body as JSON could not read).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.types import CallToolResult, TextContent
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld.tokens import CALLER_STATE_KEY, Caller

__all__ = [
    "RETRY_SECONDS",
    "TOKEN_REQUESTS",
    "TOKEN_SHARE_STATE_KEY",
    "TokenShare",
    "ToolRefusal",
    "count_tool_calls",
    "counting_tool_calls",
    "plain_refusal",
]

# How many REST requests one token may have running at once: three quarters of the
# worker threads (AnyIO's default pool, 40), so that the rest stay for other tokens.
TOKEN_REQUESTS = 30
# What Retry-After says: a request that waited for a thread normally gets one within it.
RETRY_SECONDS = 1
# Where a request to /mcp carries the share its tool calls are counted in.
TOKEN_SHARE_STATE_KEY = "recalld_token_share"


class TokenShare:
    """Refuse a token's request while it has ``limit`` running (module docstring)."""

    def __init__(self, app: ASGIApp, limit: int = TOKEN_REQUESTS) -> None:
        self.app = app
        self.limit = limit
        self._running: dict[str, int] = {}

    def take(self, token_id: str) -> str | None:
        """Count one request of ``token_id``; why not (naming the limit) if it has its share."""
        running = self._running.get(token_id, 0)
        if running >= self.limit:
            return (
                f"this token has {running} requests running, the limit per token is"
                f" {self.limit} (the server's worker threads are shared by every client):"
                " wait for one to finish, then send this again"
            )
        self._running[token_id] = running + 1
        return None

    def release(self, token_id: str) -> None:
        """One request of ``token_id`` counted by :meth:`take` is over."""
        self._running[token_id] -= 1
        if not self._running[token_id]:
            del self._running[token_id]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        caller = scope.get("state", {}).get(CALLER_STATE_KEY)
        if scope["type"] != "http" or not isinstance(caller, Caller) or caller.token_id is None:
            await self.app(scope, receive, send)
            return
        if str(scope.get("path", "")).startswith("/mcp"):
            scope["state"][TOKEN_SHARE_STATE_KEY] = self  # its tool calls are counted
            await self.app(scope, receive, send)
            return
        token_id = caller.token_id
        refused = self.take(token_id)
        if refused is not None:
            error = {"type": "too_many_requests", "field": None, "message": refused}
            headers = {"Retry-After": str(RETRY_SECONDS)}
            await JSONResponse({"error": error}, 429, headers)(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.release(token_id)


# How a tool call past the share is answered: from the tool's name, its arguments as sent
# and why it was refused (TokenShare.take's message), the tool error its dialect words.
ToolRefusal = Callable[[str, Any, str], CallToolResult]


def plain_refusal(_name: str, _arguments: Any, message: str) -> CallToolResult:
    """A tool error ``Error: too_many_requests: ...``, for a tool no dialect shapes."""
    text = f"Error: too_many_requests: {message}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def counting_tool_calls(refusal: ToolRefusal = plain_refusal) -> ServerMiddleware[Any]:
    """A server middleware of the MCP server: count each ``tools/call`` of a token in its
    :class:`TokenShare` while it runs, answering one past the share with ``refusal`` (a
    tool error, ``isError``, naming the limit), nothing of it run (module docstring)."""

    async def counted(
        context: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if context.method != "tools/call":
            return await call_next(context)
        scope = getattr(context.request, "scope", None)
        state = scope.get("state", {}) if isinstance(scope, dict) else {}
        share = state.get(TOKEN_SHARE_STATE_KEY)
        caller = state.get(CALLER_STATE_KEY)
        if (
            not isinstance(share, TokenShare)
            or not isinstance(caller, Caller)
            or not caller.token_id
        ):
            return await call_next(context)
        refused = share.take(caller.token_id)
        if refused is not None:
            given = getattr(context, "params", None)
            params = given if isinstance(given, dict) else {}
            message = f"{refused} (tool calls count with REST requests)"
            return refusal(str(params.get("name")), params.get("arguments"), message)
        try:
            return await call_next(context)
        finally:
            share.release(caller.token_id)

    return cast(ServerMiddleware[Any], counted)  # the SDK's protocol names it ``ctx``


# Every tool's refusal as plain text (the middleware for a server without dialect tools).
count_tool_calls = counting_tool_calls()
