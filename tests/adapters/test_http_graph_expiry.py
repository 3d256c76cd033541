"""The /v1/graph routes after a memory's TTL passes, before the purge: the entities and
relations only it stated are gone, and an entity another memory mentions keeps its live
count. In-process (Starlette's test client on the app), with the rule-based extractor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    # No purge while a test runs: the reads alone must hide what expired.
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        purge_interval_seconds=3600,
    )


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_http_graph_hides_what_an_expired_memory_said(
    client: TestClient, service: MemoryService, clock: FakeClock
) -> None:
    service.remember("Bartholomew Quagmire's bakery is in Ouagadougou.", ttl_seconds=5)
    service.remember("Ouagadougou is hot in May.")
    service.new_worker().run_until_idle()
    listed = _ok(client.get("/v1/graph/entities"))["entities"]
    assert {e["name"]: e["mentions"] for e in listed} == {
        "Bartholomew Quagmire": 1,
        "bakery": 1,
        "Ouagadougou": 2,
    }
    assert _ok(client.get("/v1/graph/entities/Bartholomew Quagmire"))["relations"]
    assert len(_ok(client.get("/v1/graph/relations"))["relations"]) == 1

    clock.advance(6)
    listed = _ok(client.get("/v1/graph/entities"))["entities"]
    assert [(e["name"], e["mentions"]) for e in listed] == [("Ouagadougou", 1)]
    assert client.get("/v1/graph/entities/Bartholomew Quagmire").status_code == 404
    assert _ok(client.get("/v1/graph/relations"))["relations"] == []
    assert client.get("/v1/graph/relations", params={"entity": "bakery"}).status_code == 404
