"""What a 405 says: the methods a path serves, in ``Allow``, for every path of the server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.datastructures import Headers

from recalld.adapters.http_body_type import body_type_problem
from recalld.service import MemoryService


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("POST", "/healthz", "GET, HEAD"),
        ("DELETE", "/", "GET, HEAD"),
        ("PUT", "/docs", "GET, HEAD"),
        ("POST", "/metrics", "GET, HEAD"),
        ("POST", "/openapi.json", "GET, HEAD"),
        ("POST", "/ui/app.css", "GET, HEAD"),
        ("PATCH", "/v1/memories", "GET, HEAD, POST"),
        ("POST", "/v1/kv/some.key", "DELETE, GET, HEAD, PUT"),
        ("GET", "/v1/recall", "POST"),
    ],
)
def test_http_methods_a_405_lists_what_the_path_serves(
    client: TestClient, method: str, path: str, allowed: str
) -> None:
    # /healthz, /metrics, /openapi.json and the browser's pages and files answered 405
    # with an empty Allow, which says that the path allows no method at all.
    refused = client.request(method, path)
    assert refused.status_code == 405, refused.text
    assert refused.headers["Allow"] == allowed
    assert refused.json()["error"]["type"] == "method_not_allowed"


@pytest.mark.parametrize("path", ["/healthz", "/", "/v1/memories", "/ui/app.css"])
def test_http_methods_head_is_answered_as_get_without_the_body(
    client: TestClient, path: str
) -> None:
    # RFC 9110 has a server support HEAD wherever it serves GET, and uptime monitors ask
    # HEAD first: HEAD /healthz (and every API route) was 405 Method Not Allowed.
    got = client.get(path)
    head = client.head(path)
    assert head.status_code == got.status_code == 200, head.text
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == str(len(got.content))


def test_http_methods_head_is_counted_as_head_in_the_metrics(client: TestClient) -> None:
    # A HEAD is served as a GET to every layer, the request metrics among them: they
    # counted a monitor's HEAD /healthz as GET, so no dashboard could tell them apart.
    assert client.head("/healthz").status_code == 200
    text = client.get("/metrics").text
    assert 'recalld_http_requests_total{method="HEAD",route="/healthz",status="200"} 1.0' in text
    assert 'method="GET",route="/healthz"' not in text


def test_http_methods_head_of_a_path_without_get_is_refused(client: TestClient) -> None:
    refused = client.head("/v1/recall")
    assert refused.status_code == 405
    assert refused.headers["Allow"] == "POST"
    assert client.get("/v1/memories").json()["memories"] == []  # nothing was written


@pytest.mark.parametrize(
    ("content_type", "named"),
    [
        ("application/x-www-form-urlencoded", "'application/x-www-form-urlencoded'"),
        ("text/plain", "'text/plain'"),
        (None, "no Content-Type"),
    ],
)
def test_http_methods_a_json_body_sent_as_another_type_names_the_header(
    client: TestClient, content_type: str | None, named: str
) -> None:
    # `curl -d '{"content": "x"}'` sends a form type: the refusal read "Input should be a
    # valid dictionary or object to extract fields from" for a well-formed object.
    headers = {} if content_type is None else {"Content-Type": content_type}
    for method, path, body in (
        ("POST", "/v1/memories", b'{"content": "a note"}'),
        ("PUT", "/v1/kv/some.key", b'{"value": "a value"}'),
    ):
        refused = client.request(method, path, content=body, headers=headers)
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["field"] == "body"
        assert named in error["message"]
        assert "send Content-Type: application/json" in error["message"]
    assert client.get("/v1/memories").json()["memories"] == []  # nothing was written


def test_http_methods_a_json_body_that_is_no_object_keeps_its_message(
    client: TestClient,
) -> None:
    refused = client.post("/v1/memories", json=[1])
    assert refused.status_code == 422
    assert "Content-Type" not in refused.json()["error"]["message"]
    missing = client.post("/v1/recall")  # no body at all: it is missing, whatever its type
    assert missing.status_code == 422
    assert "Content-Type" not in missing.json()["error"]["message"]


def test_http_methods_a_body_read_as_json_without_a_type_keeps_its_message() -> None:
    # Where FastAPI reads a body sent without Content-Type as JSON (strict_content_type
    # off, or FastAPI before it), `[1]` was read: "was not read as JSON" would be false.
    read = {"loc": ("body",), "type": "model_attributes_type", "input": [1]}
    assert body_type_problem(read, Headers({})) is None
    unread = {**read, "input": b"[1]"}
    assert "no Content-Type" in str(body_type_problem(unread, Headers({})))


def test_http_methods_head_of_a_streamed_body_does_not_stream_it(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # HEAD /v1/export was served as the GET it is, reading the whole export (every
    # memory of the namespace) only to throw it away. It now ends at its first lines
    # (the stream is stopped as when a client leaves: at its next step, not at once).
    streamed: list[int] = []

    def export(*arguments: Any, **options: Any) -> Iterator[str]:
        for line in range(1_000):
            streamed.append(line)
            yield "{}"

    monkeypatch.setattr(service, "export", export)
    head = client.head("/v1/export")
    assert head.status_code == 200, head.text
    assert head.headers["content-type"].startswith("application/x-ndjson")
    assert head.content == b""
    assert 1 <= len(streamed) < 100
    streamed.clear()
    assert client.get("/v1/export").content == b"{}\n" * 1_000  # a GET streams it all
    assert len(streamed) == 1_000
