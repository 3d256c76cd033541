"""An MCP event stream opened with ``Last-Event-ID`` opens anew, since none is resumable.

Resuming a stream (the client's ``GET`` with ``Last-Event-ID``, to have the events it
missed sent again) needs the events kept, an event store, which recalld's servers do not
have: they send no event ids, so no client of theirs has one to send. The MCP SDK
answered such a ``GET`` with nothing at all, which uvicorn turned into a plain-text 500
and an ERROR in the server's log, at the will of any client that sent the header. The
specification lets a server that keeps no events ignore it (servers *may* replay): the
stream is opened as any new one, and what was sent while the client was away is not
sent again (README, "MCP at `/mcp`").
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["without_resumption"]

_LAST_EVENT_ID = b"last-event-id"


def without_resumption(app: ASGIApp) -> ASGIApp:
    """``app`` (the SDK's endpoint, with no event store), reading no ``Last-Event-ID``."""

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            headers = [(name, value) for name, value in scope["headers"] if name != _LAST_EVENT_ID]
            if len(headers) != len(scope["headers"]):
                scope = {**scope, "headers": headers}
        await app(scope, receive, send)

    return served
