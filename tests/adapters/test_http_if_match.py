"""Conditional edits over REST: the ETag of a memory and If-Match on PATCH (412 when stale)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.errors import PreconditionFailedError
from recalld.service import MemoryService
from recalld.versions import memory_version


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """Both stores: the version must read back the same from each."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _stored(client: TestClient, **fields: Any) -> tuple[str, str]:
    """A new memory's id and the ETag its GET answers with."""
    created = client.post("/v1/memories", json={"content": "The boat leaves at nine", **fields})
    assert created.status_code == 200, created.text
    memory_id = str(created.json()["id"])
    read = client.get(f"/v1/memories/{memory_id}")
    assert read.status_code == 200, read.text
    return memory_id, read.headers["ETag"]


def test_http_memory_etag_changes_with_an_edit_not_with_a_read(client: TestClient) -> None:
    memory_id, tag = _stored(client)
    assert tag == f'"{tag.strip(chr(34))}"'
    assert len(tag) == 34
    assert client.post("/v1/recall", json={"query": "boat"}).status_code == 200  # counts access
    assert client.get(f"/v1/memories/{memory_id}").headers["ETag"] == tag
    edited = client.patch(f"/v1/memories/{memory_id}", json={"title": "Ferry"})
    assert edited.status_code == 200, edited.text
    assert edited.headers["ETag"] != tag
    assert client.get(f"/v1/memories/{memory_id}").headers["ETag"] == edited.headers["ETag"]


def test_http_patch_with_a_stale_if_match_is_refused_and_changes_nothing(
    client: TestClient,
) -> None:
    memory_id, tag = _stored(client)
    # Another tab (or an agent) edits first, from the same read.
    first = client.patch(
        f"/v1/memories/{memory_id}",
        json={"content": "The boat leaves at ten"},
        headers={"If-Match": tag},
    )
    assert first.status_code == 200, first.text
    second = client.patch(
        f"/v1/memories/{memory_id}",
        json={"content": "The boat leaves at eight"},
        headers={"If-Match": tag},
    )
    assert second.status_code == 412, second.text
    error = second.json()["error"]
    assert error["type"] == "precondition_failed"
    assert error["field"] == "If-Match"
    assert "changed since it was read" in error["message"]
    kept = client.get(f"/v1/memories/{memory_id}").json()
    assert kept["content"] == "The boat leaves at ten"


def test_http_patch_if_match_forms(client: TestClient) -> None:
    memory_id, tag = _stored(client)
    path = f"/v1/memories/{memory_id}"
    # One of several tags, and *, match; a weak tag never does (strong comparison).
    listed = client.patch(path, json={"title": "a"}, headers={"If-Match": f'"0", {tag}'})
    assert listed.status_code == 200, listed.text
    assert client.patch(path, json={"title": "b"}, headers={"If-Match": "*"}).status_code == 200
    current = client.get(path).headers["ETag"]
    weak = client.patch(path, json={"title": "c"}, headers={"If-Match": f"W/{current}"})
    assert weak.status_code == 412, weak.text
    for malformed in ("", "abc", '"open'):
        refused = client.patch(path, json={"title": "d"}, headers={"If-Match": malformed})
        assert refused.status_code == 422, (malformed, refused.text)
        assert refused.json()["error"]["field"] == "If-Match"
    assert client.get(path).json()["title"] == "b"
    # A memory that is not there is not found, whatever the condition.
    missing = client.patch("/v1/memories/nope", json={"title": "e"}, headers={"If-Match": tag})
    assert missing.status_code == 404, missing.text


def test_service_update_expected_version(service: MemoryService) -> None:
    receipt = service.remember("Lunch with Sam on Friday")
    version = memory_version(service.get(receipt.id))
    service.update(receipt.id, expected_version=version, title="Lunch")
    with pytest.raises(PreconditionFailedError, match="changed since it was read") as raised:
        service.update(receipt.id, expected_version=version, title="Dinner")
    assert raised.value.field == "expected_version"
    assert service.get(receipt.id).title == "Lunch"


def test_http_patch_etag_is_the_one_the_next_read_answers(client: TestClient) -> None:
    # Every kind of field the editor sends: the version the PATCH answers must be the one a
    # read gives, or the browser's next edit (made from the PATCH's answer) is refused.
    memory_id, _ = _stored(client, tags=["b", "a"], salience=0.37)
    changes = {
        "tags": ["zeta", "alpha", "new york, ny"],
        "meta": {"order": 12345678901234567891, "nested": {"x": [1, 2.5]}},
        "place": {"lat": -37.8136, "lon": 144.9631, "name": "Docklands"},
        "at": "2026-10-25T08:10:00.123456+02:00",
        "salience": 0.1 + 0.2,
        "ttl_seconds": 86400,
        "content": "line one\r\nline two",
    }
    edited = client.patch(f"/v1/memories/{memory_id}", json=changes)
    assert edited.status_code == 200, edited.text
    assert client.get(f"/v1/memories/{memory_id}").headers["ETag"] == edited.headers["ETag"]
    again = client.patch(
        f"/v1/memories/{memory_id}",
        json={"title": "t"},
        headers={"If-Match": edited.headers["ETag"]},
    )
    assert again.status_code == 200, again.text


