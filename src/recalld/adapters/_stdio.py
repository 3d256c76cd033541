"""The MCP server's stdio transport, stopped cleanly by a stop signal (SIGTERM, SIGINT,
SIGHUP) or a client that hangs up.

The SDK reads stdin in an AnyIO worker thread that a cancellation cannot
interrupt, so a SIGTERM would wait for the client's next line. Here the lines
are read by a daemon thread and handed to the event loop, so a signal cancels
the server at once: its lifespan ends, the service closes and the write-ahead
log is checkpointed. A client that closes the pipe before reading every
answer ends the server quietly (no traceback, nothing more on stdout).

A line that is not a JSON-RPC message (not JSON, a lone surrogate escape, JSON
nested past what the SDK reads, a request whose id is no string or integer, which
the SDK takes for a notification) is answered here, as JSON-RPC says: ``-32700``
when it is not JSON, ``-32600`` with the request's id when it is JSON but not a
valid message. The SDK would drop it, and the client would wait for an answer
that never comes. A line that is not UTF-8 is ``-32700`` too (JSON text is UTF-8,
and the HTTP transport refuses it the same way): decoding it with replacement
characters would store the bytes as ``U+FFFD``, something the client never sent.
A JSON-RPC batch (an array of messages, which protocol 2025-03-26 has every server
receive, and which this server negotiates) is read as its messages in order, and
answered, as JSON-RPC says, with one array of their answers written once all are done
(:mod:`recalld.adapters._stdio_batches`): the SDK refused the whole array as no message. Only on
a session that negotiated 2025-03-26: protocol 2025-06-18 removed batches, so on any
other session (and before ``initialize`` is answered) a batch is refused (``-32600``).
A UTF-8 byte order mark before the first line is ignored (RFC 8259 allows it, and
.NET's UTF-8 writers start with one): the first message was refused as not JSON.
A line longer than :data:`MAX_LINE_BYTES` is refused (``-32600``, id null) and read past
without being kept: it was read whole into memory first (a 200 MB line took 200 MB and
more to parse).

A client that closes stdin after its last request (``printf '...' | recalld mcp``, or
an SDK client shutting down) is still answered: the end of input waits until every
request read has been answered (a cancelled one and a ``subscriptions/listen``, which
lasts until the client leaves, excepted), for at most
:data:`ANSWER_GRACE_SECONDS`, as long as an HTTP stop waits. The SDK cancelled the requests
in flight at the end of input instead, so a tool call whose write was committed was
never acknowledged, and a script piping its requests got no answer but the first.
A stop signal after the client closed stdin stops at once: an MCP client signals when
it has given up waiting for the server to exit, and kills it soon after.
"""

from __future__ import annotations

import codecs
import fcntl
import logging
import os
import select
import signal
import sys
import threading
from collections import Counter, deque
from types import TracebackType
from typing import Any, BinaryIO, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

from recalld.adapters._stdio_batches import Batch, Batches
from recalld.adapters.mcp_requests import (
    ENDLESS_METHODS,
    batch_messages,
    duplicate_key,
    id_problem,
    refusal,
    refusal_reason,
    request_id,
)
from recalld.context.signals import MAX_MEDIA_BYTES

__all__ = ["run_stdio"]

logger = logging.getLogger(__name__)

# SIGINT too: Ctrl-C, and what an MCP host may send to stop its server, answers what is
# owed as SIGTERM does (Python's KeyboardInterrupt ended the server with a committed
# write unanswered).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# The longest the end of input waits for the answers still owed (the HTTP transport's
# stop waits as long: recalld.adapters.http_shutdown.GRACE_SECONDS).
ANSWER_GRACE_SECONDS = 30.0
# The longest line (one message) read from stdin, without its newline: room for the
# largest message a tool takes, an image and an audio clip each at MAX_MEDIA_BYTES in
# base64 (stdio takes media inline; a line cap of 16 MiB refused a 13 MiB image the tool
# accepts), and 8 MiB for the rest of it. A longer line is refused, and never held whole.
MAX_LINE_BYTES = 2 * (MAX_MEDIA_BYTES * 4 // 3 + 4) + 8 * 1024 * 1024
# What is read at a time past the end of a line too long to keep.
_SKIP_CHUNK_BYTES = 1024 * 1024
# The one protocol version with JSON-RPC batches (2025-06-18 removed them).
BATCH_PROTOCOL = "2025-03-26"


def undecodable(error: UnicodeDecodeError) -> types.JSONRPCError:
    """The JSON-RPC answer to a line that is not UTF-8 (no id can be read from it)."""
    byte = error.object[error.start]
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(
            code=types.PARSE_ERROR,
            message=f"Parse error: the line is not UTF-8 (byte 0x{byte:02x} at {error.start})",
        ),
    )


