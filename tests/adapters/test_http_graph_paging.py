"""Walking the REST graph listings by their cursors reaches every entity, whatever its
name: the server takes back every cursor it gives."""

from __future__ import annotations

from fastapi.testclient import TestClient

from recalld.service import MemoryService

# 200 CJK letters (a cursor of 1,623 characters, refused by the 1,000 the route allowed),
# and the longest key a 200-character name can have (U+FDFA folds to 18 letters).
LONG_NAMES = ["日" * 200, "\ufdfa" * 200, "月" * 200]


def test_http_graph_entities_walk_past_long_names(
    service: MemoryService, client: TestClient
) -> None:
    service.knowledge.create_entities(
        [{"name": name, "entityType": "place", "observations": []} for name in LONG_NAMES]
    )
    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 1}
    while True:
        response = client.get("/v1/graph/entities", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        seen += [entity["name"] for entity in page["entities"]]
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert sorted(seen) == sorted(LONG_NAMES)


def test_http_graph_cursor_over_the_bound_names_the_field(client: TestClient) -> None:
    response = client.get("/v1/graph/entities", params={"cursor": "A" * 9001})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "cursor"
