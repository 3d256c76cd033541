"""The memory browser and ``/docs`` on the REST app: public assets, headers, offline docs."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from tests.adapters.conftest import LOOPBACK


def _directives(policy: str) -> dict[str, list[str]]:
    parsed = {}
    for directive in policy.split(";"):
        name, *values = directive.split()
        parsed[name] = values
    return parsed


def test_http_web_root_serves_the_browser_with_a_strict_policy(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/js/app.js"></script>' in response.text
    policy = _directives(response.headers["content-security-policy"])
    assert policy["default-src"] == ["'none'"]
    for name in ("script-src", "style-src", "connect-src", "img-src"):
        assert policy[name] == ["'self'"], name
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["form-action"] == ["'none'"]
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    assert "unsafe-eval" not in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"


def test_http_web_assets_are_served_with_their_types(client: TestClient) -> None:
    script = client.get("/ui/js/app.js")
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]
    assert script.headers["x-content-type-options"] == "nosniff"
    assert script.headers["cache-control"] == "no-cache"
    assert client.get("/ui/app.css").headers["content-type"].startswith("text/css")
    assert client.get("/favicon.ico").headers["content-type"] == "image/svg+xml"
    assert client.get("/ui/js/no-such-page.js").status_code == 404


def test_http_web_pages_need_no_token_but_the_api_still_does(
    service: MemoryService, settings: Settings
) -> None:
    TokenRegistry.for_store(service.store).create("reader", {"default": "read"})
    with TestClient(
        create_app(service, settings), client=LOOPBACK, base_url="http://127.0.0.1"
    ) as client:
        for path in ("/", "/docs", "/ui/js/app.js", "/favicon.ico"):
            assert client.get(path).status_code == 200, path
        for path in ("/v1/memories", "/v1/session", "/v1/status", "/metrics"):
            assert client.get(path).status_code == 401, path
        # Only reads of assets are public: anything else under /ui/ is authenticated first.
        assert client.post("/ui/js/app.js").status_code == 401
        assert client.delete("/").status_code == 401


def test_http_web_api_responses_carry_the_security_headers_too(client: TestClient) -> None:
    response = client.get("/v1/stats")
    assert response.status_code == 200
    assert (
        response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    )
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


def test_http_web_no_cache_keeps_a_memory_the_api_returned(client: TestClient) -> None:
    # A browser (the memory browser's own fetches) or a proxy would otherwise keep the
    # answers on disk, where forget never reaches: the memory outlived its forget there.
    receipt = client.post("/v1/memories", json={"content": "the door code is 4471"}).json()
    for response in (
        client.get(f"/v1/memories/{receipt['id']}"),
        client.get("/v1/memories"),
        client.post("/v1/search", json={"query": "door code"}),
        client.get("/v1/export"),
        client.delete(f"/v1/memories/{receipt['id']}"),
        client.get(f"/v1/memories/{receipt['id']}"),  # an error answer too
    ):
        assert response.headers["cache-control"] == "no-store", response.request.url


def test_http_web_docs_use_the_vendored_swagger_ui_only(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "swagger" in page.text.lower()
    assert not re.search(r"(?i)https?://", page.text), "no remote asset may be referenced"
    assert "<script>" not in page.text  # no inline script: the start-up code is a file
    sources = re.findall(r'(?:src|href)="(/[^"]+)"', page.text)
    assert "/ui/vendor/swagger-ui/swagger-ui-bundle.js" in sources
    assert "/ui/vendor/swagger-ui/swagger-ui.css" in sources
    for source in sources:
        assert client.get(source).status_code == 200, source
    policy = _directives(page.headers["content-security-policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    # FastAPI's CDN-based pages are gone.
    assert client.get("/redoc").status_code == 404
    assert client.get("/docs/oauth2-redirect").status_code == 404


def test_http_web_routes_stay_out_of_the_api_spec(client: TestClient) -> None:
    paths = set(client.get("/openapi.json").json()["paths"])
    assert {"/v1/session", "/v1/status", "/v1/stats/timeline", "/v1/recollections/drain"} <= paths
    assert not {"/", "/docs", "/favicon.ico"} & paths
    assert not any(path.startswith("/ui") for path in paths)
