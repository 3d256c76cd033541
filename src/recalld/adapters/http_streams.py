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
"""

from __future__ import annotations

import logging

from starlette.concurrency import run_in_threadpool
from starlette.types import Message, Send

from recalld.errors import StorageError
from recalld.tokens import Caller, TokenRegistry

__all__ = ["end_when_revoked"]

logger = logging.getLogger(__name__)


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
