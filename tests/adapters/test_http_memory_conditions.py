"""Conditional keyed writes on ``POST /v1/memories``: ``If-None-Match: *`` and ``If-Match``
as ``PUT /v1/kv/{key}`` takes them (412 and nothing written when the condition fails)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.config import Settings

PATH = "/v1/memories"


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """Both stores: the condition is checked in the writing transaction of each."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _listed(client: TestClient) -> list[str]:
    page = client.get(PATH)
    assert page.status_code == 200, page.text
    return [memory["content"] for memory in page.json()["memories"]]


def test_http_post_memory_if_none_match_creates_only(client: TestClient) -> None:
    created = client.post(
        PATH, json={"key": "ferry.time", "content": "nine"}, headers={"If-None-Match": "*"}
    )
    assert created.status_code == 200, created.text
    assert created.json()["status"] == "created"
    assert created.headers["ETag"] == client.get(f"{PATH}/{created.json()['id']}").headers["ETag"]
    again = client.post(
        PATH, json={"key": "ferry.time", "content": "ten"}, headers={"If-None-Match": "*"}
    )
    assert again.status_code == 412, again.text
    error = again.json()["error"]
    assert (error["type"], error["field"]) == ("precondition_failed", "If-None-Match")
    assert _listed(client) == ["nine"]


def test_http_post_memory_if_match_overwrites_only_the_version_read(client: TestClient) -> None:
    created = client.post(PATH, json={"key": "ferry.time", "content": "nine"})
    assert created.status_code == 200, created.text
    tag = client.get(f"{PATH}/{created.json()['id']}").headers["ETag"]
    first = client.post(
        PATH, json={"key": "ferry.time", "content": "ten"}, headers={"If-Match": tag}
    )
    assert first.status_code == 200, first.text
    stale = client.post(
        PATH, json={"key": "ferry.time", "content": "eight"}, headers={"If-Match": tag}
    )
    assert stale.status_code == 412, stale.text
    assert stale.json()["error"]["field"] == "If-Match"
    assert _listed(client) == ["ten"]
    nothing = client.post(
        PATH, json={"key": "ferry.other", "content": "one"}, headers={"If-Match": "*"}
    )
    assert nothing.status_code == 412, nothing.text
    assert _listed(client) == ["ten"]


def test_http_post_memory_condition_without_a_key_is_refused(client: TestClient) -> None:
    for header, value in (("If-None-Match", "*"), ("If-Match", '"1"')):
        refused = client.post(PATH, json={"content": "no key here"}, headers={header: value})
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["field"] == header
        assert "key" in error["message"]
    assert _listed(client) == []


def test_http_post_memory_if_none_match_takes_only_a_star(client: TestClient) -> None:
    refused = client.post(
        PATH, json={"key": "ferry.time", "content": "nine"}, headers={"If-None-Match": '"1"'}
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "If-None-Match"
    assert _listed(client) == []


def test_http_post_memory_with_a_key_answers_its_etag_without_a_condition(
    client: TestClient,
) -> None:
    # As PUT /v1/kv/{key}: the version the next write's If-Match names, no read between
    # (review of c66: only a conditional POST answered it).
    created = client.post(PATH, json={"key": "ferry.time", "content": "nine"})
    assert created.status_code == 200, created.text
    tag = created.headers["ETag"]
    assert tag == client.get(f"{PATH}/{created.json()['id']}").headers["ETag"]
    again = client.post(
        PATH, json={"key": "ferry.time", "content": "ten"}, headers={"If-Match": tag}
    )
    assert again.status_code == 200, again.text
    assert again.headers["ETag"] != tag
    assert _listed(client) == ["ten"]


def test_http_patch_if_none_match_names_the_writes_that_take_it(client: TestClient) -> None:
    created = client.post(PATH, json={"key": "ferry.time", "content": "nine"})
    refused = client.patch(
        f"{PATH}/{created.json()['id']}", json={"content": "ten"}, headers={"If-None-Match": "*"}
    )
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "If-None-Match"
    assert "POST /v1/memories with a key" in error["message"]  # it said PUT /v1/kv only
    assert _listed(client) == ["nine"]