def test_http_a_cors_page_may_read_the_etag_and_send_if_match(
    service: MemoryService, settings: Settings
) -> None:
    origin = "http://app.example"
    allowed = Settings(db=settings.db, embedder="none", cors_origins=[origin])
    with TestClient(
        create_app(service, allowed), client=("127.0.0.1", 40000), base_url="http://127.0.0.1"
    ) as client:
        memory_id, _ = _stored(client)
        preflight = client.options(
            f"/v1/memories/{memory_id}",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "PATCH",
                "Access-Control-Request-Headers": "content-type, if-match",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert "if-match" in preflight.headers["access-control-allow-headers"].lower()
        read = client.get(f"/v1/memories/{memory_id}", headers={"Origin": origin})
        exposed = read.headers["access-control-expose-headers"].lower()
        assert "etag" in [name.strip() for name in exposed.split(",")]


def _race(service: MemoryService, memory_id: str, version: str, editors: int) -> list[str]:
    """``editors`` threads update ``memory_id`` from ``version`` at once: each one's outcome."""
    start = threading.Barrier(editors)
    outcomes: list[str] = []
    lock = threading.Lock()

    def edit(number: int) -> None:
        start.wait()
        try:
            service.update(memory_id, expected_version=version, content=f"edit {number}")
        except PreconditionFailedError:
            outcome = "refused"
        else:
            outcome = f"edit {number}"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=edit, args=(number,)) for number in range(editors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return outcomes


def test_service_concurrent_updates_from_one_version_exactly_one_wins(
    service: MemoryService,
) -> None:
    # Several editors from the same read, at once: the check and the write are one step
    # (the row locked on PostgreSQL, the database on SQLite), so one edit lands and every
    # other is refused; none overwrites the winner unseen.
    editors = 6
    for round_number in range(5):
        receipt = service.remember(f"Concurrent edits, round {round_number}")
        version = memory_version(service.get(receipt.id))
        outcomes = _race(service, receipt.id, version, editors)
        winners = [outcome for outcome in outcomes if outcome != "refused"]
        assert len(outcomes) == editors
        assert len(winners) == 1, outcomes
        assert service.get(receipt.id).content == winners[0]


def test_http_delete_with_a_stale_if_match_is_refused_and_forgets_nothing(
    client: TestClient,
) -> None:
    memory_id, tag = _stored(client)
    path = f"/v1/memories/{memory_id}"
    assert client.patch(path, json={"title": "Ferry"}).status_code == 200  # an agent's edit
    refused = client.delete(path, headers={"If-Match": tag})
    assert refused.status_code == 412, refused.text
    assert refused.json()["error"]["field"] == "If-Match"
    assert client.get(path).json()["title"] == "Ferry"
    weak = client.delete(path, headers={"If-Match": f"W/{client.get(path).headers['ETag']}"})
    assert weak.status_code == 412, weak.text
    forgotten = client.delete(
        path, headers={"If-Match": f'"0", {client.get(path).headers["ETag"]}'}
    )
    assert forgotten.status_code == 200, forgotten.text
    assert forgotten.json()["deleted"] is True
    assert client.get(path).status_code == 404
    # Gone: as without the header, deleting is idempotent.
    again = client.delete(path, headers={"If-Match": tag})
    assert (again.status_code, again.json()["deleted"]) == (200, False)


def test_service_forget_expected_version(service: MemoryService) -> None:
    receipt = service.remember("Dinner with Sam on Friday")
    version = memory_version(service.get(receipt.id))
    service.update(receipt.id, title="Dinner")
    with pytest.raises(PreconditionFailedError, match="changed since it was read"):
        service.forget(receipt.id, expected_version=version)
    current = memory_version(service.get(receipt.id))
    assert service.forget(receipt.id, expected_version=current).deleted


def test_http_if_match_is_read_as_an_rfc_9110_list(client: TestClient) -> None:
    memory_id, tag = _stored(client)
    path = f"/v1/memories/{memory_id}"
    # A comma inside a tag is part of it (RFC 9110 etagc): a tag that is not the memory's,
    # so 412, not a malformed header.
    comma = client.patch(path, json={"title": "a"}, headers={"If-Match": '"a,b"'})
    assert comma.status_code == 412, comma.text
    # Empty list elements and whitespace around them are allowed.
    spaced = client.patch(path, json={"title": "b"}, headers={"If-Match": f' ,, W/"x" ,\t{tag} ,'})
    assert spaced.status_code == 200, spaced.text
    tag = spaced.headers["ETag"]
    for malformed in ('"a" "b"', '"a b"', f"{tag} x", "**", "W/*", "w/" + tag, " , "):
        refused = client.patch(path, json={"title": "c"}, headers={"If-Match": malformed})
        assert refused.status_code == 422, (malformed, refused.text)
        assert refused.json()["error"]["field"] == "If-Match"
    long_list = ", " * 4000 + "x"
    refused = client.patch(path, json={"title": "d"}, headers={"If-Match": long_list})
    assert refused.status_code == 422, refused.text
    assert client.get(path).json()["title"] == "b"
