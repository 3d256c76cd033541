"""Streamed responses that stop when the token that opened them is revoked.

A token is checked once per request, but an MCP event stream (a 2025-era GET
stream, a 2026-07-28 ``subscriptions/listen``, a tool call answered as events)
outlives its request: without a second look, a stream opened before ``recalld
token revoke`` went on telling its holder when memory changed. Each event of such
a stream is let through only while the token is still active; after a
revocation the response is ended, and whatever the endpoint still sends on it is
dropped (it can no longer reach the client). A re-check the token store cannot
answer (a PostgreSQL restart) keeps the verdict of the last one: the stream is not
torn down mid-body for a blip, and what it carries is read from that same store.

A REST stream (``GET /v1/export``, JSON lines) outlived its token the same way: an export
started before ``recalld token revoke`` went on to its last memory. :func:`cut_when_revoked`
checks the token at its first chunk and every :data:`REST_CHECK_EVERY` after (an export
sends a chunk per memory), and once the token is revoked cuts the body without its end:
the client's read fails (curl: "transfer closed with outstanding read data remaining")
rather than taking a shortened export for a whole one. :func:`abort_response` closes the
connection so, with recalld's one WARNING line and no error of uvicorn's.

A client that stops reading without closing (a SIGSTOPped process, a hung reader) held
its response for good: once the socket's buffers were full, each write of an export or
an event stream waited for it, holding the request's share of its token and, for an
export, a worker thread. :class:`BoundedSend` disconnects a client that takes no byte
of its response for :data:`SEND_SECONDS` (as nginx's ``send_timeout``); a client that
reads, however slowly, is never cut.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld.adapters.http_connections import ABORT_EXTENSION
from recalld.errors import StorageError
from recalld.tokens import Caller, TokenRegistry

__all__ = [
    "PROGRESS_CHECKS",
    "REST_CHECK_EVERY",
    "SEND_SECONDS",
    "BoundedSend",
    "StreamCut",
    "abort_response",
    "cut_when_revoked",
    "end_when_revoked",
]

# How many chunks of a REST stream go between two checks of its token (one read each).
REST_CHECK_EVERY = 256

# How long a response may wait for its client to take a byte of it (nginx's send_timeout).
SEND_SECONDS = 60.0
# How often, within SEND_SECONDS, a waiting response looks at whether its client took some.
PROGRESS_CHECKS = 12

logger = logging.getLogger(__name__)


class BoundedSend:
    """Disconnect a client that takes nothing of its response for ``seconds`` (module
    docstring): the write is dropped, the connection reset, and what the app sends
    after is dropped too, while its next ``receive`` says the client is gone.

    The bound is on the client's progress, not on one write: uvicorn lets a write wait
    until the whole backlog is nearly sent (below 16 KiB), which for a large chunk and a
    slow reader (1 KiB/s) takes far longer than ``seconds`` while every second some of it
    is taken. On ``recalld serve``'s protocol the wait is watched every
    :data:`PROGRESS_CHECKS`-th of ``seconds``, and goes on as long as the client took some
    bytes since the last look; elsewhere (no such protocol) each write gets ``seconds``."""

    def __init__(self, app: ASGIApp, seconds: float = SEND_SECONDS) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        stalled = False

        async def bounded(message: Message) -> None:
            nonlocal stalled
            if stalled:
                return
            # Looked up at each write: the protocol may add it after the app started.
            connection = scope.get("extensions", {}).get(ABORT_EXTENSION, {})
            if not await self._client_takes(connection):
                stalled = True
            else:
                # The write does not wait now (its backlog was taken): the bound stays
                # for a protocol that says nothing of its progress.
                with anyio.move_on_after(self.seconds) as waited:
                    await send(message)
                stalled = waited.cancelled_caught
            if stalled:
                logger.warning(
                    "disconnected the client of %s %s: it took nothing of the response for"
                    " %g s (SEND_SECONDS)",
                    scope.get("method"),
                    scope.get("path"),
                    self.seconds,
                )
                abort_response(scope, reset=True)

        await self.app(scope, receive, bounded)

    async def _client_takes(self, connection: Mapping[str, Any]) -> bool:
        """Wait until a write to ``connection`` would not wait; whether it came to that
        (false: the client took no byte for ``seconds``)."""
        paused, drain, unsent = (connection.get(name) for name in ("paused", "drain", "unsent"))
        if not (callable(paused) and callable(drain) and callable(unsent)):
            return True
        last_progress = anyio.current_time()
        backlog = unsent()
        while paused():
            with anyio.move_on_after(self.seconds / PROGRESS_CHECKS):
                await drain()
            now, left = anyio.current_time(), unsent()
            if left < backlog:
                last_progress = now
            elif now - last_progress >= self.seconds:
                return False
            backlog = left
        return True


def end_when_revoked(send: Send, caller: Caller, tokens: TokenRegistry) -> Send:
    """``send``, ending a streamed response once ``caller``'s token is revoked.

    A trusted caller (no token) is never revoked: ``send`` comes back as it is. Only
    the chunks of a streamed body (``more_body``) are checked, one read each: a
    response in one piece is sent right after its request was authenticated.
    """
    token_id = caller.token_id
    if token_id is None:
        return send
    ended = False

    async def checked(message: Message) -> None:
        nonlocal ended
        if ended:
            return
        streamed = message["type"] == "http.response.body" and message.get("more_body", False)
        if streamed and not await run_in_threadpool(_still_active, tokens, token_id):
            ended = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send(message)

    return checked


class StreamCut(Exception):  # noqa: N818 - a signal between two layers, not an error
    """Raised out of ``send`` once a REST stream is cut, so that the endpoint stops: it went
    on reading its whole export (sending it nowhere), its client waiting for an end that
    would never come and its token's share held. The authentication layer, which wrapped
    ``send``, catches it; no one else may (review of pass c67)."""


def cut_when_revoked(scope: Scope, send: Send, caller: Caller, tokens: TokenRegistry) -> Send:
    """``send`` for a REST request, cutting its streamed body once ``caller``'s token is
    revoked (module docstring); ``/mcp``'s streams end cleanly instead (``_NamespaceGuard``
    wraps them in :func:`end_when_revoked`), and a trusted caller's are never cut."""
    token_id = caller.token_id
    if token_id is None or str(scope.get("path", "")).startswith("/mcp"):
        return send
    chunks = 0
    cut = False

    async def checked(message: Message) -> None:
        nonlocal chunks, cut
        if cut:
            raise StreamCut
        if message["type"] == "http.response.body" and message.get("more_body", False):
            chunks += 1
            due = (chunks - 1) % REST_CHECK_EVERY == 0
            if due and not await run_in_threadpool(_still_active, tokens, token_id):
                cut = True
                logger.warning(
                    "cut the stream of %s after %d chunks: token %s was revoked",
                    scope.get("path"),
                    chunks - 1,
                    token_id,
                )
                raise StreamCut
        await send(message)

    return checked


def abort_response(scope: Scope, *, reset: bool = False) -> None:
    """End the response of ``scope``'s request unfinished, after a :class:`StreamCut`: the
    protocol of ``recalld serve`` closes the connection without logging an error (its
    :data:`~recalld.adapters.http_connections.ABORT_EXTENSION`); any other server (a test
    client) is left to close it as it does for a response not completed. ``reset`` drops
    what the client has not read instead of flushing it first."""
    abort = scope.get("extensions", {}).get(ABORT_EXTENSION, {}).get("reset" if reset else "abort")
    if callable(abort):
        abort()


def _still_active(tokens: TokenRegistry, token_id: str) -> bool:
    """Whether the token may go on streaming: active, or not known to be revoked.

    Raising out of ``send`` would abort the response mid-body (the client sees a broken
    connection, a tool call loses its answer); a new request is refused with 503 anyway.
    """
    try:
        return tokens.is_active(token_id)
    except StorageError as error:
        logger.warning("could not re-check token %s; the stream goes on: %s", token_id, error)
        return True
