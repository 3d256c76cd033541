"""A graph route refusing an entity name says why in words, never by its pattern.

In-process (Starlette's test client on the app). The memory browser shows these
messages as they come (``#/graph/<name>`` with a pasted zero-width space).
"""

from __future__ import annotations

import unicodedata

import pytest
from fastapi.testclient import TestClient

REFUSED = [
    (
        "/v1/graph/entities/Ana%E2%80%8B",
        {},
        "name",
        "contains ZERO WIDTH SPACE (U+200B) at position 3",
    ),
    ("/v1/graph/entities/%20%20", {}, "name", "must not be empty or only spaces"),
    ("/v1/graph/neighbourhood", {"entity": "\x00Ana"}, "entity", "contains U+0000 at position 0"),
    (
        "/v1/graph/relations",
        {"entity": "Ana\u202e"},
        "entity",
        "contains RIGHT-TO-LEFT OVERRIDE (U+202E) at position 3",
    ),
    ("/v1/graph/relations", {"predicate": " "}, "predicate", "must not be empty or only spaces"),
]


@pytest.mark.parametrize(("path", "params", "field", "reason"), REFUSED)
def test_http_graph_a_refused_name_is_explained_in_words(
    client: TestClient, path: str, params: dict[str, str], field: str, reason: str
) -> None:
    refused = client.get(path, params=params)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == field
    assert reason in error["message"]
    assert "pattern" not in error["message"]
    # Nothing unreadable reaches the page that shows the message.
    assert not [c for c in error["message"] if unicodedata.category(c) in ("Cc", "Cf", "Co")]
