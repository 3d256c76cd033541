"""A token's ``/mcp`` tool calls count in its share of requests (the worker threads they
run on are the same): one past it is answered a tool error naming the limit, nothing of
it run (adversarial pass d68; stop 67 left them uncounted)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.types import CallToolResult
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recalld.adapters.http_mcp_sessions import owned_by
from recalld.adapters.http_token_share import TOKEN_SHARE_STATE_KEY, TokenShare, count_tool_calls
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.anyio


@dataclass
class _Request:
    scope: dict[str, Any]


@dataclass
class _Context:
    request: _Request
    method: str = "tools/call"
    calls: list[str] = field(default_factory=list)


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    """An app that answers nothing (the share only is looked at)."""


def _context(share: TokenShare, token_id: str, method: str = "tools/call") -> _Context:
    state = {CALLER_STATE_KEY: Caller(token_id=token_id, scopes={}), TOKEN_SHARE_STATE_KEY: share}
    return _Context(_Request({"state": state}), method)


async def _call(context: _Context) -> Any:
    async def call_next(given: Any) -> Any:
        context.calls.append(given.method)
        return {"ran": True}

    return await count_tool_calls(context, call_next)  # type: ignore[arg-type]


async def test_mcp_tool_call_past_the_tokens_share_is_a_tool_error_naming_the_limit() -> None:
    share = TokenShare(_nothing, limit=1)
    assert share.take("busy") is None  # one REST request of the token is running
    context = _context(share, "busy")
    refused = await _call(context)
    assert isinstance(refused, CallToolResult)
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "too_many_requests" in text
    assert "the limit per token is 1" in text
    assert context.calls == []  # nothing of it ran
    # Another token, and a request that is no tool call, are not held to it.
    assert await _call(_context(share, "other")) == {"ran": True}
    assert await _call(_context(share, "busy", method="tools/list")) == {"ran": True}
    share.release("busy")
    assert await _call(_context(share, "busy")) == {"ran": True}
    assert share.take("busy") is None  # the call released its count when it ended


async def test_mcp_requests_carry_the_share_their_tool_calls_count_in() -> None:
    seen: list[Any] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["state"].get(TOKEN_SHARE_STATE_KEY))

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        """Nothing is answered."""

    share = TokenShare(app, limit=1)
    caller = Caller(token_id="busy", scopes={})
    assert share.take("busy") is None  # at its share: /mcp itself is still let through
    scope = {"type": "http", "method": "POST", "path": "/mcp", "state": {CALLER_STATE_KEY: caller}}
    await share(scope, receive, send)
    assert seen == [share]


def _counted(app: ASGIApp, share: TokenShare) -> ASGIApp:
    """``app`` called by the token ``busy``, as ``recalld serve`` hands /mcp its share."""

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        caller = Caller(token_id="busy", scopes={})
        state = {CALLER_STATE_KEY: caller, TOKEN_SHARE_STATE_KEY: share}
        await app(owned_by({**scope, "state": state}, caller), receive, send)

    return named


URL = "http://127.0.0.1:8765/mcp"


async def _opened_session(client: httpx.AsyncClient) -> dict[str, str]:
    """Initialize an MCP session at ``URL``; the headers its requests carry."""
    accept = {"Accept": "application/json, text/event-stream"}
    opened = await client.post(URL, json=INITIALIZE, headers=accept)
    headers = {**accept, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    headers["Mcp-Protocol-Version"] = "2025-06-18"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post(URL, json=initialized, headers=headers)).status_code == 202
    return headers


async def test_a_tool_call_through_the_sdk_is_counted_and_released(tmp_path: Path) -> None:
    # The middleware reads the request's scope as the SDK hands it: were that to change
    # (an SDK release), the share would silently stop counting tool calls (review of d68).
    settings = Settings(db=tmp_path / "share.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    endpoint, lifespan = http_endpoint(server, path="/mcp", host="127.0.0.1")
    share = TokenShare(_nothing, limit=1)
    transport = httpx.ASGITransport(app=_counted(endpoint, share))
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        headers = await _opened_session(client)

        async def stats(number: int) -> str:
            call = {"jsonrpc": "2.0", "id": number, "method": "tools/call"}
            call["params"] = {"name": "stats", "arguments": {}}
            return (await client.post(URL, json=call, headers=headers)).text

        assert share.take("busy") is None  # its one request is running elsewhere
        refused = await stats(2)
        assert "too_many_requests" in refused
        assert "the limit per token is 1" in refused
        share.release("busy")
        answered = await stats(3)
        assert "too_many_requests" not in answered
        assert '"isError":false' in answered.replace(" ", "")
        assert share.take("busy") is None  # the call released its count when it ended


async def test_a_cancelled_tool_call_releases_its_count() -> None:
    # notifications/cancelled, or a client gone, cancels the tool's task mid-call.
    share = TokenShare(_nothing, limit=1)
    started = anyio.Event()

    async def call_next(given: Any) -> Any:
        started.set()
        await anyio.Event().wait()  # never set: only cancelled

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(count_tool_calls, _context(share, "busy"), call_next)  # type: ignore[arg-type]
        with anyio.fail_after(30):
            await started.wait()
        assert share.take("busy") is not None  # the running call holds the one count
        tasks.cancel_scope.cancel()
    assert share.take("busy") is None


# A tool call past the share is refused in its dialect's error shape (integration read,
# stop 68): d68's refusal was the text "Error: too_many_requests: ..." for every dialect,
# which a native client reading the error body as JSON, hermes' `success: false` or
# rover's envelope could not read.
LIMIT_SAID = "the limit per token is 1"


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
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        headers = await _opened_session(client)
        assert share.take("busy") is None  # its one request is running elsewhere
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": tool, "arguments": {}}
        answered = await client.post(URL, json=call, headers=headers)
    data = next(line for line in answered.text.splitlines() if line.startswith("data:"))
    result = json.loads(data.removeprefix("data:"))["result"]
    assert result["isError"] is True
    check(result)
    # REST's Retry-After, machine-readable in every dialect (adversarial pass e69).
    assert result["_meta"]["recalld/retryAfterSeconds"] == 1
