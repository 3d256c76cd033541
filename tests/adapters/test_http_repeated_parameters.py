"""A query parameter or header a route takes once, given twice, is refused naming it.

FastAPI keeps the last of a repeated query parameter and the first of a repeated header
without a word: ``?limit=1&limit=500`` answered 500 memories, and two
``X-Recalld-Namespace`` headers (RFC 9110 reads them as the list "a, b") worked in the
first. In-process (Starlette's test client on the app).
"""

from __future__ import annotations

import gzip
import json

from fastapi.testclient import TestClient

from recalld.service import MemoryService
from recalld.tokens import TokenRegistry


def test_http_a_repeated_query_parameter_is_refused_naming_it(
    client: TestClient, service: MemoryService
) -> None:
    for number in range(3):
        service.remember(f"memory number {number}")
    for query in (
        "limit=1&limit=500",
        "namespace=default&namespace=default",
        "order=created&order=updated",
    ):
        refused = client.get(f"/v1/memories?{query}")
        assert refused.status_code == 422, (query, refused.text)
        error = refused.json()["error"]
        assert error["field"] == query.split("=")[0], error
        assert "more than once" in error["message"]
    # A list parameter is repeated by design, and one value of each still works.
    assert client.get("/v1/memories?tag=a&tag=b").status_code == 200
    assert len(client.get("/v1/memories?limit=1").json()["memories"]) == 1


def test_http_a_repeated_query_parameter_changes_nothing(
    client: TestClient, service: MemoryService
) -> None:
    refused = client.put(
        "/v1/kv/staging.region?namespace=default&namespace=other", json={"value": "x"}
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "namespace"
    assert service.stats(["default", "other"]).count == 0


def test_http_a_repeated_namespace_header_is_refused_naming_it(
    client: TestClient, service: MemoryService
) -> None:
    service.remember("in the default namespace")
    headers = [("X-Recalld-Namespace", "default"), ("X-Recalld-Namespace", "other")]
    refused = client.get("/v1/memories", headers=headers)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (error["field"], error["type"]) == ("X-Recalld-Namespace", "validation_error")
    written = client.post("/v1/memories", json={"content": "which one?"}, headers=headers)
    assert written.status_code == 422, written.text
    assert service.stats(["default", "other"]).count == 1


def test_http_a_compressed_body_is_refused_naming_its_encoding(
    client: TestClient, service: MemoryService
) -> None:
    # It was read as it came and refused as "is not valid UTF-8", which sent the client
    # looking for a bad character.
    body = gzip.compress(json.dumps({"content": "compressed"}).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    refused = client.post("/v1/memories", content=body, headers=headers)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["field"] == "Content-Encoding"
    assert "'gzip' is not supported: send the body uncompressed" in error["message"]
    imported = client.post("/v1/import", content=body, headers={"Content-Encoding": "gzip"})
    assert imported.status_code == 422, imported.text
    assert service.stats().count == 0
    plain = {"Content-Type": "application/json", "Content-Encoding": "identity"}
    accepted = client.post("/v1/memories", json={"content": "plain"}, headers=plain)
    assert accepted.status_code == 200, accepted.text


def test_http_two_authorization_headers_are_refused(
    client: TestClient, service: MemoryService
) -> None:
    # The first was taken: which token counted depended on the order a proxy put them in.
    registry = TokenRegistry.for_store(service.store)
    mine = registry.create("mine", {"mine": "read+write"}).token
    theirs = registry.create("theirs", {"theirs": "read+write"}).token
    headers = [("Authorization", f"Bearer {theirs}"), ("Authorization", f"Bearer {mine}")]
    refused = client.post("/v1/memories", json={"content": "whose?"}, headers=headers)
    assert refused.status_code == 401, refused.text
    assert "give one Authorization header" in refused.json()["error"]["message"]
    assert service.stats(["mine", "theirs"]).count == 0
    one = client.post(
        "/v1/memories", json={"content": "mine"}, headers={"Authorization": f"Bearer {mine}"}
    )
    assert one.status_code == 200, one.text


def test_http_a_repeated_namespace_header_is_the_list_where_a_route_takes_several(
    client: TestClient, service: MemoryService
) -> None:
    # /v1/export and /v1/stats take "a, b"; two lines of it mean the same (RFC 9110 §5.3,
    # as a proxy may send them). Pass b65 refused them 422; before, only "a" was read.
    service.remember("in a", namespace="a")
    service.remember("in b", namespace="b")
    two_lines = [("X-Recalld-Namespace", "a"), ("X-Recalld-Namespace", "b")]
    one_line = {"X-Recalld-Namespace": "a, b"}
    exported = client.get("/v1/export", headers=two_lines)
    assert exported.status_code == 200, exported.text
    assert exported.text == client.get("/v1/export", headers=one_line).text
    assert len(exported.text.splitlines()) == 2
    counted = client.get("/v1/stats", headers=two_lines)
    assert counted.status_code == 200, counted.text
    assert counted.json()["count"] == 2
    # A route of one namespace still refuses them, as it refuses "a, b".
    assert client.get("/v1/memories", headers=two_lines).status_code == 422


def test_http_a_compressed_body_is_refused_whichever_encoding_line_says_so(
    client: TestClient, service: MemoryService
) -> None:
    # Only the first Content-Encoding line was looked at: identity, then gzip, let a
    # compressed body through to be refused as "not valid UTF-8".
    body = gzip.compress(json.dumps({"content": "compressed"}).encode())
    headers = [
        ("Content-Type", "application/json"),
        ("Content-Encoding", "identity"),
        ("Content-Encoding", "gzip"),
    ]
    refused = client.post("/v1/memories", content=body, headers=headers)
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "Content-Encoding"
    assert "'gzip' is not supported" in refused.json()["error"]["message"]
    assert service.stats().count == 0
