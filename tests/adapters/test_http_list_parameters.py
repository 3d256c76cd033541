"""``GET /v1/memories`` names a refused tag filter by the query parameter the caller sent.

In-process (Starlette's test client on the app). The memory browser's Browse page sends
``tag``; an error naming ``tags_any`` pointed at no box on it.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from recalld.service import MemoryService


@pytest.mark.parametrize(
    ("params", "field", "reason"),
    [
        ({"tag": "\u200b"}, "tag", "contains ZERO WIDTH SPACE (U+200B) at position 0"),
        ({"tag": "t" * 300}, "tag", "is 300 chars; the limit is 100"),
        ({"tag": [f"t{index}" for index in range(70)]}, "tag", "70 tags; the limit is 64"),
        ({"all_tag": "x\x00"}, "all_tag", "contains U+0000 at position 1"),
    ],
)
def test_http_list_a_refused_tag_filter_names_its_parameter(
    client: TestClient,
    service: MemoryService,
    params: dict[str, str | list[str]],
    field: str,
    reason: str,
) -> None:
    service.remember("a memory the filter must not change", tags=["t1"])
    refused = client.get("/v1/memories", params=params)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == field
    assert reason in error["message"]


def test_http_list_other_refusals_keep_their_field(client: TestClient) -> None:
    refused = client.get("/v1/memories", params={"kind": "\u200b"})
    assert refused.status_code == 422
    assert refused.json()["error"]["field"] == "kind"
    swapped = client.get(
        "/v1/memories", params={"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}
    )
    assert swapped.status_code == 422
    assert swapped.json()["error"]["field"] == "until"


def test_http_list_a_time_whose_plus_arrived_as_a_space_says_to_encode_it(
    client: TestClient, service: MemoryService
) -> None:
    # curl 'localhost:8765/v1/memories?since=2026-10-25T10:00:00+02:00': a URL's query
    # reads "+" as a space, so the server gets "2026-10-25T10:00:00 02:00".
    service.remember("at ten in Paris", at="2026-10-25T10:00:00+02:00")
    refused = client.get("/v1/memories?since=2026-10-25T10:00:00+02:00")
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "since"
    assert "%2B" in error["message"], error["message"]
    encoded = client.get("/v1/memories?since=2026-10-25T10:00:00%2B02:00")
    assert [memory["content"] for memory in encoded.json()["memories"]] == ["at ten in Paris"]
    # Any other unreadable time keeps the plain message.
    other = client.get("/v1/memories", params={"since": "2026-10-25 at ten"})
    assert other.status_code == 422
    assert "%2B" not in other.json()["error"]["message"]
