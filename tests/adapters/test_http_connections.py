"""A connection holding no request is closed: none sent, or a request head that stalls.

uvicorn's keep-alive timer runs only after a response: a connection that sent nothing,
or the start of a request head and nothing more, was held for as long as the client
liked (before any token was checked). The servers run :class:`BoundedRequestHead`; here
it runs with short limits on a real socket, and each wait for the close is bounded
generously (a server that never closes fails the test, a slow one does not)."""

from __future__ import annotations

import asyncio
import contextlib

import anyio
import pytest
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from recalld.adapters.http_connections import BoundedRequestHead
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30.0


class QuickLimits(BoundedRequestHead):
    idle_seconds = 0.2
    head_seconds = 0.2


async def _closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """What the server sent before closing (bounded wait: a connection held fails)."""
    with anyio.fail_after(WAIT_SECONDS):
        return await reader.read()


async def test_http_connection_sending_nothing_is_closed() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            assert await _closed_by_server(reader) == b""
        finally:
            writer.close()
            await writer.wait_closed()


async def test_http_connection_whose_request_head_stalls_is_closed() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
        await writer.drain()
        try:
            assert await _closed_by_server(reader) == b""
        finally:
            writer.close()
            await writer.wait_closed()


async def test_http_connection_serves_requests_one_after_another() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            # Sent in two parts: the head's deadline is armed, then dropped once it is whole.
            writer.write(b"GET / HTTP/1.1\r\n")
            await writer.drain()
            writer.write(b"Host: 127.0.0.1\r\n\r\n")
            await writer.drain()
            with anyio.fail_after(WAIT_SECONDS):
                head = await reader.readuntil(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200")
                assert await reader.readexactly(5) == b"hello"
        writer.close()
        await writer.wait_closed()


async def test_http_connection_trickling_a_request_head_is_closed() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        closed = False
        try:
            # A byte of a header that never ends, every 20 ms (each under the 0.2 s limit):
            # the head's deadline runs from its first byte, so the server closes anyway.
            with anyio.fail_after(WAIT_SECONDS):
                writer.write(b"GET / HTTP/1.1\r\nX-Long: ")
                while not closed:
                    try:
                        writer.write(b"a")
                        await writer.drain()
                        with anyio.move_on_after(0.02):
                            closed = await reader.read() == b""
                    except ConnectionError:
                        # Closed with our bytes unread, the server's side resets it.
                        closed = True
        finally:
            writer.close()
            with anyio.move_on_after(WAIT_SECONDS):
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()
        assert closed


async def test_http_connection_sending_the_rest_of_an_answered_body_is_closed() -> None:
    # The app answers without reading the body (as a 404 or a 401 does); the client sends
    # a byte of the rest after the answer, then nothing. uvicorn stopped its keep-alive
    # timer at that byte and started none: the connection was held for good (review of c66).
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
            await writer.drain()
            with anyio.fail_after(WAIT_SECONDS):
                assert (await reader.readuntil(b"hello")).startswith(b"HTTP/1.1 200")
            writer.write(b"a")
            await writer.drain()
            assert await _closed_by_server(reader) == b""
        finally:
            writer.close()
            with anyio.move_on_after(WAIT_SECONDS):
                with contextlib.suppress(ConnectionError):
                    await writer.wait_closed()


async def test_http_connection_serves_the_next_request_after_an_answered_body() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n")
        await writer.drain()
        with anyio.fail_after(WAIT_SECONDS):
            await reader.readuntil(b"hello")
            # The rest of the answered body, then a request in the same write: both read.
            writer.write(b"body" + b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await writer.drain()
            assert (await reader.readuntil(b"hello")).startswith(b"HTTP/1.1 200")
        writer.close()
        await writer.wait_closed()


async def test_http_connection_answers_pipelined_requests() -> None:
    async with serving(QuickLimits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3)
        await writer.drain()
        with anyio.fail_after(WAIT_SECONDS):
            for _ in range(3):
                assert (await reader.readuntil(b"hello")).startswith(b"HTTP/1.1 200")
        writer.close()
        await writer.wait_closed()


async def test_http_connection_streaming_past_the_limits_is_not_cut() -> None:
    # A response that lasts longer than both limits (an event stream, a slow export) is a
    # request being served: no deadline of this module may close it. Its end is sent only
    # once a connection opened after it was closed by its idle deadline (the limits have
    # passed for the stream too), so the outcome depends on no scheduling.
    finish = asyncio.Event()

    async def stream(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"start;", "more_body": True})
        await finish.wait()
        await send({"type": "http.response.body", "body": b"end;"})

    async with serving(QuickLimits, stream) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        with anyio.fail_after(WAIT_SECONDS):
            await reader.readuntil(b"start;")
        idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
        assert await _closed_by_server(idle_reader) == b""
        idle_writer.close()
        await idle_writer.wait_closed()
        finish.set()
        with anyio.fail_after(WAIT_SECONDS):
            assert (await reader.readuntil(b"end;")).endswith(b"end;")
        writer.close()
        await writer.wait_closed()


def test_http_connections_override_what_uvicorn_calls() -> None:
    # BoundedRequestHead extends uvicorn's h11 protocol (not a public API): a uvicorn that
    # renames what it overrides fails here, not silently in production.
    for name in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert name in vars(H11Protocol), name
