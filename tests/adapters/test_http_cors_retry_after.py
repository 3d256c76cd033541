"""A page of an origin in ``RECALLD_CORS_ORIGINS`` may read ``Retry-After`` (integration
read, stop 67).

Two refusals of stop 67 tell the client when to send again by ``Retry-After`` alone:
``429 too_many_requests`` (a token past its share of requests, pass c67, whose clients
must now wait for it) and ``503 database_busy`` (a PostgreSQL deadlock or serialization
failure, pass b67). ``Retry-After`` is not a header a cross-origin page may read unless
the server exposes it, and only ``Mcp-Session-Id`` and ``ETag`` were: the page saw the
status, never how long to wait."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import DatabaseBusyError
from recalld.service import MemoryService

ORIGIN = "http://app.example"


def test_http_a_cors_page_may_read_how_long_to_wait_before_sending_again(
    service: MemoryService, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(*_: object, **__: object) -> None:
        raise DatabaseBusyError("the write conflicted with another client's")

    monkeypatch.setattr(service, "stats", busy)
    allowed = Settings(db=settings.db, embedder="none", cors_origins=[ORIGIN])
    with TestClient(
        create_app(service, allowed), client=("127.0.0.1", 40000), base_url="http://127.0.0.1"
    ) as client:
        answer = client.get("/v1/stats", headers={"Origin": ORIGIN})
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["type"] == "database_busy"
    assert answer.headers["retry-after"] == "1"
    exposed = answer.headers["access-control-expose-headers"].lower()
    assert "retry-after" in [name.strip() for name in exposed.split(",")]
