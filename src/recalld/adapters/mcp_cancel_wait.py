"""A tool call sent after a cancelled one waits (a while) for it to end.

A cancelled call runs to its end in its worker thread, unanswered: a ``list`` or
``stats`` the client sent right after the cancel, to learn whether the write was done,
ran beside it and read the database from before it (count 0, then 400), so reading
back did not tell (adversarial pass e69). A later call of the same client therefore
waits for the calls it cancelled to end, but at most :data:`CANCELLED_WAIT_SECONDS`: a
cancelled ten-minute conversation import, or a call stuck behind a lock, must not leave
every later call of its client unanswered. Past that the call runs beside it, as it
would have, and the server logs a warning naming the call still running; README says
to read back again later then (review of pass e69).

A client is the process's one client over stdio (whose sessionless 2026-07-28 requests
each have a connection of their own), and an HTTP session's ``Connection`` (one per
session, however many HTTP connections its requests come on); a sessionless HTTP
request has a connection of its own, so it waits for nothing. The waiting call holds
nothing the cancelled one needs (no thread, lock or transaction: only its place in its
token's share), so the wait cannot deadlock.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext

__all__ = ["CANCELLED_WAIT_SECONDS", "RunningCalls", "after_cancelled_calls"]

logger = logging.getLogger(__name__)

# How long a tool call waits for the calls its client cancelled to end.
CANCELLED_WAIT_SECONDS = 10.0

# A client's running tool calls: each one's tool, cancel flag, and an event set once it ended.
Calls = dict[object, tuple[str, anyio.Event, anyio.Event]]


class RunningCalls:
    """The tool calls running for each client of one server (module docstring); an HTTP
    session's are weakly held: a session gone takes its calls with it."""

    def __init__(self) -> None:
        self.process: Calls = {}
        self.sessions: weakref.WeakKeyDictionary[Any, Calls] = weakref.WeakKeyDictionary()

    def of(self, context: ServerRequestContext[Any]) -> Calls | None:
        """The calls of ``context``'s client (none: the SDK no longer names its connection)."""
        if context.request is None:
            return self.process
        connection = getattr(context.session, "_connection", None)
        return None if connection is None else self.sessions.setdefault(connection, {})


@asynccontextmanager
async def after_cancelled_calls(
    context: ServerRequestContext[Any], calls: RunningCalls, tool: str
) -> AsyncIterator[None]:
    """Run a tool call once the calls its client cancelled have ended, or
    :data:`CANCELLED_WAIT_SECONDS` passed, and record it as running while it runs.

    The SDK's private ``ServerSession._connection`` names an HTTP session's connection
    and ``_request_outbound.cancel_requested`` the cancel (both pinned by
    test_mcp_sdk_session_pin); without them, calls do not wait."""
    dispatch = getattr(context.session, "_request_outbound", None)
    requested = getattr(dispatch, "cancel_requested", None)
    running = calls.of(context)
    if running is None or not isinstance(requested, anyio.Event):
        yield
        return
    cancelled = [(name, ended) for name, flag, ended in running.values() if flag.is_set()]
    if cancelled:
        with anyio.move_on_after(CANCELLED_WAIT_SECONDS):
            for _name, ended in cancelled:
                await ended.wait()
        still = [name for name, ended in cancelled if not ended.is_set()]
        if still:
            logger.warning(
                "tools/call %s (request %r) runs beside %d cancelled call(s) of its client"
                " still running after %g s (%s): it may not read what they write",
                tool,
                context.request_id,
                len(still),
                CANCELLED_WAIT_SECONDS,
                ", ".join(still),
            )
    key, ended = object(), anyio.Event()
    running[key] = (tool, requested, ended)
    try:
        yield
    finally:
        del running[key]
        ended.set()
