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
(:mod:`recalld.adapters.http_body`), but the body of a request answered before it was
read (a 404, a 401) is no app's: uvicorn stopped its keep-alive timer at that body's next
byte and started none, so one more byte held the connection for good. That rest of a
body has as long to arrive as a request head (nginx's ``lingering_time``, 30 s, bounds
the same wait); once it is whole, the connection is idle as after a response.

A request uvicorn cannot parse was answered ``400`` in plain text, "Invalid HTTP request
received.", the same for a malformed request line as for a header block over h11's
16 KiB limit, and never in the ``{"error": ...}`` shape of every other refusal:
:meth:`BoundedRequestHead.send_400_response` answers in that shape, ``431`` naming the
limit for a request head too large; for a request line naming ``/mcp`` (``recalld
serve``'s MCP endpoint), as the JSON-RPC error an MCP client reads.

A response the app will not complete (a REST export cut when its token is revoked,
:mod:`recalld.adapters.http_streams`) was left to uvicorn, which logged "ASGI callable
returned without completing response." at ERROR for a deliberate cut recalld had
already logged: each request's scope carries :data:`ABORT_EXTENSION`, a function that
closes the connection as uvicorn would (the client's read fails) and tells uvicorn the
response is over.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from typing import Any, ClassVar

import h11
from h11._connection import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE  # what uvicorn passes h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from recalld.adapters._network import KEEP_ALIVE_SECONDS

if sys.platform == "linux":
    import fcntl
    import termios

    # The ioctl naming a socket's bytes not acknowledged by its peer (SIOCOUTQ).
    _OUTQ: int | None = termios.TIOCOUTQ
else:  # pragma: no cover - the write buffer alone is measured there
    _OUTQ = None

__all__ = [
    "ABORT_EXTENSION",
    "REQUEST_HEAD_SECONDS",
    "BoundedMcpRequestHead",
    "BoundedRequestHead",
    "head_limit",
    "head_refusal",
    "probe_dead_peers",
    "unsent_bytes",
]

# The scope extension (``scope["extensions"]``, a dict as ASGI's are) whose ``abort``
# the app calls to end a response it will not complete (module docstring); its
# ``reset`` drops what the client did not read yet, and its ``paused``, ``drain`` and
# ``unsent`` say whether a write would wait, wait for it, and how much the client has
# not taken yet (http_streams.BoundedSend: it cuts a client that takes nothing).
ABORT_EXTENSION = "recalld.abort"

# How long a request head (request line and headers, a few hundred bytes) may take to
# arrive once it started: nginx's client_header_timeout is 60 s, a body's stall limit 30 s.
REQUEST_HEAD_SECONDS = 30.0
# A vanished peer (probe_dead_peers): probed after a minute idle, every 10 s, 6 times
# (dead within 2 minutes); a connection whose bytes go unacknowledged for 2 minutes.
PROBE_IDLE_SECONDS = 60
PROBE_INTERVAL_SECONDS = 10
PROBES = 6
UNACKNOWLEDGED_SECONDS = 120


class BoundedRequestHead(H11Protocol):
    """uvicorn's h11 protocol, closing a connection that holds no request (module docstring)."""

    idle_seconds: ClassVar[float] = KEEP_ALIVE_SECONDS
    head_seconds: ClassVar[float] = REQUEST_HEAD_SECONDS
    # Whether a request h11 cannot parse is refused as JSON-RPC (an MCP-only server).
    jsonrpc: ClassVar[bool] = False

    _deadline: asyncio.TimerHandle | None = None
    # Whether the deadline running is the one of a request head already started (or of
    # an answered request's body): more bytes of it must not restart it.
    _head_started = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the wait for the first byte of the first request."""
        super().connection_made(transport)
        probe_dead_peers(transport.get_extra_info("socket"))
        self._arm(self.idle_seconds, head_started=False)

    def data_received(self, data: bytes) -> None:
        """Feed the bytes; time the request head from its first byte until it is whole (and
        the rest of an answered request's body from its first byte after the answer)."""
        super().data_received(data)
        if self.transport.is_closing() or not self._holds_no_request():
            self._disarm()
        elif self._request_started():
            if not self._head_started:
                self._arm(self.head_seconds, head_started=True)
        else:
            # The bytes ended the body of a request answered already, and no byte of
            # another followed: idle as after a response (they stopped uvicorn's timer).
            self._arm(self.idle_seconds, head_started=False)

    def handle_events(self) -> None:
        """Hand each new request's scope the function that aborts its response."""
        before = self.cycle
        super().handle_events()
        cycle = self.cycle
        if cycle is not None and cycle is not before:
            # The request's task is scheduled, not started: the scope is still ours.
            extensions = cycle.scope.setdefault("extensions", {})
            extensions[ABORT_EXTENSION] = {
                "abort": lambda: _abort(cycle, reset=False),
                "reset": lambda: _abort(cycle, reset=True),
                "unsent": lambda: unsent_bytes(cycle.transport),
                "drain": cycle.flow.drain,
                "paused": lambda: bool(cycle.flow.write_paused and not cycle.disconnected),
            }

    def on_response_complete(self) -> None:
        """Between requests uvicorn's keep-alive timer closes an idle connection."""
        self._disarm()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """Refuse a request h11 could not parse in the JSON shape of every refusal (module
        docstring), then close the connection, as uvicorn does (``msg`` is its wording)."""
        # uvicorn calls this while it handles h11's RemoteProtocolError, whose status hint
        # is 431 for a head over the limit without its end (and 400 for the rest). What
        # waited unparsed was no measure: a malformed head whose body came with it has the
        # body waiting, and was told to send shorter headers (review of pass c67).
        error = sys.exc_info()[1]
        too_large = getattr(error, "error_status_hint", None) == 431
        limit = head_limit(self.config.h11_max_incomplete_event_size)
        jsonrpc = self.jsonrpc or _names_mcp(bytes(self.conn.trailing_data[0]))
        status, body = head_refusal(too_large, limit, jsonrpc=jsonrpc)
        headers = [
            (b"content-type", b"application/json"),
            (b"x-content-type-options", b"nosniff"),
            (b"cache-control", b"no-store"),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=status, headers=headers),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def _holds_no_request(self) -> bool:
        """No request is being served: none is whole yet (h11 holds what arrived of a head
        until it is), or the rest of the body of a request answered already is arriving."""
        theirs = self.conn.their_state
        if theirs is h11.IDLE:
            return True
        return theirs is h11.SEND_BODY and self.conn.our_state is h11.DONE

    def _request_started(self) -> bool:
        """Bytes wait that time out as a request head does: a part of one, or the rest of
        an answered request's body (:meth:`_holds_no_request` is true)."""
        return self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])

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
        if self._holds_no_request() and not self.transport.is_closing():
            self.transport.close()


def _abort(cycle: Any, *, reset: bool) -> None:
    """End ``cycle``'s response unfinished: the connection is closed, and uvicorn takes
    the response as ended by its client (it logs nothing, and the app's next ``receive``
    says so). What was sent is flushed first, unless ``reset``: for a client that stopped
    reading, a flush would wait for it as long as it likes."""
    cycle.disconnected = True
    if reset:
        cycle.transport.abort()
    elif not cycle.transport.is_closing():
        cycle.transport.close()
    cycle.message_event.set()


def unsent_bytes(transport: asyncio.BaseTransport) -> int:
    """How many bytes written to ``transport`` its peer has not taken yet: those in its
    buffer and, on Linux, those in the kernel's send queue not acknowledged (``SIOCOUTQ``;
    elsewhere the buffer alone, a coarser measure). It falls whenever the peer reads."""
    size = transport.get_write_buffer_size() if isinstance(transport, asyncio.WriteTransport) else 0
    sock = transport.get_extra_info("socket")
    if _OUTQ is None or sock is None or sock.fileno() < 0:
        return size
    try:
        queued = fcntl.ioctl(sock.fileno(), _OUTQ, b"\0" * 4)
    except OSError:  # a socket closed meanwhile: nothing more will be taken
        return size
    return size + int.from_bytes(queued, sys.byteorder, signed=True)


def probe_dead_peers(sock: socket.socket | None) -> None:
    """Have the kernel find a peer that vanished without closing (a dropped network, a
    machine switched off): probe an idle connection after :data:`PROBE_IDLE_SECONDS`,
    and give up on one whose sent bytes go unacknowledged for :data:`UNACKNOWLEDGED_SECONDS`.
    Without it such a connection (an MCP event stream, an export) lasted until TCP's
    own retries ran out, hours later. Options a platform lacks are left at its default."""
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    options = (
        ("TCP_KEEPIDLE", PROBE_IDLE_SECONDS),
        ("TCP_KEEPINTVL", PROBE_INTERVAL_SECONDS),
        ("TCP_KEEPCNT", PROBES),
        ("TCP_USER_TIMEOUT", UNACKNOWLEDGED_SECONDS * 1000),
    )
    for name, value in options:
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)


