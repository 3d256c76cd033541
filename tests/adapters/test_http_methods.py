"""What a 405 says: the methods a path serves, in ``Allow``, for every path of the server."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("POST", "/healthz", "GET"),
        ("DELETE", "/", "GET"),
        ("PUT", "/docs", "GET"),
        ("POST", "/metrics", "GET"),
        ("POST", "/openapi.json", "GET"),
        ("POST", "/ui/app.css", "GET"),
        ("PATCH", "/v1/memories", "GET, POST"),
        ("POST", "/v1/kv/some.key", "DELETE, GET, PUT"),
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
