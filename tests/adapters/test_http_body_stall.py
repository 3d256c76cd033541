"""A request body that stops arriving is refused (408) instead of holding its connection.

The app is driven as ASGI, as uvicorn drives it: the body's first chunk arrives and the
next never does. Before, the request waited for it as long as the client liked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

import pytest

from recalld.adapters import http_body
from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService

STALL = 0.2


async def _call(app: Any, path: str, first_chunk: bytes) -> tuple[int, dict[str, str], Any]:
    """Send a POST whose body stops after ``first_chunk``; the answer's status, headers
    and JSON body."""
    never = asyncio.Event()
    chunks = [{"type": "http.request", "body": first_chunk, "more_body": True}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop()
        await never.wait()  # the client sends nothing more, and does not go away
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", b"1000"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
        "state": {},
    }
    # Bounded: a stall the server never notices fails here instead of hanging the suite.
    await asyncio.wait_for(app(scope, receive, send), timeout=STALL * 50)
    start = next(message for message in sent if message["type"] == "http.response.start")
    headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
    body = b"".join(message.get("body", b"") for message in sent if "body" in message)
    return start["status"], headers, json.loads(body)


@pytest.mark.parametrize("path", ["/v1/memories", "/v1/import"])
def test_http_a_stalled_body_is_refused_with_408_and_writes_nothing(
    service: MemoryService, settings: Settings, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.setattr(http_body, "BODY_STALL_SECONDS", STALL)
    app = create_app(service, settings)
    status, headers, body = asyncio.run(_call(app, path, b'{"content": "half a memo'))
    assert status == 408, body
    assert body["error"]["type"] == "request_timeout"
    assert "stopped arriving" in body["error"]["message"]
    assert headers["connection"] == "close"
    assert service.stats().count == 0


def test_http_the_openapi_document_lists_408_beside_413(
    service: MemoryService, settings: Settings
) -> None:
    # Every operation listed the size cap's 413; the stall's 408 was in the README only.
    document = create_app(service, settings).openapi()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            if "413" in responses:
                assert "408" in responses, (method, path)
    assert "408" in document["paths"]["/v1/import"]["post"]["responses"]


async def _steady(chunks: list[bytes], gap: float, linger: float) -> tuple[bytes, list[str]]:
    """A body of ``chunks`` sent ``gap`` seconds apart through :class:`BodyLimit` (stall
    limit STALL) to an app that reads it, starts its answer and waits for the client to
    leave, as a response stream does; the client leaves ``linger`` seconds later. What
    the app read, and the types of the messages it sent."""
    queued = [
        {"type": "http.request", "body": chunk, "more_body": number < len(chunks) - 1}
        for number, chunk in enumerate(chunks)
    ]
    sent: list[str] = []
    read: list[bytes] = []

    async def receive() -> dict[str, Any]:
        # The client's own pace (what is measured), not a wait for the server.
        await asyncio.sleep(gap if queued else linger)
        return queued.pop(0) if queued else {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message["type"])

    async def app(_scope: Any, receive_body: Any, answer: Any) -> None:
        more = True
        while more:
            message = await receive_body()
            read.append(message.get("body", b""))
            more = message.get("more_body", False)
        await answer({"type": "http.response.start", "status": 200, "headers": []})
        assert (await receive_body())["type"] == "http.disconnect"
        await answer({"type": "http.response.body", "body": b""})

    def refuse(_scope: Any, error: Exception) -> Any:
        raise AssertionError(f"refused: {error}")

    limit = http_body.BodyLimit(
        app,
        default_limit=1 << 20,
        import_limit=1 << 20,
        import_path="/v1/import",
        refuse=refuse,
        stall_seconds=STALL,
    )
    scope = {"type": "http", "path": "/v1/import", "headers": []}
    await asyncio.wait_for(limit(scope, receive, send), timeout=STALL * 100)
    return b"".join(read), sent


def test_http_a_slow_steady_body_and_a_waiting_stream_are_not_cut() -> None:
    # The limit is on a gap, not on the whole: 20 chunks STALL/10 apart take twice STALL,
    # and once the body is in, the wait for the client to leave is never timed.
    chunks = [f"line {number}\n".encode() for number in range(20)]
    read, sent = asyncio.run(_steady(chunks, gap=STALL / 10, linger=STALL * 3))
    assert read == b"".join(chunks)
    assert sent == ["http.response.start", "http.response.body"]
