"""A client that vanishes or stops reading without closing no longer holds its response
(an export, an MCP event stream) for hours: a write it takes nothing of for
``SEND_SECONDS`` disconnects it, and the kernel probes a silent peer (adversarial pass
d68). Every wait here is bounded generously; the bound under test is made short."""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import threading
from contextlib import ExitStack
from typing import ClassVar

import anyio
import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from recalld.adapters.http_connections import (
    ABORT_EXTENSION,
    PROBE_IDLE_SECONDS,
    BoundedRequestHead,
    probe_dead_peers,
)
from recalld.adapters.http_streams import BoundedSend
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30.0
CHUNK: Message = {"type": "http.response.body", "body": b"x" * 65_536, "more_body": True}


async def _endless(scope: Scope, receive: Receive, send: Send) -> None:
    """A response that goes on until its client is gone."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for _ in range(100_000):
        await send(CHUNK)


async def test_a_client_that_takes_nothing_is_disconnected(
    caplog: pytest.LogCaptureFixture,
) -> None:
    resets: list[str] = []
    blocked = anyio.Event()

    async def stalled(message: Message) -> None:
        if message["type"] == "http.response.body":
            await blocked.wait()  # never set: the client reads nothing

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/export",
        "extensions": {ABORT_EXTENSION: {"reset": lambda: resets.append("reset")}},
    }

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    with caplog.at_level(logging.WARNING, "recalld.adapters.http_streams"):
        with anyio.fail_after(WAIT_SECONDS):
            await BoundedSend(_endless, seconds=0.05)(scope, receive, stalled)
    assert resets == ["reset"]  # once, and every later write dropped
    (record,) = caplog.records
    assert "took nothing of the response for 0.05 s" in record.getMessage()


async def test_a_reading_client_is_not_disconnected() -> None:
    sent: list[Message] = []

    async def reading(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/v1/export", "extensions": {}}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(3):
            await send(CHUNK)
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    await BoundedSend(app, seconds=WAIT_SECONDS)(scope, receive, reading)
    assert len(sent) == 5


async def test_a_stalled_client_frees_its_response_on_a_real_socket() -> None:
    ended = anyio.Event()

    async def endless(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            await _endless(scope, receive, send)
            assert (await receive())["type"] == "http.disconnect"
        finally:
            ended.set()

    async with serving(BoundedRequestHead, BoundedSend(endless, seconds=0.2)) as port:
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.sendall(b"GET /v1/export HTTP/1.1\r\nHost: x\r\n\r\n")
            # The client reads nothing: the server's writes fill the buffers and stall.
            with anyio.fail_after(WAIT_SECONDS):
                await ended.wait()


def test_a_connection_probes_a_silent_peer() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            with accepted:
                probe_dead_peers(accepted)
                assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
                if hasattr(socket, "TCP_KEEPIDLE"):
                    idle = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
                    assert idle == PROBE_IDLE_SECONDS
            assert client.fileno() >= 0


# A slow reader: 16 KiB, then a pause, again and again; its bytes are taken every few
# milliseconds, while the whole of one large chunk would take it seconds.
SLOW_READ_BYTES = 16_384
SLOW_READ_PAUSE_SECONDS = 0.01
SLOW_READ_TOTAL = 6 * 1024 * 1024  # at least 3.8 s at that pace, past the bound below
# The bound on a client that takes nothing: seconds, so that the pytest-xdist worker's
# process held off the CPU (two workers on CI's two cores, with steal) does not pass for
# a client that took nothing (it was 1 s: integration read, stop 68).
SLOW_READ_BOUND_SECONDS = 3.0
LARGE_CHUNK = b"y" * (16 * 1024 * 1024)


def _read_slowly(port: int, request: bytes) -> int:
    """Read ``SLOW_READ_TOTAL`` bytes of the answer to ``request`` at a slow pace; how
    many were read (fewer: the server cut the connection)."""
    taken = 0
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(request)
        stopped = threading.Event()
        try:
            while taken < SLOW_READ_TOTAL:
                data = client.recv(SLOW_READ_BYTES)
                if not data:
                    break
                taken += len(data)
                stopped.wait(SLOW_READ_PAUSE_SECONDS)  # the pace: never set
        except ConnectionResetError:
            pass
    return taken


@pytest.mark.slow  # about 4 s of reading at the slow pace
async def test_a_slow_reader_of_a_large_chunk_is_not_cut(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One write of 16 MiB waits in uvicorn until nearly all of it is sent, which takes
    # this reader seconds; the bound (3 s) is on bytes taken, which it takes all along.
    async def large(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": LARGE_CHUNK, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    request = b"GET /v1/export HTTP/1.1\r\nHost: x\r\n\r\n"
    with caplog.at_level(logging.WARNING, "recalld.adapters.http_streams"):
        bounded = BoundedSend(large, seconds=SLOW_READ_BOUND_SECONDS)
        async with serving(BoundedRequestHead, bounded) as port:
            with anyio.fail_after(WAIT_SECONDS):
                taken = await anyio.to_thread.run_sync(_read_slowly, port, request)
    assert taken >= SLOW_READ_TOTAL
    assert [record.getMessage() for record in caplog.records] == []


class _Recording(BoundedRequestHead):
    """Records the keep-alive options of each connection it accepted."""

    seen: ClassVar[list[tuple[int, ...]]] = []

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        sock = transport.get_extra_info("socket")
        options = [sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)]
        for name in ("TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT", "TCP_USER_TIMEOUT"):
            if hasattr(socket, name):
                options.append(sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, name)))
        self.seen.append(tuple(options))


@pytest.mark.skipif(sys.platform != "linux", reason="the TCP options named are Linux's")
async def test_every_accepted_connection_probes_its_peer() -> None:
    async with serving(_Recording) as port, httpx.AsyncClient(timeout=WAIT_SECONDS) as client:
        answer = await client.get(f"http://127.0.0.1:{port}/")
    assert answer.text == "hello"
    assert _Recording.seen == [(1, PROBE_IDLE_SECONDS, 10, 6, 120_000)]


async def test_a_stop_is_not_held_by_a_client_that_reads_nothing() -> None:
    # uvicorn's graceful stop waits for every response: a stalled one is cut (the bound
    # made short here), so the stop ends (review of pass d68).
    started = anyio.Event()

    async def endless(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            started.set()
            await _endless(scope, receive, send)

    # The client is closed only after the stop: it reads nothing all along.
    with anyio.fail_after(WAIT_SECONDS), ExitStack() as clients:
        async with serving(BoundedRequestHead, BoundedSend(endless, seconds=0.2)) as port:
            client = clients.enter_context(socket.create_connection(("127.0.0.1", port)))
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.sendall(b"GET /v1/export HTTP/1.1\r\nHost: x\r\n\r\n")
            await started.wait()
