"""A uvicorn server on a real loopback socket, for the tests of recalld's HTTP protocol
class (:class:`recalld.adapters.http_connections.BoundedRequestHead`) and its limits."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

# Generous: a server that never starts fails the test, a slow one does not.
START_SECONDS = 30.0


async def hello(scope: Scope, receive: Receive, send: Send) -> None:
    """An app answering every HTTP request ``hello``."""
    if scope["type"] != "http":
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]}
    )
    await send({"type": "http.response.body", "body": b"hello"})


@asynccontextmanager
async def serving(
    protocol: type[H11Protocol], app: ASGIApp = hello, log_level: str = "critical"
) -> AsyncIterator[int]:
    """``app`` served by uvicorn with ``protocol`` on a free loopback port; its port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = int(listener.getsockname()[1])
    config = uvicorn.Config(app, http=protocol, lifespan="off", log_level=log_level)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[listener]))
    try:
        with anyio.fail_after(START_SECONDS):
            while not server.started:
                await asyncio.sleep(0.01)  # uvicorn sets a flag, not an event
        yield port
    finally:
        server.should_exit = True
        await task
        listener.close()
