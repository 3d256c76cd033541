"""One token holds at most so many 2026-07-28 ``subscriptions/listen`` streams open: the
SDK's limit is for the whole server, so one token's streams, held open, refused every
other token's listen (adversarial pass c65)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import SubscriptionsListenRequestParams

from recalld.adapters import mcp_server
from recalld.adapters.dialects.base import McpState
from recalld.adapters.mcp_server import build_server
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import CALLER_STATE_KEY, Caller

pytestmark = pytest.mark.anyio


class _Stream:
    """A listen request's session: says when the stream was acknowledged (it is open)."""

    def __init__(self) -> None:
        self.open = anyio.Event()

    async def send_notification(self, notification: Any, related_request_id: Any = None) -> None:
        self.open.set()


class _Held:
    """One listen stream held open until its scope is cancelled."""

    def __init__(self) -> None:
        self.stream = _Stream()
        self.scope = anyio.CancelScope()
        self.ended = anyio.Event()

    async def run(self, listen: Any, request: Any, params: Any) -> None:
        try:
            with self.scope:
                await listen(request, params)
        finally:
            self.ended.set()


def _listen_request(number: int, token: str | None, stream: _Stream) -> ServerRequestContext[Any]:
    caller = None if token is None else Caller(token_id=token, scopes={})
    scope = {"state": {} if caller is None else {CALLER_STATE_KEY: caller}}
    return ServerRequestContext(
        session=stream,  # type: ignore[arg-type]
        lifespan_context=McpState(service=SimpleNamespace()),  # type: ignore[arg-type]
        protocol_version="2026-07-28",
        method="subscriptions/listen",
        request_id=number,
        request=SimpleNamespace(scope=scope),
    )


async def test_a_token_holds_at_most_its_share_of_listen_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_server, "LISTENS_PER_TOKEN", 2, raising=False)
    settings = Settings(db=tmp_path / "listen.db", embedder="none")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    handler = server._lowlevel_server.get_request_handler("subscriptions/listen")
    assert handler is not None
    listen = handler.handler
    params = SubscriptionsListenRequestParams.model_validate(
        {"notifications": {"resourceSubscriptions": ["memory://core"]}}
    )

    async with anyio.create_task_group() as tasks:
        opened: list[_Held] = []

        async def open_one(number: int, token: str | None) -> None:
            held = _Held()
            opened.append(held)
            tasks.start_soon(held.run, listen, _listen_request(number, token, held.stream), params)
            with anyio.fail_after(10):
                await held.stream.open.wait()

        await open_one(1, "greedy")
        await open_one(2, "greedy")
        with pytest.raises(MCPError) as refused, anyio.fail_after(10):  # (else it listens)
            await listen(_listen_request(3, "greedy", _Stream()), params)
        assert refused.value.error.code == -32600
        message = refused.value.error.message
        assert "for this token: it holds 2, the limit per token is 2" in message
        # Another token, and a trusted caller, still listen; a stream ended is room again.
        await open_one(4, "polite")
        await open_one(5, None)
        opened[0].scope.cancel()
        with anyio.fail_after(10):
            await opened[0].ended.wait()
        await open_one(6, "greedy")
        for held in opened:
            held.scope.cancel()
