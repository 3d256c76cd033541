"""``GET /v1/graph/mentions?memory`` (the entities one memory mentions, for the browser's
"entities" action on a memory) and entity names holding a slash in ``/v1/graph/entities/{name}``.

In-process (Starlette's test client on the app), with the rule-based extractor.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from recalld.service import MemoryService
from recalld.tokens import TokenRegistry


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_http_graph_mentions_lists_the_entities_a_memory_mentions(
    client: TestClient, service: MemoryService
) -> None:
    receipt = service.remember(
        "Kate: Anna and Anna's friend Bruno met in Porto.", tags=["travel"], namespace="alpha"
    )
    service.remember("Oslo is far from here.", namespace="alpha")
    service.new_worker().run_until_idle()
    answer = _ok(
        client.get(
            "/v1/graph/mentions",
            params={"memory": receipt.id},
            headers={"X-Recalld-Namespace": "alpha"},
        )
    )
    assert answer["memory_id"] == receipt.id
    names = [item["entity"]["name"] for item in answer["entities"]]
    assert {"Kate", "Anna", "Bruno", "Porto", "travel"} <= set(names)
    assert "Oslo" not in names  # mentioned by another memory only
    assert names[0] == "Anna"  # mentioned twice: listed first
    assert answer["entities"][0]["count"] == 2


def test_http_graph_mentions_is_scoped_and_reports_unknown_memories(
    client: TestClient, service: MemoryService
) -> None:
    receipt = service.remember("Bruno went to Oslo.", namespace="beta")
    service.new_worker().run_until_idle()
    elsewhere = client.get(
        "/v1/graph/mentions",
        params={"memory": receipt.id},
        headers={"X-Recalld-Namespace": "alpha"},
    )
    assert elsewhere.status_code == 404  # the memory is in another namespace
    missing = client.get("/v1/graph/mentions", params={"memory": "no-such-memory"})
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found"
    assert client.get("/v1/graph/mentions").status_code == 422

    token = TokenRegistry.for_store(service.store).create("other", {"alpha": "read"}).token
    denied = client.get(
        "/v1/graph/mentions",
        params={"memory": receipt.id},
        headers={"Authorization": f"Bearer {token}", "X-Recalld-Namespace": "beta"},
    )
    assert denied.status_code == 403


def test_http_graph_entity_names_with_a_slash_are_found(
    client: TestClient, service: MemoryService
) -> None:
    service.remember("Filed under a nested tag", tags=["work/urgent"])
    service.new_worker().run_until_idle()
    detail = _ok(client.get("/v1/graph/entities/work%2Furgent"))
    assert detail["entity"]["name"] == "work/urgent"
    assert detail["entity"]["type"] == "tag"
    assert len(detail["mentions"]) == 1
