"""A request body that stops arriving is refused (408) instead of holding its connection.

The app is driven as ASGI, as uvicorn drives it: the body's first chunk arrives and the
next never does. Before, the request waited for it as long as the client liked.
"""

from __future__ import annotations

import asyncio
import json
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