class BoundedMcpRequestHead(BoundedRequestHead):
    """:class:`BoundedRequestHead` for ``recalld mcp --transport http``, whose clients read
    a refusal as the SDK's own: a JSON-RPC error (``-32600``) naming the fault and limit."""

    jsonrpc: ClassVar[bool] = True


# Where `recalld serve` serves MCP (http_api.MCP_PATH): its refusals are JSON-RPC there.
_MCP_PATH = b"/mcp"


def _names_mcp(unparsed: bytes) -> bool:
    """Whether the request line at the start of ``unparsed`` (a head h11 could not parse)
    is for the MCP endpoint, whose clients read a refusal as the SDK's: JSON-RPC."""
    line = unparsed.split(b"\r\n", 1)[0]
    parts = line.split(b" ", 2)
    if len(parts) < 2:
        return False
    path = parts[1].split(b"?", 1)[0]
    return path == _MCP_PATH or path.startswith(_MCP_PATH + b"/")


def head_limit(configured: int | None = None) -> int:
    """How many bytes a request head may take (h11's limit, as uvicorn passes it)."""
    return configured or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE


def head_refusal(too_large: bool, limit: int, *, jsonrpc: bool = False) -> tuple[int, bytes]:
    """The status and JSON body refusing a request h11 could not parse: ``too_large``, a
    request head over ``limit`` bytes without its end; as a JSON-RPC error if ``jsonrpc``
    (the shape the MCP SDK answers in, ``id`` null: no request was read)."""
    if too_large:
        status, type_, field = 431, "request_header_fields_too_large", "headers"
        message = (
            f"the request head (request line and headers) is larger than {limit} bytes, the"
            " limit; send shorter headers (a token, a namespace and a few others fit)"
        )
    else:
        status, type_, field = 400, "bad_request", "request"
        message = (
            "is not a valid HTTP/1.1 request (its request line or a header is malformed);"
            " nothing was done"
        )
    if jsonrpc:
        refusal = {"code": -32600, "message": f"{field}: {message}"}
        return status, json.dumps({"jsonrpc": "2.0", "id": None, "error": refusal}).encode()
    error = {"type": type_, "field": field, "message": message}
    return status, json.dumps({"error": error}).encode()
