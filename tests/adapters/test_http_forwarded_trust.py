"""A request a proxy forwarded is never trusted without a token, whatever it claims.

Without tokens ``recalld serve`` trusts loopback callers, by the address uvicorn gives
the request. uvicorn rewrites that address from ``X-Forwarded-For`` when the peer is in
``FORWARDED_ALLOW_IPS``, read from the environment: with ``FORWARDED_ALLOW_IPS=*`` it
takes the first address the header names, which the client wrote, so a remote client
behind a local proxy claiming ``X-Forwarded-For: 127.0.0.1`` was trusted with every
namespace. The servers are built as ``serve`` builds them and driven in process."""

from __future__ import annotations

import pytest
import uvicorn
from fastapi.testclient import TestClient
from sse_starlette.sse import AppStatus

from recalld.adapters import http_api
from recalld.config import Settings
from recalld.service import MemoryService

# A client of a proxy on this machine (nginx's $proxy_add_x_forwarded_for appends the
# client's own address to what the client sent).
CLAIMED = "127.0.0.1, 203.0.113.9"


@pytest.fixture
def served(
    service: MemoryService, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> TestClient:
    """The app as ``recalld serve`` runs it (uvicorn's proxy headers on, trusting any
    proxy), reached from a peer that is not loopback; nothing listens."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    started: list[uvicorn.Config] = []

    def run(self: uvicorn.Server, sockets: object = None) -> None:
        started.append(self.config)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.setattr(
        AppStatus, "enable_automatic_graceful_drain", AppStatus.enable_automatic_graceful_drain
    )
    http_api.serve(service, settings)
    (config,) = started
    config.load()
    return TestClient(config.loaded_app, base_url="http://127.0.0.1:8765")


def test_http_a_forwarded_request_claiming_loopback_is_not_trusted(served: TestClient) -> None:
    response = served.get("/v1/memories", headers={"X-Forwarded-For": CLAIMED})
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["type"] == "unauthorized"
    assert "X-Forwarded-For" in error["message"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("Forwarded", "for=127.0.0.1"), ("X-Real-IP", "127.0.0.1"), ("X-Forwarded-For", "::1")],
)
def test_http_any_forwarding_header_needs_a_token(
    served: TestClient, name: str, value: str
) -> None:
    # A local proxy is the peer here: whom it forwarded for is its word, not this machine's.
    local = TestClient(served.app, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 5000))
    assert local.get("/v1/memories").status_code == 200  # loopback itself stays trusted
    refused = local.get("/v1/memories", headers={name: value})
    assert refused.status_code == 401
    assert name in refused.json()["error"]["message"]
