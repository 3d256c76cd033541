"""``HEAD`` answered as ``GET`` is, without the body (RFC 9110, section 9.3.2).

FastAPI's routes serve only the methods they are declared with, so ``HEAD /healthz``,
``HEAD /v1/memories`` or ``HEAD /`` was 405 Method Not Allowed, while RFC 9110 has every
general-purpose server support ``HEAD`` wherever it serves ``GET``, and uptime checks
(and ``curl -I``) ask ``HEAD`` first: a monitor pointed at ``/healthz`` saw the server
refusing. :class:`HeadAsGet` serves a ``HEAD`` as the ``GET`` of the same URL (the same
status and headers, ``Content-Length`` included) and sends no body; a streamed body
(``GET /v1/export``) is ended at its first part, as when a client leaves.

Not under the paths it is told to leave alone: ``GET /mcp`` opens a session's one event
stream, which a ``HEAD`` must not take (it stays 405 there, its ``Allow`` saying so).
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HEAD_ASKED", "HeadAsGet"]

# The scope key marking a GET that was asked as HEAD: the request metrics count it as
# the HEAD it is (every other layer sees the GET it is served as).
HEAD_ASKED = "recalld.head_asked"


class HeadAsGet:
    """An ASGI middleware serving ``HEAD`` as ``GET`` without the body (module docstring),
    except under ``exclude`` (path prefixes)."""

    def __init__(self, app: ASGIApp, exclude: Sequence[str] = ()) -> None:
        self.app = app
        self.exclude = tuple(path.rstrip("/") for path in exclude)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or self._excluded(scope):
            await self.app(scope, receive, send)
            return

        answered = anyio.Event()

        async def bodiless(message: Message) -> None:
            if message["type"] != "http.response.body":
                await send(message)
            elif not answered.is_set():  # the end only, empty, at the body's first part
                answered.set()
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def until_answered() -> Message:
            # A streamed body (GET /v1/export) is not made for nothing: once the HEAD is
            # answered, the app is told its client left, which ends the stream, as when
            # a GET's client goes away (else HEAD /v1/export read the whole export).
            received: Message = {"type": "http.disconnect"}
            if answered.is_set():
                return received
            async with anyio.create_task_group() as racing:

                async def read() -> None:
                    nonlocal received
                    received = await receive()
                    racing.cancel_scope.cancel()

                async def end() -> None:
                    await answered.wait()
                    racing.cancel_scope.cancel()

                racing.start_soon(read)
                racing.start_soon(end)
            return received

        await self.app({**scope, "method": "GET", HEAD_ASKED: True}, until_answered, bodiless)

    def _excluded(self, scope: Scope) -> bool:
        path: str = scope["path"].rstrip("/")
        return any(path == prefix or path.startswith(prefix + "/") for prefix in self.exclude)
