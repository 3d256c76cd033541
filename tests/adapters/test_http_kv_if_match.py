"""Conditional writes of a key over REST: ``If-Match`` on ``PUT /v1/kv/{key}`` (412 when stale)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.config import Settings
from recalld.errors import PreconditionFailedError
from recalld.service import MemoryService
from recalld.versions import ABSENT, ANY_VERSION, memory_version
from tests.conftest import FakeClock

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
    # It was ignored: a client meaning "create only if absent" overwrote the value. A
    # PUT of a key takes it as * (the next test); every other form and write refuses it.
    assert client.put(PATH, json={"value": "nine"}).status_code == 200
    memory_id = client.get(PATH).json()["id"]
    tag = client.get(PATH).headers["ETag"]
    writes = [
        ("PUT", PATH, {"value": "ten"}, {"If-None-Match": tag}),
        ("PUT", PATH, {"value": "ten"}, {"If-None-Match": "*", "If-Match": tag}),
        ("PATCH", f"/v1/memories/{memory_id}", {"content": "ten"}, {"If-None-Match": "*"}),
        ("DELETE", PATH, None, {"If-None-Match": "*"}),
        ("DELETE", f"/v1/memories/{memory_id}", None, {"If-None-Match": "*"}),
    ]
    for method, path, body, headers in writes:
        refused = client.request(method, path, json=body, headers=headers)
        assert refused.status_code == 422, (method, path, refused.text)
        assert refused.json()["error"]["field"] == "If-None-Match"
    assert client.get(PATH).json()["content"] == "nine"


def test_http_kv_put_if_none_match_star_creates_only(client: TestClient, clock: FakeClock) -> None:
    # RFC 9110: If-None-Match: * on a PUT is "create it, never overwrite" (it was refused
    # 422 by pass b65, ignored before: the second writer overwrote the first).
    create_only = {"If-None-Match": "*"}
    first = client.put(PATH, json={"value": "nine"}, headers=create_only)
    assert first.status_code == 200, first.text
    assert first.json()["created"] is True
    tag = first.headers["ETag"]
    second = client.put(PATH, json={"value": "ten"}, headers=create_only)
    assert second.status_code == 412, second.text
    error = second.json()["error"]
    assert (error["type"], error["field"]) == ("precondition_failed", "If-None-Match")
    assert "already holds a memory" in error["message"]
    read = client.get(PATH)
    assert (read.json()["content"], read.headers["ETag"]) == ("nine", tag)
    # An expired memory is none: the key is free again.
    assert client.put(PATH, json={"value": "soon", "ttl_seconds": 1}).status_code == 200
    clock.advance(2)
    again = client.put(PATH, json={"value": "eleven"}, headers=create_only)
    assert again.status_code == 200, again.text
    assert client.get(PATH).json()["content"] == "eleven"


def _key_race(
    service: MemoryService, version: str, writers: int, *, key: str = "ferry.time"
) -> list[str]:
    """``writers`` threads write ``key`` from ``version`` at once: each one's outcome."""
    start = threading.Barrier(writers)
    outcomes: list[str] = []
    lock = threading.Lock()

    def write(number: int) -> None:
        start.wait()
        value = f"writer {number} after {version}"
        try:
            draft = {"content": value, "key": key, "kind": "kv"}
            service.put(draft, dedupe=True, expected_version=version)
        except PreconditionFailedError:
            value = "refused"
        with lock:
            outcomes.append(value)

    threads = [threading.Thread(target=write, args=(number,)) for number in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return outcomes


def test_service_concurrent_key_writes_from_one_version_exactly_one_wins(
    service: MemoryService,
) -> None:
    # The check and the write are one step (the key locked on PostgreSQL, the database on
    # SQLite): of several writers from the same read, one lands and every other is refused.
    writers = 6
    for round_number in range(4):
        draft = {"content": f"round {round_number}", "key": "ferry.time", "kind": "kv"}
        _, memory = service.put(draft, dedupe=True)
        outcomes = _key_race(service, memory_version(memory), writers)
        winners = [outcome for outcome in outcomes if outcome != "refused"]
        assert len(outcomes) == writers
        assert len(winners) == 1, outcomes
        assert service.get(key="ferry.time").content == winners[0]


def test_service_concurrent_creates_of_one_key_exactly_one_wins(service: MemoryService) -> None:
    # ABSENT (If-None-Match: *) is checked with the write: of several creators of a key
    # that holds nothing, one creates it and every other is refused.
    for round_number in range(3):
        key = f"ferry.time.{round_number}"
        outcomes = _key_race(service, ABSENT, 6, key=key)
        winners = [outcome for outcome in outcomes if outcome != "refused"]
        assert len(winners) == 1, outcomes
        assert service.get(key=key).content == winners[0]
