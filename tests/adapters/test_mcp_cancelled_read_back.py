"""A tool call sent after a cancelled one runs once the cancelled one has ended, so that
reading back tells whether its write was done (adversarial pass e69).

A cancelled call runs to its end in its worker thread; a ``stats`` or ``list`` the
client sent right after the cancel ran beside it and read the database from before the
write (count 0, then 400 a moment later)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp.client.client import Client
from mcp.server.context import ServerMiddleware

from recalld.adapters import mcp_cancel_wait
from recalld.adapters.http_connections import BoundedRequestHead
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.mcp_support import text
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30


async def test_a_call_after_a_cancelled_one_reads_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a session, as a stdio client's (the in-process 2026-07-28 transport serves one
    # request at a time, so there the read could not run beside the write).
    settings = Settings(db=tmp_path / "c.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    entered, release = threading.Event(), threading.Event()
    remember = MemoryService.remember

    def held(self: MemoryService, *arguments: Any, **options: Any) -> Any:
        entered.set()
        release.wait(WAIT_SECONDS)
        return remember(self, *arguments, **options)

    async def releasing(context: Any, call_next: Any) -> Any:
        # The read reached the server: only now may the cancelled write go on.
        params = getattr(context, "params", None)
        name = params.get("name") if isinstance(params, dict) else getattr(params, "name", None)
        if context.method == "tools/call" and name == "stats":
            release.set()
        return await call_next(context)

    server._lowlevel_server.middleware.insert(0, cast(ServerMiddleware[Any], releasing))
    monkeypatch.setattr(MemoryService, "remember", held)
    async with Client(server, mode="legacy") as client:
        writing = anyio.CancelScope()

        async def write() -> None:
            with writing:
                await client.call_tool("remember", {"content": "the kettle is broken"})

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write)
            with anyio.fail_after(WAIT_SECONDS):
                await anyio.to_thread.run_sync(entered.wait, WAIT_SECONDS)
            writing.cancel()  # the client sends notifications/cancelled
        with anyio.fail_after(WAIT_SECONDS):
            counted = await client.call_tool("stats", {})
    assert json.loads(text(counted))["count"] == 1


async def test_a_call_after_a_cancelled_one_still_running_is_answered_after_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The wait had no bound: a cancelled call that ran on (a long import, a call stuck
    # behind a lock) left every later call of its client unanswered until it ended
    # (review of pass e69).
    settings = Settings(db=tmp_path / "b.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    entered, release = threading.Event(), threading.Event()
    remember = MemoryService.remember

    def held(self: MemoryService, *arguments: Any, **options: Any) -> Any:
        entered.set()
        release.wait(WAIT_SECONDS)
        return remember(self, *arguments, **options)

    monkeypatch.setattr(mcp_cancel_wait, "CANCELLED_WAIT_SECONDS", 0.2)
    monkeypatch.setattr(MemoryService, "remember", held)
    try:
        async with Client(server, mode="legacy") as client:
            writing = anyio.CancelScope()

            async def write() -> None:
                with writing:
                    await client.call_tool("remember", {"content": "the kettle is broken"})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(write)
                with anyio.fail_after(WAIT_SECONDS):
                    await anyio.to_thread.run_sync(entered.wait, WAIT_SECONDS)
                writing.cancel()
            with anyio.fail_after(WAIT_SECONDS / 2):
                counted = await client.call_tool("stats", {})
            assert not release.is_set()  # the cancelled write is still running
            release.set()
    finally:
        release.set()
    assert json.loads(text(counted))["count"] == 0
    assert any("still running after 0.2 s ('remember')" in r.getMessage() for r in caplog.records)


async def test_a_call_after_a_cancelled_one_in_an_http_session_reads_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over streamable HTTP the cancel, the cancelled call and the read are separate POSTs
    # of one session (the SDK's client sends each on a connection of its own): the wait
    # is keyed by the session, not by the HTTP connection (review of pass e69).
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    settings = Settings(db=tmp_path / "h.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    entered, release = threading.Event(), threading.Event()
    remember = MemoryService.remember

    def held(self: MemoryService, *arguments: Any, **options: Any) -> Any:
        entered.set()
        release.wait(WAIT_SECONDS)
        return remember(self, *arguments, **options)

    async def releasing(context: Any, call_next: Any) -> Any:
        params = getattr(context, "params", None)
        name = params.get("name") if isinstance(params, dict) else getattr(params, "name", None)
        if context.method == "tools/call" and name == "stats":
            release.set()
        return await call_next(context)

    server._lowlevel_server.middleware.insert(0, cast(ServerMiddleware[Any], releasing))
    monkeypatch.setattr(MemoryService, "remember", held)
    endpoint, lifespan = http_endpoint(server, path="/mcp", host="127.0.0.1")
    try:
        async with lifespan(), serving(BoundedRequestHead, endpoint, "error") as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                httpx2.AsyncClient() as http_client,
                Client(
                    streamable_http_client(url, http_client=http_client), mode="legacy"
                ) as client,
            ):
                writing = anyio.CancelScope()

                async def write() -> None:
                    with writing:
                        await client.call_tool("remember", {"content": "the kettle is broken"})

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(write)
                    with anyio.fail_after(WAIT_SECONDS):
                        await anyio.to_thread.run_sync(entered.wait, WAIT_SECONDS)
                    writing.cancel()
                with anyio.fail_after(WAIT_SECONDS):
                    counted = await client.call_tool("stats", {})
    finally:
        release.set()
    assert json.loads(text(counted))["count"] == 1
