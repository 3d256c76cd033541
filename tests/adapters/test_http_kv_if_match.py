"""Conditional writes of a key over REST: ``If-Match`` on ``PUT /v1/kv/{key}`` (412 when stale)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.config import Settings
from recalld.errors import PreconditionFailedError
from recalld.service import MemoryService
from recalld.versions import ANY_VERSION, memory_version

PATH = "/v1/kv/ferry.time"


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """Both stores: the condition is checked in the writing transaction of each."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def test_http_kv_get_and_put_answer_the_version_as_etag(client: TestClient) -> None:
    written = client.put(PATH, json={"value": "nine"})
    assert written.status_code == 200, written.text
    read = client.get(PATH)
    assert read.status_code == 200, read.text
    assert read.headers["ETag"] == written.headers["ETag"]
    assert read.headers["ETag"] == client.get(f"/v1/memories/{read.json()['id']}").headers["ETag"]


def test_http_kv_put_with_a_stale_if_match_is_refused_and_writes_nothing(
    client: TestClient,
) -> None:
    assert client.put(PATH, json={"value": "nine"}).status_code == 200
    tag = client.get(PATH).headers["ETag"]
    # Two agents read the same value; the first write wins, the second is told.
    first = client.put(PATH, json={"value": "ten"}, headers={"If-Match": tag})
    assert first.status_code == 200, first.text
    assert first.headers["ETag"] != tag
    second = client.put(PATH, json={"value": "eight"}, headers={"If-Match": tag})
    assert second.status_code == 412, second.text
    error = second.json()["error"]
    assert (error["type"], error["field"]) == ("precondition_failed", "If-Match")
    assert "changed since it was read" in error["message"]
    assert client.get(PATH).json()["content"] == "ten"
    current = client.get(PATH).headers["ETag"]
    weak = client.put(PATH, json={"value": "eight"}, headers={"If-Match": f"W/{current}"})
    assert weak.status_code == 412, weak.text
    listed = client.put(PATH, json={"value": "seven"}, headers={"If-Match": f'"0", {current}'})
    assert listed.status_code == 200, listed.text
    assert client.get(PATH).json()["content"] == "seven"


def test_http_kv_put_if_match_on_a_key_holding_nothing_creates_nothing(
    client: TestClient,
) -> None:
    # RFC 9110: If-Match (even *) is false when there is no current representation.
    for condition in ("*", '"0123456789abcdef0123456789abcdef"'):
        refused = client.put(PATH, json={"value": "nine"}, headers={"If-Match": condition})
        assert refused.status_code == 412, (condition, refused.text)
        assert refused.json()["error"]["field"] == "If-Match"
        assert "holds no memory" in refused.json()["error"]["message"]
        assert client.get(PATH).status_code == 404
    assert client.put(PATH, json={"value": "nine"}).status_code == 200
    star = client.put(PATH, json={"value": "ten"}, headers={"If-Match": "*"})
    assert star.status_code == 200, star.text
    assert client.get(PATH).json()["content"] == "ten"
    malformed = client.put(PATH, json={"value": "eleven"}, headers={"If-Match": "ten"})
    assert malformed.status_code == 422, malformed.text
    assert malformed.json()["error"]["field"] == "If-Match"
    assert client.get(PATH).json()["content"] == "ten"


def test_service_put_expected_version(service: MemoryService) -> None:
    draft = {"content": "nine", "key": "ferry.time", "kind": "kv"}
    with pytest.raises(PreconditionFailedError, match="holds no memory"):
        service.put(draft, dedupe=True, expected_version=ANY_VERSION)
    _, memory = service.put(draft, dedupe=True)
    version = memory_version(memory)
    service.put({**draft, "content": "ten"}, dedupe=True, expected_version=version)
    with pytest.raises(PreconditionFailedError, match="changed since it was read"):
        service.put({**draft, "content": "eight"}, dedupe=True, expected_version=version)
    assert service.get(key="ferry.time").content == "ten"


def test_http_kv_delete_with_a_stale_if_match_deletes_nothing(client: TestClient) -> None:
    # The header was ignored: a delete decided on a value another agent has replaced
    # since deleted the new value.
    assert client.put(PATH, json={"value": "nine"}).status_code == 200
    tag = client.get(PATH).headers["ETag"]
    assert client.put(PATH, json={"value": "ten"}).status_code == 200
    refused = client.delete(PATH, headers={"If-Match": tag})
    assert refused.status_code == 412, refused.text
    assert refused.json()["error"]["field"] == "If-Match"
    assert client.get(PATH).json()["content"] == "ten"
    current = client.get(PATH).headers["ETag"]
    deleted = client.delete(PATH, headers={"If-Match": current})
    assert (deleted.status_code, deleted.json()["deleted"]) == (200, True)
    # Gone: as a memory's delete, idempotent with the header too.
    again = client.delete(PATH, headers={"If-Match": current})
    assert (again.status_code, again.json()["deleted"]) == (200, False)


def test_http_if_none_match_on_a_write_is_refused_and_changes_nothing(
    client: TestClient,
) -> None:
    # It was ignored: a client meaning "create only if absent" overwrote the value.
    assert client.put(PATH, json={"value": "nine"}).status_code == 200
    memory_id = client.get(PATH).json()["id"]
    writes = [
        ("PUT", PATH, {"value": "ten"}),
        ("PATCH", f"/v1/memories/{memory_id}", {"content": "ten"}),
        ("DELETE", PATH, None),
        ("DELETE", f"/v1/memories/{memory_id}", None),
    ]
    for method, path, body in writes:
        refused = client.request(method, path, json=body, headers={"If-None-Match": "*"})
        assert refused.status_code == 422, (method, path, refused.text)
        assert refused.json()["error"]["field"] == "If-None-Match"
    assert client.get(PATH).json()["content"] == "nine"