class _TooLong:
    """A line longer than :data:`MAX_LINE_BYTES` (``size`` bytes, or more if the input
    ended first), read past and not kept."""

    def __init__(self, size: int) -> None:
        self.size = size

    def answer(self) -> types.JSONRPCError:
        """The JSON-RPC answer to it: invalid request, id null (nothing of it was read)."""
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=types.ErrorData(
                code=types.INVALID_REQUEST,
                message=(
                    f"Invalid request: the line is {self.size} bytes, over the limit of "
                    f"{MAX_LINE_BYTES} bytes for one message on stdio; nothing in it was read"
                ),
            ),
        )


def _unread(message: str) -> types.JSONRPCError | None:
    """The answer to a request of a batch left unread by a stop signal (None for a
    message of it that is no request with an id: nothing is owed to it)."""
    unread = request_id(message.encode())
    if unread is None:
        return None
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=unread,
        error=types.ErrorData(
            code=types.INVALID_REQUEST,
            message="the server is stopping: this request of the batch was not run",
        ),
    )


class _Unanswered:
    """The requests read from the client and not answered yet, by id (a reused id counts
    once per request), so that the end of input can wait for their answers."""

    def __init__(self) -> None:
        self._waiting: Counter[str | int] = Counter()
        self._settled = anyio.Event()
        self._settled.set()

    def expect(self, request_id: str | int) -> None:
        """A request with ``request_id`` was read: its answer is owed."""
        self._waiting[coerce_request_id(request_id)] += 1
        if self._settled.is_set():  # nobody waits on a set event: a new one for the new debt
            self._settled = anyio.Event()

    def settle(self, request_id: str | int) -> None:
        """A request with ``request_id`` was answered, or cancelled by the client (the
        SDK never answers a cancelled request); an id owed nothing is ignored."""
        key = coerce_request_id(request_id)
        if self._waiting[key] > 1:
            self._waiting[key] -= 1
        else:
            self._waiting.pop(key, None)
        if not self._waiting:
            self._settled.set()

    def count(self, request_id: str | int) -> int:
        """How many requests with ``request_id`` are owed an answer."""
        return self._waiting[coerce_request_id(request_id)]

    def owed(self) -> list[str | int]:
        """The ids still owed an answer."""
        return sorted(self._waiting, key=str)

    async def wait(self, timeout: float) -> bool:
        """Wait until every request read is answered; False if ``timeout`` passed first."""
        with anyio.move_on_after(timeout):
            await self._settled.wait()
        return not self._waiting


class _Negotiation:
    """The protocol version the session negotiated, as the answer to its ``initialize``
    says (a batch is read only on a 2025-03-26 session)."""

    def __init__(self) -> None:
        self.version: str | None = None
        self._pending: set[str | int] = set()
        self._answered = anyio.Event()
        self._answered.set()

    def asked(self, request_id: str | int) -> None:
        """An ``initialize`` with ``request_id`` was read: its answer says the version."""
        self._pending.add(coerce_request_id(request_id))
        if self._answered.is_set():
            self._answered = anyio.Event()

    def answered(self, request_id: str | int, result: Any) -> None:
        """The answer to ``request_id`` was written (``result`` None for an error)."""
        key = coerce_request_id(request_id)
        if key not in self._pending:
            return
        self._pending.discard(key)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if self.version is None and isinstance(version, str):  # a second one is refused
            self.version = version
        if not self._pending:
            self._answered.set()

    async def settled_version(self, timeout: float) -> str | None:
        """The negotiated version, once every ``initialize`` read is answered (a client
        may write a batch right behind its ``initialize``); None if there is none."""
        with anyio.move_on_after(timeout):
            await self._answered.wait()
        return self.version


