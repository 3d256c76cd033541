"""HTTP connections that cannot be held open without a request: the protocol both servers run.

uvicorn's keep-alive timer runs only between requests, after a response: a connection
that was opened and sent nothing, or sent the start of a request head and then nothing
more (or a byte now and then), was held for as long as the client liked, one socket
each, before any token was checked. Enough of them (a few thousand, from one client)
took every file descriptor of the server. :class:`BoundedRequestHead` closes a new
connection that sends no byte within :data:`~recalld.adapters._network.KEEP_ALIVE_SECONDS`
(as an idle one after a response), and one whose request head is not complete
:data:`REQUEST_HEAD_SECONDS` after its first byte arrived (bytes that trickle in do not
extend it). A request body that stops arriving is the app's to refuse
(:mod:`recalld.adapters.http_body`).
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from recalld.adapters._network import KEEP_ALIVE_SECONDS

__all__ = ["REQUEST_HEAD_SECONDS", "BoundedRequestHead"]

# How long a request head (request line and headers, a few hundred bytes) may take to
# arrive once it started: nginx's client_header_timeout is 60 s, a body's stall limit 30 s.
REQUEST_HEAD_SECONDS = 30.0


class BoundedRequestHead(H11Protocol):
    """uvicorn's h11 protocol, closing a connection that holds no request (module docstring)."""

    idle_seconds: ClassVar[float] = KEEP_ALIVE_SECONDS
    head_seconds: ClassVar[float] = REQUEST_HEAD_SECONDS

    _deadline: asyncio.TimerHandle | None = None
    # Whether the deadline running is the one of a request head already started: more
    # bytes of that head must not restart it.
    _head_started = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the wait for the first byte of the first request."""
        super().connection_made(transport)
        self._arm(self.idle_seconds, head_started=False)

    def data_received(self, data: bytes) -> None:
        """Feed the bytes; time the request head from its first byte until it is whole."""
        super().data_received(data)
        if self.transport.is_closing() or not self._waiting_for_head():
            self._disarm()
        elif not self._head_started:
            self._arm(self.head_seconds, head_started=True)

    def on_response_complete(self) -> None:
        """Between requests uvicorn's keep-alive timer closes an idle connection."""
        self._disarm()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def _waiting_for_head(self) -> bool:
        """No request head is whole yet (h11 holds what arrived of one until it is)."""
        return self.conn.their_state is h11.IDLE

    def _arm(self, seconds: float, *, head_started: bool) -> None:
        self._disarm()
        self._head_started = head_started
        self._deadline = self.loop.call_later(seconds, self._overdue)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._head_started = False

    def _overdue(self) -> None:
        self._deadline = None
        if self._waiting_for_head() and not self.transport.is_closing():
            self.transport.close()
