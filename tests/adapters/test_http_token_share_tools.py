"""A token's ``/mcp`` tool calls count in its share of requests (the worker threads they
run on are the same): one past it is answered a tool error naming the limit, nothing of
it run (adversarial pass d68; stop 67 left them uncounted)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp.types import CallToolResult
from starlette.types import Message, Receive, Scope, Send

from recalld.adapters.http_token_share import TOKEN_SHARE_STATE_KEY, TokenShare, count_tool_calls
from recalld.tokens import CALLER_STATE_KEY, Caller

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
