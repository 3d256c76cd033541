"""A REST JSON body one of whose objects gives a key twice is refused naming the key.

JSON leaves such an object's meaning open; Python's parser kept the last value without a
word, so ``{"content": "a", "content": "b"}`` stored ``b`` where a proxy or a log that
reads the first saw ``a``. The MCP server (``-32600``), the CLI's ``--meta`` and the REST
query string and headers (422) already refuse a value given twice; the REST body now
does too. In-process (Starlette's test client on the app).
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from recalld.service import MemoryService

JSON = {"Content-Type": "application/json"}


def test_http_a_body_key_given_twice_is_refused_naming_it(
    client: TestClient, service: MemoryService
) -> None:
    refused = client.post(
        "/v1/memories", content=b'{"content": "first", "content": "second"}', headers=JSON
    )
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (error["type"], error["field"]) == ("validation_error", "content"), error
    assert "twice" in error["message"], error
    assert service.stats().count == 0


def test_http_a_nested_key_given_twice_is_refused_and_changes_nothing(
    client: TestClient, service: MemoryService
) -> None:
    body = b'{"content": "nested", "meta": {"order": 1, "order": 2}}'
    refused = client.post("/v1/memories", content=body, headers=JSON)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "order"
    assert service.stats().count == 0
    # The same body with each key once is stored.
    stored = client.post(
        "/v1/memories", content=b'{"content": "nested", "meta": {"order": 1}}', headers=JSON
    )
    assert stored.status_code == 200, stored.text
