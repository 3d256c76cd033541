"""Each client holds at most so many MCP sessions: at its limit, opening another closes
its longest-idle one, whose next request is told so (404); the SDK's limit is for the
whole server, so one client opening sessions it never closed refused every other
client's ``initialize`` for up to 30 minutes (adversarial passes c65, d68)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from recalld.adapters.http_mcp_sessions import owned_by
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import Caller
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream"}
# The SDK checks the Host of a loopback server, port included.
URL = "http://127.0.0.1:8765/mcp"
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


def _as_token(app: ASGIApp) -> ASGIApp:
    """``app``, called by the token the test names in ``X-Token`` (as ``recalld serve``
    names the authenticated token: http_api's namespace guard), or trusted."""

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        token = dict(scope["headers"]).get(b"x-token")
        if token is not None:
            scope = owned_by(scope, Caller(token_id=token.decode(), scopes={}))
        await app(scope, receive, send)

    return named


def _endpoint(tmp_path: Path, limit: int) -> tuple[ASGIApp, Any, Any]:
    settings = Settings(db=tmp_path / "limits.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    endpoint, lifespan = http_endpoint(
        server, path="/mcp", host="127.0.0.1", sessions_per_client=limit
    )
    return _as_token(endpoint), lifespan, server


async def _open(client: httpx.AsyncClient, token: str | None) -> str:
    headers = {**ACCEPT, **({"X-Token": token} if token is not None else {})}
    answer = await client.post(URL, json=INITIALIZE, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


async def _ping(client: httpx.AsyncClient, token: str | None, session: str) -> httpx.Response:
    headers = {**ACCEPT, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    if token is not None:
        headers["X-Token"] = token
    return await client.post(URL, json=PING, headers=headers)


@pytest.mark.parametrize("token", ["greedy", None])
async def test_a_client_at_its_limit_closes_its_longest_idle_session(
    tmp_path: Path, token: str | None
) -> None:
    # A token was refused 503 past its share, and a trusted (tokenless loopback) caller
    # had no share: it could take the server's 10,000 and lock every client out.
    app, lifespan, server = _endpoint(tmp_path, limit=2)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        first = await _open(client, token)
        second = await _open(client, token)
        assert (await _ping(client, token, first)).status_code == 200  # second is idler
        third = await _open(client, token)
        evicted = await _ping(client, token, second)
        assert evicted.status_code == 404, evicted.text
        message = evicted.json()["error"]["message"]
        assert message.startswith("Session not found: it was closed to make room")
        assert "at most 2 are open per client" in message
        assert (await _ping(client, token, first)).status_code == 200
        assert (await _ping(client, token, third)).status_code == 200
        # Another client's sessions are not this client's room.
        other = await _open(client, "polite" if token is None else None)
        assert (await _ping(client, token, first)).status_code == 200
        manager: Any = server.session_manager
        assert sorted(manager._server_instances) == sorted([first, third, other])


async def test_a_session_its_client_closed_is_room_for_another(tmp_path: Path) -> None:
    app, lifespan, _server = _endpoint(tmp_path, limit=2)
    transport = httpx.ASGITransport(app=app)
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        first = await _open(client, "greedy")
        second = await _open(client, "greedy")
        closing = {**ACCEPT, "X-Token": "greedy", "Mcp-Session-Id": first}
        closing["Mcp-Protocol-Version"] = "2025-06-18"
        assert (await client.delete(URL, headers=closing)).status_code == 200
        await _open(client, "greedy")
        # Nothing was closed for it: the session left open still answers.
        assert (await _ping(client, "greedy", second)).status_code == 200


async def test_concurrent_initializes_of_one_client_stay_within_its_limit(tmp_path: Path) -> None:
    # The count read the SDK's record of owners, which a session joins only once its
    # request is under way: ten initializes sent at once all passed a limit of 2
    # (review of pass c65).
    app, lifespan, server = _endpoint(tmp_path, limit=2)
    transport = httpx.ASGITransport(app=app)
    statuses: list[int] = []
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:

        async def open_one() -> None:
            headers = {**ACCEPT, "X-Token": "greedy"}
            answer = await client.post(URL, json=INITIALIZE, headers=headers)
            statuses.append(answer.status_code)

        async with anyio.create_task_group() as tasks:
            for _ in range(10):
                tasks.start_soon(open_one)
        manager: Any = server.session_manager
        owners = list(manager._session_owners.values())
    assert set(statuses) <= {200, 503}, statuses
    assert 200 in statuses
    assert len(owners) <= 2
