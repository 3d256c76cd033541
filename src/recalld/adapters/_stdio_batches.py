"""The answers to a JSON-RPC batch on stdio, written together as one array.

JSON-RPC 2.0 answers a batch (an array of messages, which protocol 2025-03-26 has every
server receive) with one array holding the answer to each request in it, written once
all of them are done, and with nothing at all when the batch held only notifications.
The SDK runs each message of a batch as a message of its own
(:mod:`recalld.adapters._stdio` reads it so), and so answered each on a line of its own:
a client that sent a batch, reading one array back as JSON-RPC says, found a first
answer where it expected the array and none for the rest.

:class:`Batches` keeps, for each batch read, which of its requests are still owed an
answer and the answers so far (a message of the batch that is refused is answered in
the array too); the stdio write stream hands it every answer (:meth:`Batches.hold`), and
the array is written when the last one comes, or when the client cancels the last
request owed (a cancelled request is not answered, in the array or out of it).

An answer carries only its request's id, so a request reusing the id of one a batch
still waits on (which MCP forbids: an id is never reused in a session) would have its
answer put in that batch's array, and the batch's own answer written alone; such a
request is refused instead (:mod:`recalld.adapters._stdio`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, cast

from mcp import types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

__all__ = ["Batch", "BatchAnswer", "Batches"]

Answer = types.JSONRPCResponse | types.JSONRPCError
Send = Callable[[SessionMessage], Awaitable[None]]


class BatchAnswer:
    """A batch's answers as the one JSON array that answers it, in the shape the SDK's
    stdout writer writes a message in (``model_dump_json``), so that it goes out on the
    write stream, in turn with every other message."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers

    def model_dump_json(self, **options: Any) -> str:
        """The answers as one JSON array (each dumped as the writer dumps a message)."""
        return "[" + ",".join(answer.model_dump_json(**options) for answer in self.answers) + "]"


class Batch:
    """One batch read: the requests of it still owed an answer, and the answers so far."""

    def __init__(self) -> None:
        self.owed: Counter[str | int] = Counter()
        self.answers: list[Answer] = []
        self.read = False  # every message of it has been handed on (or refused)

    def owe(self, request_id: str | int) -> None:
        """The batch holds a request with ``request_id``: its answer goes in the array."""
        self.owed[coerce_request_id(request_id)] += 1

    def owing(self, request_id: str | int) -> int:
        """How many requests of the batch with ``request_id`` are owed an answer."""
        return self.owed[coerce_request_id(request_id)]

    def settle(self, request_id: str | int) -> bool:
        """One request with ``request_id`` is answered or cancelled; False if the batch
        owed it nothing."""
        key = coerce_request_id(request_id)
        if not self.owed[key]:
            self.owed.pop(key, None)
            return False
        self.owed[key] -= 1
        if not self.owed[key]:
            del self.owed[key]
        return True

    def done(self) -> bool:
        """Whether every message of the batch is read and every request of it settled."""
        return self.read and not self.owed


class Batches:
    """The batches read and not answered yet (module docstring)."""

    def __init__(self) -> None:
        self._open: list[Batch] = []

    def start(self) -> Batch:
        """A batch was read: its answers are gathered from now on."""
        batch = Batch()
        self._open.append(batch)
        return batch

    async def hold(self, message: Any, send: Send) -> bool:
        """Keep ``message`` for the batch whose request it answers, writing the batch's
        array through ``send`` if it was the last answer owed; False (nothing done) when
        it answers no request of a batch."""
        if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return False
        if message.id is None:
            return False
        for batch in self._open:
            if batch.settle(message.id):
                batch.answers.append(message)
                await self.flush(batch, send)
                return True
        return False

    def owner(self, request_id: str | int) -> Batch | None:
        """The open batch owing an answer to a request with ``request_id``, if any."""
        key = coerce_request_id(request_id)
        return next((batch for batch in self._open if batch.owing(key)), None)

    def cancel(self, request_id: str | int) -> Batch | None:
        """The client cancelled ``request_id``: the batch that owed it owes it no more
        (to be flushed by the caller); None if no batch owed it."""
        for batch in self._open:
            if batch.settle(request_id):
                return batch
        return None

    async def flush(self, batch: Batch, send: Send) -> None:
        """Write ``batch``'s array through ``send`` if it is done (nothing for a batch
        with no answer: one of notifications only, as JSON-RPC says)."""
        if not batch.done() or batch not in self._open:
            return
        self._open.remove(batch)
        if batch.answers:
            await send(SessionMessage(cast(types.JSONRPCMessage, BatchAnswer(batch.answers))))
