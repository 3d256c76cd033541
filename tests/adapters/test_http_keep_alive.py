"""Both HTTP servers keep an idle connection open longer than clients' pools keep it (and
close one that holds no request: test_http_connections).

uvicorn's default (5 s) equals httpx's pool expiry: the server closed a connection just
as a client reused it, a transport error for the client (stop 65: 13 of 9,000 requests).
The servers are built as ``serve`` and ``mcp --transport http`` build them, and stopped
before they listen: only the configuration they would run is read."""

from __future__ import annotations

import pytest
import uvicorn
from sse_starlette.sse import AppStatus

from recalld.adapters import http_api, mcp_server
from recalld.adapters.http_connections import BoundedMcpRequestHead, BoundedRequestHead
from recalld.config import Settings
from recalld.service import MemoryService

# httpx's pool expiry, aiohttp's, and a load balancer's usual idle timeout.
CLIENT_POOL_SECONDS = (5, 15, 60)


@pytest.fixture
def configs(monkeypatch: pytest.MonkeyPatch) -> list[uvicorn.Config]:
    """The configurations the servers were started with (none of them listens)."""
    started: list[uvicorn.Config] = []

    def run(self: uvicorn.Server, sockets: object = None) -> None:
        started.append(self.config)

    async def serve(self: uvicorn.Server, sockets: object = None) -> None:
        started.append(self.config)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.setattr(uvicorn.Server, "serve", serve)
    # The servers switch sse-starlette's process-wide drain off: restored after the test.
    monkeypatch.setattr(
        AppStatus, "enable_automatic_graceful_drain", AppStatus.enable_automatic_graceful_drain
    )
    return started


def test_http_serve_keeps_idle_connections_longer_than_client_pools(
    service: MemoryService, settings: Settings, configs: list[uvicorn.Config]
) -> None:
    http_api.serve(service, settings)
    (config,) = configs
    assert config.timeout_keep_alive > max(CLIENT_POOL_SECONDS)
    assert config.http is BoundedRequestHead  # nor a connection held without a request


def test_mcp_http_keeps_idle_connections_longer_than_client_pools(
    settings: Settings, configs: list[uvicorn.Config]
) -> None:
    server = mcp_server.build_server(lambda: MemoryService.open(settings), ["native"])
    mcp_server.run_server(server, transport="http", port=8766)
    (config,) = configs
    assert config.timeout_keep_alive > max(CLIENT_POOL_SECONDS)
    assert config.http is BoundedMcpRequestHead  # nor a connection held without a request
    assert issubclass(config.http, BoundedRequestHead)  # refusing as JSON-RPC