class _CountingWrites:
    """The SDK's write stream, settling each request in ``unanswered`` as it is answered
    (and noting the protocol version an ``initialize`` answer gives in ``negotiation``);
    the answers to a batch's requests are held by ``batches`` and go out as one array."""

    def __init__(
        self, inner: Any, unanswered: _Unanswered, negotiation: _Negotiation, batches: Batches
    ) -> None:
        self._inner = inner
        self._unanswered = unanswered
        self._negotiation = negotiation
        self._batches = batches

    async def send(self, item: SessionMessage, /) -> None:
        """Send ``item``; an answer (a result or an error with an id) settles its request."""
        try:
            if not await self._batches.hold(item.message, self._inner.send):
                await self._inner.send(item)
        finally:
            message = item.message
            answered = isinstance(message, types.JSONRPCResponse | types.JSONRPCError)
            request_id = getattr(message, "id", None) if answered else None
            if request_id is not None:
                self._unanswered.settle(request_id)
                result = message.result if isinstance(message, types.JSONRPCResponse) else None
                self._negotiation.answered(request_id, result)

    async def aclose(self) -> None:
        """Close the stream beneath."""
        await self._inner.aclose()

    async def __aenter__(self) -> _CountingWrites:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


class _StdinLines:
    """The client's valid messages, read by a daemon thread (an async iterator of text
    lines); a line that is not one is answered through ``refused`` instead."""

    def __init__(self, handle: BinaryIO) -> None:
        self._handle = handle
        # A line arrives as text, or as why it is not UTF-8 or too long to read; None:
        # the client hung up.
        self._send, self._receive = anyio.create_memory_object_stream[
            str | UnicodeDecodeError | _TooLong | None
        ](16)
        self._started = False
        self.refused: MemoryObjectSendStream[SessionMessage] | None = None
        self.unanswered = _Unanswered()
        self.negotiation = _Negotiation()
        self.stopping = False
        self.ended = False  # the client closed stdin
        self._reading: anyio.CancelScope | None = None
        self._batched: deque[str] = deque()  # the messages of a batch not yet read
        self.batches = Batches()
        self._batch: Batch | None = None  # the batch whose messages are being read

    def stop(self) -> None:
        """Read no more lines (a stop signal): the input ends once every request read
        has been answered, as when the client closes stdin."""
        self.stopping = True
        if self._reading is not None:
            self._reading.cancel()

    def hung_up(self) -> bool:
        """Whether the client closed its end of the input (a stop signal then stops at
        once: the client has given up waiting for the answers, see :func:`run_stdio`)."""
        if self.ended:
            return True
        try:  # the reader thread may not have met the end yet: ask the pipe itself
            poller = select.poll()
            poller.register(self._handle.fileno(), select.POLLIN)
            events = poller.poll(0)
        except (OSError, ValueError):  # no pollable descriptor: only the read end tells
            return False
        return any(event & select.POLLHUP for _, event in events)

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        if not self._started:
            self._started = True
            token = anyio.lowlevel.current_token()
            threading.Thread(
                target=self._read, args=(token,), name="recalld-stdin", daemon=True
            ).start()
        while True:
            line: str | UnicodeDecodeError | _TooLong | None = None
            if self._batch is not None and (self.stopping or not self._batched):
                # Its last message was handed on (or a stop signal leaves the rest unread,
                # each request of it answered so in the array, which JSON-RPC has hold an
                # answer to every request of the batch): the batch is whole, its array
                # written once its answers are in.
                batch, self._batch = self._batch, None
                batch.answers.extend(filter(None, map(_unread, self._batched)))
                self._batched.clear()
                batch.read = True
                await self._flush(batch)
            in_batch = bool(self._batched)
            if in_batch and not self.stopping:
                line = self._batched.popleft()
            elif not self.stopping:
                with anyio.CancelScope() as self._reading:
                    line = await self._receive.receive()
                self._reading = None
            if line is None or self.stopping:  # the client hung up, or a stop signal
                self.ended = self.ended or line is None
                await self._answer_before_ending()
                raise StopAsyncIteration
            if isinstance(line, _TooLong):
                logger.warning("refused a line of %s bytes (limit %s)", line.size, MAX_LINE_BYTES)
                if self.refused is not None:
                    await self.refused.send(SessionMessage(line.answer()))
                continue
            if isinstance(line, UnicodeDecodeError):
                logger.warning("refused a line that is not UTF-8: %s", line)
                if self.refused is not None:
                    await self.refused.send(SessionMessage(undecodable(line)))
                continue
            if not line.strip() or self.refused is None:
                return line
            if not in_batch and await self._split_batch(line):
                continue  # (an array inside a batch is no message: refused below)
            try:
                twice = duplicate_key(line)  # (in a batch: this message of it only)
                if twice is not None:
                    raise ValueError(twice)
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                # A "notification" with an id (true, 1.5, null) is a request the SDK
                # would never answer, so the client would wait forever for its reply.
                problem = (
                    id_problem(line) if isinstance(message, types.JSONRPCNotification) else None
                )
                if problem is not None:
                    raise ValueError(problem)
            except Exception as error:  # noqa: BLE001 - any failure the SDK's own read meets
                reason = refusal_reason(error)
                logger.warning("refused a line that is not a JSON-RPC message: %s", reason)
                if in_batch and self._batch is not None:  # answered in the batch's array
                    self._batch.answers.append(refusal(line, error))
                else:
                    await self.refused.send(SessionMessage(refusal(line, error)))
                continue
            reused = self._reused_id(message, self._batch if in_batch else None)
            if reused is not None:
                logger.warning("refused a request reusing an id: %s", reused.error.message)
                if in_batch and self._batch is not None:
                    self._batch.answers.append(reused)
                else:  # (straight out: through the write stream it would join the batch)
                    await self.refused.send(SessionMessage(reused))
                continue
            cancelled = self._track(message, self._batch if in_batch else None)
            if cancelled is not None:
                await self._flush(cancelled)
            return line

    async def _flush(self, batch: Batch) -> None:
        """Write ``batch``'s array if every answer of it is in."""
        if self.refused is not None:
            await self.batches.flush(batch, self.refused.send)

    async def _split_batch(self, line: str) -> bool:
        """Queue the messages of ``line`` if it is a JSON-RPC batch (a non-empty array),
        each to be read as a line of its own, on a 2025-03-26 session; refuse it on any
        other (module docstring). True if the line was taken care of."""
        if not line.lstrip().startswith("["):
            return False
        # None for no JSON (refused as the line it is), and for an empty batch (refused
        # as an invalid request, as JSON-RPC says).
        messages = batch_messages(line)
        if messages is None:
            return False
        version = await self.negotiation.settled_version(ANSWER_GRACE_SECONDS)
        if version != BATCH_PROTOCOL:
            session = f"protocol {version}" if version else "a session not initialized"
            reason = (
                f"a batch (JSON array) is read only on a protocol {BATCH_PROTOCOL} session, "
                f"not on {session}: send each message on a line of its own"
            )
            logger.warning("refused a line that is not a JSON-RPC message: %s", reason)
            if self.refused is not None:
                await self.refused.send(SessionMessage(refusal(line, ValueError(reason))))
            return True
        self._batch = self.batches.start()
        self._batched.extend(messages)
        return True

    def _reused_id(
        self, message: types.JSONRPCMessage, batch: Batch | None
    ) -> types.JSONRPCError | None:
        """The refusal of a request (in ``batch`` if it came in one) reusing the id of a
        request not yet answered when one of the two is in a batch and the other is not
        in the same: an answer carries only the id, so it would be written in the wrong
        place (:mod:`recalld.adapters._stdio_batches`); None when nothing is wrong."""
        if not isinstance(message, types.JSONRPCRequest):
            return None
        owner = self.batches.owner(message.id)
        if batch is None:  # (two requests outside batches sharing an id are each answered)
            reused = owner is not None
        else:
            elsewhere = self.unanswered.count(message.id) - batch.owing(message.id)
            reused = (owner is not None and owner is not batch) or elsewhere > 0
        if not reused:
            return None
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=message.id,
            error=types.ErrorData(
                code=types.INVALID_REQUEST,
                message=(
                    f"Invalid request: id {message.id!r} is the id of a request not answered "
                    "yet (MCP: a request id is never reused in a session); send it with "
                    "another id"
                ),
                data={"field": "id"},
            ),
        )

    def _track(self, message: types.JSONRPCMessage, batch: Batch | None) -> Batch | None:
        """Owe ``message`` an answer if it is a request (in ``batch``'s array if it came
        in one); a cancellation owes nothing more: the batch that owed the cancelled
        request is returned, to be written if that was its last answer."""
        if isinstance(message, types.JSONRPCRequest):
            # A subscriptions/listen lasts until the client leaves: nothing to wait for.
            if message.method not in ENDLESS_METHODS:
                self.unanswered.expect(message.id)
            # But its answer goes in its batch's array: a batch is read only on a
            # 2025-03-26 session, where the 2026-07-28 listen is refused at once
            # (-32601); that answer went out alone, beside the array.
            if batch is not None:
                batch.owe(message.id)
            if message.method == "initialize":
                self.negotiation.asked(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):
            cancelled = message.params.get("requestId")
            if isinstance(cancelled, str | int) and not isinstance(cancelled, bool):
                self.unanswered.settle(cancelled)
                return self.batches.cancel(cancelled)
        return None

    async def _answer_before_ending(self) -> None:
        """At the end of input, wait (bounded) for the answers still owed (module docstring)."""
        if not await self.unanswered.wait(ANSWER_GRACE_SECONDS):
            logger.warning(
                "stdin closed; stopping after %s s without answering requests %s",
                ANSWER_GRACE_SECONDS,
                ", ".join(map(repr, self.unanswered.owed()[:10])),
            )

    def _skip_line(self) -> int:
        """Read past the rest of a line too long to keep; how many bytes that was (its
        newline not counted)."""
        skipped = 0
        while chunk := self._handle.readline(_SKIP_CHUNK_BYTES):
            if chunk.endswith(b"\n"):
                return skipped + len(chunk) - 1
            skipped += len(chunk)
        return skipped

    def _read(self, token: anyio.lowlevel.EventLoopToken) -> None:
        try:
            first = True
            while raw := self._handle.readline(MAX_LINE_BYTES + 1):
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    too_long = _TooLong(len(raw) + self._skip_line())
                    anyio.from_thread.run(self._send.send, too_long, token=token)
                    continue
                if first:
                    # A byte order mark before the first message (what .NET's UTF-8
                    # writers put first) is not JSON; RFC 8259 lets a reader ignore it.
                    raw, first = raw.removeprefix(codecs.BOM_UTF8), False
                line: str | UnicodeDecodeError
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    line = error
                anyio.from_thread.run(self._send.send, line, token=token)
            anyio.from_thread.run(self._send.send, None, token=token)
        except Exception:  # noqa: BLE001 - the loop is gone or the pipe broke: stop reading
            return


