"""Only an ``initialize`` makes room in a full session table, and a session the SDK
ended by itself (idle, crashed) is no longer counted (adversarial pass e69)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from recalld.adapters.http_mcp_session_table import SessionTable
from recalld.adapters.mcp_server import _bound_sessions, build_server
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.test_http_mcp_session_limits import ACCEPT, URL, _endpoint, _open, _ping
from tests.adapters.test_http_mcp_session_table import _StandIn

pytestmark = pytest.mark.anyio

TOOLS_LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}


@pytest.mark.parametrize(
    "body",
    [TOOLS_LIST, {"jsonrpc": "2.0", "method": "notifications/initialized"}, "not json"],
    ids=["request", "notification", "garbage"],
)
async def test_session_table_a_request_that_opens_nothing_closes_nothing(
    tmp_path: Any, body: object
) -> None:
    # A POST without a session id that is no initialize (a bogus or replayed request)
    # closed the sender's own longest-idle session to make room for a session the SDK
    # then refused to open.
    app, lifespan, server = _endpoint(tmp_path, limit=1)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        first = await _open(client, "agent")
        headers = {**ACCEPT, "X-Token": "agent", "Content-Type": "application/json"}
        content = body if isinstance(body, str) else httpx.Request("POST", URL, json=body).content
        refused = await client.post(URL, content=content, headers=headers)
        assert refused.status_code >= 400, refused.text
        assert (await _ping(client, "agent", first)).status_code == 200
        manager: Any = server.session_manager
        assert list(manager._server_instances) == [first]


async def _end_as_idle(server: Any, session: str) -> None:
    """End ``session`` as the SDK does once it was idle for its timeout (its idle scope
    cancelled), and wait until the SDK forgot it; no request reaches the session."""
    instances = server.session_manager._server_instances
    instances[session].idle_scope.cancel()
    with anyio.fail_after(30):
        while session in instances:
            await anyio.sleep(0.01)


async def test_session_table_a_session_the_sdk_ended_is_not_counted(tmp_path: Any) -> None:
    # A session the SDK discarded by itself (30 minutes idle, or its task crashed) stayed
    # in recalld's table: it counted against the client's share, so the next initialize
    # closed a live session to make room the client already had.
    app, lifespan, server = _endpoint(tmp_path, limit=2)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        live = await _open(client, "agent")
        reaped = await _open(client, "agent")
        assert (await _ping(client, "agent", reaped)).status_code == 200  # live is idler
        await _end_as_idle(server, reaped)
        await _open(client, "agent")
        kept = await _ping(client, "agent", live)
    assert kept.status_code == 200, kept.text


async def test_session_table_a_reaped_session_is_not_said_closed_to_make_room(
    tmp_path: Any,
) -> None:
    app, lifespan, server = _endpoint(tmp_path, limit=1)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        reaped = await _open(client, "agent")
        await _end_as_idle(server, reaped)
        await _open(client, "agent")
        answer = await _ping(client, "agent", reaped)
    assert answer.status_code == 404
    assert "closed to make room" not in answer.text, answer.text


async def test_session_table_hands_on_a_body_past_its_limit_whole() -> None:
    received: list[bytes] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            received.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 413, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    table = SessionTable(app, per_client=1, max_body=4)
    chunks = [b"abc", b"def", b"ghi"]

    async def receive() -> Message:
        body = chunks.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(chunks)}

    async def send(message: Message) -> None:
        """The answer is not looked at."""

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
    await table(scope, receive, send)
    assert b"".join(received) == b"abcdefghi"
    assert table.open_sessions == 0


@pytest.mark.parametrize("version", ["2025-13-01", "1999-01-01"])
async def test_session_table_a_version_the_server_does_not_speak_is_named(
    tmp_path: Any, version: str
) -> None:
    # The SDK took such a request for a sessionless (2026-07-28) one and answered that
    # params._meta lacked its envelope keys, which said nothing of the version sent.
    app, lifespan, _server = _endpoint(tmp_path, limit=2)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        session = await _open(client, "agent")
        headers = {**ACCEPT, "X-Token": "agent", "Mcp-Session-Id": session}
        headers["Mcp-Protocol-Version"] = version
        refused = await client.post(URL, json=TOOLS_LIST, headers=headers)
        still = await _ping(client, "agent", session)
    assert refused.status_code == 400
    message = refused.json()["error"]["message"]
    assert message.startswith(f'Mcp-Protocol-Version: "{version}" is not a protocol version')
    assert "2025-06-18" in message
    assert still.status_code == 200


async def test_session_table_records_a_session_opened_without_an_initialize() -> None:
    # Were the SDK to open a session for another request, the table, which made no
    # room for it, still counts it against its client's share.
    stand_in = _StandIn()
    table = SessionTable(stand_in, per_client=1)
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}

    async def receive() -> Message:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Message) -> None:
        """The answer is not looked at."""

    await table(scope, receive, send)
    assert table.open_sessions == 1
    assert stand_in.deleted == []


async def test_session_table_of_recalld_mcp_over_http_forgets_a_session_the_sdk_ended(
    tmp_path: Any,
) -> None:
    # recalld mcp --transport http builds its table apart from recalld serve's: the SDK
    # tells it too when a session ends (review of pass e69).
    settings = Settings(db=tmp_path / "o.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    _bound_sessions(app, server, "/mcp")
    table = next(r.app for r in app.routes if isinstance(r, Route) and r.path == "/mcp")
    assert isinstance(table, SessionTable)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, timeout=30) as client,
    ):
        session = await _open(client, None)
        assert table.open_sessions == 1
        await _end_as_idle(server, session)
        assert table.open_sessions == 0
