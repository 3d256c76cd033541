"""A graceful stop that still answers the MCP requests in flight.

``sse-starlette`` (the MCP SDK's event streams) ends every open event stream the
moment uvicorn is told to exit (SIGTERM). That is what an idle stream needs (a
2025-era GET stream, a ``subscriptions/listen``: they would otherwise hold the
server up for ever), but a ``POST`` to ``/mcp`` is answered as an event stream
too: a tool call in flight at SIGTERM went on, its write was committed, and its
client got ``200`` with an empty body, no result and no error, while a REST
request in flight was answered before the server stopped.

:class:`AnswerInFlight` lets ``recalld serve`` (and ``recalld mcp --transport
http``) stop as REST does: the event streams are ended only once every ``POST``
in flight at ``/mcp`` has been answered (a ``subscriptions/listen``, which never
ends by itself, is not waited for), and at the latest :data:`GRACE_SECONDS` after
the signal. A 2026-07-28 ``subscriptions/listen`` is no sse-starlette stream (the
SDK writes it itself) and never heard the signal: the server waited for its client
to leave, for ever; it is ended at the same moment (its client sees the subscription
lost, as at any stop of the server, and may listen again elsewhere).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from sse_starlette.sse import AppStatus
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld.adapters.mcp_requests import ENDLESS_METHODS, buffered, request_id

if TYPE_CHECKING:
    from recalld.intentions.scheduler import Scheduler
    from recalld.service import MemoryService

__all__ = ["GRACE_SECONDS", "AnswerInFlight", "answering_server"]

logger = logging.getLogger(__name__)

# The longest a stop waits for the MCP requests in flight before ending every stream.
GRACE_SECONDS = 30.0


def _stopping(answered: str | int | None) -> JSONResponse:
    """The answer to a listen that comes after the streams were ended (the server is
    going away), carrying its request's id as JSON-RPC asks (null only if unreadable)."""
    error = {"code": -32600, "message": "the server is stopping"}
    return JSONResponse({"jsonrpc": "2.0", "id": answered, "error": error}, status_code=503)


class AnswerInFlight:
    """Counts the ``POST`` requests in flight at ``/mcp``; :meth:`stop` ends the event
    streams once they are all answered (module docstring)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.stopping = False
        self.ended = False
        self.endless: set[anyio.CancelScope] = set()  # the listens open now

    def take_over(self) -> None:
        """Keep sse-starlette from ending the streams by itself at the exit signal (this
        process serves one app, so the switch, process-wide, is this server's)."""
        AppStatus.enable_automatic_graceful_drain = False  # what its untyped switch does

    def stop(self) -> None:
        """The server was told to exit: end the streams now if nothing is in flight, else
        once it is, or after :data:`GRACE_SECONDS` at the latest."""
        loop = asyncio.get_running_loop()
        # Called from a signal handler: act from the event loop, not in whatever it was doing.
        loop.call_soon_threadsafe(self._stop, loop)

    def _stop(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.stopping:
            return  # a second signal: uvicorn's own (a second Ctrl-C forces the exit)
        self.stopping = True
        if self.in_flight:
            logger.warning("stopping: answering %d MCP request(s) in flight first", self.in_flight)
            loop.call_later(GRACE_SECONDS, self._end_streams)
        self._release()

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """``app`` (the ``/mcp`` endpoint), counting each ``POST`` while it is served."""
        return _Counted(app, self)

    async def serve(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request with ``app``, counted while in flight when it is a ``POST``
        that is answered (not one that asks for an endless stream)."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        # A body over the cap is cut short here: then it asks for no endless stream.
        read, body, _ = await buffered(receive)

        async def replay() -> Message:
            return read.popleft() if read else await receive()

        if _is_endless(body):
            await self._serve_endless(app, scope, replay, send, request_id(body))
            return
        self.in_flight += 1
        try:
            await app(scope, replay, send)
        finally:
            self.in_flight -= 1
            self._release()

    async def _serve_endless(
        self, app: ASGIApp, scope: Scope, receive: Receive, send: Send, answered: str | int | None
    ) -> None:
        """Serve a ``subscriptions/listen`` until its client leaves or the streams end; an
        answer begun is then closed, one not begun is a 503."""
        started = finished = False

        async def watched(message: Message) -> None:
            nonlocal started, finished
            started = started or message["type"] == "http.response.start"
            finished = message["type"] == "http.response.body" and not message.get("more_body")
            await send(message)

        with anyio.CancelScope() as listening:
            if self.ended:
                listening.cancel()
            self.endless.add(listening)
            try:
                await app(scope, receive, watched)
            finally:
                self.endless.discard(listening)
        if listening.cancelled_caught and not finished:
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await _stopping(answered)(scope, receive, send)

    def _release(self) -> None:
        if self.stopping and not self.in_flight:
            self._end_streams()

    def _end_streams(self) -> None:
        self.ended = True
        AppStatus.should_exit = True
        for listening in list(self.endless):
            listening.cancel()


def answering_server(
    config: uvicorn.Config, answering: AnswerInFlight, *, stop_on: threading.Event | None = None
) -> uvicorn.Server:
    """A uvicorn server for ``config`` whose exit signal goes to ``answering`` first (the
    app of ``config`` must be wrapped by :meth:`AnswerInFlight.wrap`).

    ``stop_on`` set (the reminder scheduler gave up on a database replaced under the
    process), it stops as on SIGTERM, the requests in flight answered first, and its
    caller exits 1: it answered 503 for ever, where ``recalld worker`` exits, so a
    supervisor never started it on the restored file (review of pass c68). Not by a
    signal: uvicorn raises the one it caught again once stopped, and a process that
    SIGTERM ended counts as a clean stop (systemd's ``Restart=on-failure``)."""

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            answering.stop()
            super().handle_exit(sig, frame)

        async def on_tick(self, counter: int) -> bool:
            # Every 0.1 s, in the event loop (answering.stop() needs it).
            if stop_on is not None and stop_on.is_set() and not self.should_exit:
                answering.stop()
                self.should_exit = True
            return await super().on_tick(counter)

    answering.take_over()
    return Server(config)


def _is_endless(body: bytes) -> bool:
    """Whether ``body`` asks for a stream that lasts until the client leaves."""
    try:
        decoded: Any = json.loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(decoded, dict) and decoded.get("method") in ENDLESS_METHODS


class _Counted:
    """An ASGI app object, not a function: Starlette serves a function endpoint as a
    GET-only request handler, an object as the raw ASGI app it is."""

    def __init__(self, app: ASGIApp, counter: AnswerInFlight) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.counter.serve(self.app, scope, receive, send)


def replaced_under(service: MemoryService) -> threading.Event | None:
    """Set once the service's reminder scheduler stopped on a database replaced under the
    process (every server runs one; it looks every ``RECALLD_SCHEDULER_POLL_SECONDS``)."""
    scheduler = service.intentions.scheduler
    return None if scheduler is None else scheduler.gave_up


def exit_if_replaced(scheduler: Scheduler | None) -> None:
    """Raise what stopped ``scheduler`` (the service's, taken before it closed, which lets
    it go), if anything did: the CLI exits 1."""
    if scheduler is not None and scheduler.stopped_by is not None:
        raise scheduler.stopped_by