def _claim_stdin() -> BinaryIO:
    """Read the protocol from a private copy of fd 0 and point fd 0 at /dev/null, so that
    nothing else in the process (a child, a library) can swallow protocol bytes."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return os.fdopen(private, "rb")


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on stdin/stdout until the client hangs up or a stop signal arrives."""

    async def serve() -> None:
        lines = _StdinLines(_claim_stdin())
        async with anyio.create_task_group() as tasks:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(*_heeded(STOP_SIGNALS)) as signals:
                    async for received in signals:
                        logger.info("received %s: stopping", signal.Signals(received).name)
                        # A second signal stops at once, and so does one after the client
                        # closed stdin: an MCP client (the Python SDK's stdio_client after
                        # 2 s) signals when it gave up waiting for the server to exit, and
                        # kills it 2 s later, before the lifespan could close the service.
                        if lines.stopping or lines.hung_up():
                            tasks.cancel_scope.cancel()
                            return
                        # Answer the requests in flight first (their writes may be
                        # committed), as the HTTP transport's stop does; then stop anyway.
                        lines.stop()
                        tasks.start_soon(stop_after_grace)

            async def stop_after_grace() -> None:
                await anyio.sleep(ANSWER_GRACE_SECONDS + 1)
                tasks.cancel_scope.cancel()

            tasks.start_soon(stop_on_signal)
            lowlevel = server._lowlevel_server
            async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
                lines.refused = write_stream
                counting = _CountingWrites(
                    write_stream, lines.unanswered, lines.negotiation, lines.batches
                )
                await lowlevel.run(read_stream, counting, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()

    try:
        anyio.run(serve)
    except* (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError):
        logger.info("the MCP client closed the connection")
        _silence_stdout()


def _heeded(signals: tuple[signal.Signals, ...]) -> list[signal.Signals]:
    """``signals`` but those this process was started ignoring: ``nohup`` ignores SIGHUP
    and a shell's background job SIGINT, so that a hang-up or a Ctrl-C meant for others
    does not stop it (Python keeps such an ignored SIGINT ignored; a receiver of it
    would have undone that)."""
    return [received for received in signals if signal.getsignal(received) != signal.SIG_IGN]


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null: the interpreter's last flush must not hit the broken pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout already closed or replaced: nothing to silence
        pass
