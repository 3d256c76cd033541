"""Request bodies over REST and ``/mcp``: the size cap (413) and the stall limit (408).

A body over ``RECALLD_MAX_BODY_BYTES`` (``RECALLD_MAX_IMPORT_BYTES`` for
``/v1/import``) is refused from its ``Content-Length`` up front, else once that many
bytes have streamed in. A body that stops arriving (a client that sends a byte now
and then, or died mid-upload behind a proxy that keeps the connection) is refused
after :data:`BODY_STALL_SECONDS` without a byte of it: the connection and what was
read of the body were otherwise held for as long as the client liked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fastapi.exceptions import HTTPException
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BODY_STALL_SECONDS", "BodyLimit", "BodyStalled", "BodyTooLarge"]

# How long a request body may go without a byte arriving.
BODY_STALL_SECONDS = 30.0


class BodyTooLarge(HTTPException):
    """413: the body is over its cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyStalled(HTTPException):
    """408: the body stopped arriving; the connection is closed after the answer."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            408,
            f"the request body stopped arriving (no byte of it for {seconds:g} s); nothing"
            " was written: send the request again",
            headers={"Connection": "close"},
        )


class BodyLimit:
    """Refuse bodies over the cap, and bodies that stall; ``refuse`` makes the answer."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        default_limit: int,
        import_limit: int,
        import_path: str,
        refuse: Callable[[Scope, HTTPException], ASGIApp],
        stall_seconds: float | None = None,
    ) -> None:
        self.app = app
        self.default_limit = default_limit
        self.import_limit = import_limit
        self.import_path = import_path
        self.refuse = refuse
        self.stall_seconds = BODY_STALL_SECONDS if stall_seconds is None else stall_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.import_limit if scope["path"] == self.import_path else self.default_limit
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self.refuse(scope, BodyTooLarge(limit))(scope, receive, send)
            return
        received = 0
        complete = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, complete
            if complete:
                # The body is in: what follows is the wait for a disconnect (a stream
                # listens for it as long as it lasts), never timed.
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.stall_seconds)
            except TimeoutError:
                raise BodyStalled(self.stall_seconds) from None
            if message["type"] != "http.request":
                complete = True
                return message
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge(limit)
            complete = not message.get("more_body", False)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, watching_send)
        except (BodyTooLarge, BodyStalled) as error:
            if started:
                raise
            await self.refuse(scope, error)(scope, receive, send)
