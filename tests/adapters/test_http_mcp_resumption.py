"""A ``GET`` with ``Last-Event-ID`` opens an event stream anew: recalld keeps no events
to resume one from, and the MCP SDK answered it nothing (uvicorn's plain-text 500 and an
ERROR in the log, at any client's will) (adversarial pass e69)."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import httpx
import pytest

from recalld.adapters.http_connections import BoundedRequestHead
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.mcp_support import INITIALIZE
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}


async def test_mcp_stream_with_last_event_id_opens_anew(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(db=tmp_path / "r.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    endpoint, lifespan = http_endpoint(server, path="/mcp", host="127.0.0.1")
    with caplog.at_level(logging.ERROR):
        async with lifespan(), serving(BoundedRequestHead, endpoint, "error") as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with httpx.AsyncClient(timeout=30) as client:
                opened = await client.post(url, json=INITIALIZE, headers=ACCEPT)
                session = opened.headers["mcp-session-id"]
                headers = {
                    "Accept": "text/event-stream",
                    "Mcp-Session-Id": session,
                    "Mcp-Protocol-Version": "2025-06-18",
                    "Last-Event-ID": "a-stream_42",
                }
                with anyio.fail_after(30):
                    async with client.stream("GET", url, headers=headers) as stream:
                        status = stream.status_code
                        kind = stream.headers.get("content-type", "")
    assert status == 200
    assert kind.startswith("text/event-stream")
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
