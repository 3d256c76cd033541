"""A tool call past a token's share at ``/mcp`` is refused in its dialect's error shape
(integration read, stop 68): d68's refusal was the text ``Error: too_many_requests: ...``
for every dialect, which a native client reading the error body as JSON (as b68's
answers are), hermes' ``success: false`` or rover's envelope could not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld.adapters.http_mcp_sessions import owned_by
from recalld.adapters.http_token_share import TOKEN_SHARE_STATE_KEY, TokenShare
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.anyio

LIMIT_SAID = "the limit per token is 1"


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    """An app that answers nothing (the share only is looked at)."""


def _counted(app: ASGIApp, share: TokenShare) -> ASGIApp:
    """``app`` called by the token ``busy``, as ``recalld serve`` hands /mcp its share."""

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        caller = Caller(token_id="busy", scopes={})
        state = {CALLER_STATE_KEY: caller, TOKEN_SHARE_STATE_KEY: share}
        await app(owned_by({**scope, "state": state}, caller), receive, send)

    return named


def _native(result: dict[str, Any]) -> None:
    body = json.loads(result["content"][0]["text"])
    assert body["error"]["type"] == "too_many_requests", body
    assert LIMIT_SAID in body["error"]["message"]
    assert result["structuredContent"] == body


def _hermes(result: dict[str, Any]) -> None:
    body = json.loads(result["content"][0]["text"])
    assert body["success"] is False, body
    assert LIMIT_SAID in body["error"]


def _rover(result: dict[str, Any]) -> None:
    text = result["content"][0]["text"]
    assert "error" in text
    assert LIMIT_SAID in text
    assert not text.startswith("Error: too_many_requests"), text


SHAPES = [
    ("native", "stats", _native),
    ("hermes", "memory", _hermes),
    ("rover", "rover_memory", _rover),
]


@pytest.mark.parametrize(("dialect", "tool", "check"), SHAPES, ids=[s[0] for s in SHAPES])
async def test_a_tool_call_past_the_share_is_refused_in_its_dialects_shape(
    tmp_path: Path, dialect: str, tool: str, check: Any
) -> None:
    settings = Settings(db=tmp_path / "share.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), [dialect])
    endpoint, lifespan = http_endpoint(server, path="/mcp", host="127.0.0.1")
    share = TokenShare(_nothing, limit=1)
    transport = httpx.ASGITransport(app=_counted(endpoint, share))
    url = "http://127.0.0.1:8765/mcp"
    accept = {"Accept": "application/json, text/event-stream"}
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        opened = await client.post(url, json=INITIALIZE, headers=accept)
        headers = {**accept, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        headers["Mcp-Protocol-Version"] = "2025-06-18"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await client.post(url, json=initialized, headers=headers)).status_code == 202
        assert share.take("busy") is None  # its one request is running elsewhere
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": tool, "arguments": {}}
        answered = await client.post(url, json=call, headers=headers)
    data = next(line for line in answered.text.splitlines() if line.startswith("data:"))
    result = json.loads(data.removeprefix("data:"))["result"]
    assert result["isError"] is True
    check(result)
