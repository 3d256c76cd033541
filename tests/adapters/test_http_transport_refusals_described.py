"""``/openapi.json`` lists the refusals of the layers before a route (429 for a token
past its share, 431 for a head too large, ``Retry-After`` on 503), and ``recalld mcp
--transport http`` refuses a head too large as JSON-RPC, the shape its MCP clients read
(adversarial pass d68)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_connections import BoundedMcpRequestHead
from tests.adapters.test_http_request_head_refusals import _answer
from tests.adapters.uvicorn_serving import serving


def test_http_openapi_lists_429_431_and_retry_after(client: TestClient) -> None:
    document: dict[str, Any] = client.get("/openapi.json").json()
    search = document["paths"]["/v1/search"]["post"]["responses"]
    assert "Retry-After" in search["429"]["headers"]
    assert "30 requests running" in search["429"]["description"]
    assert "16384 bytes" in search["431"]["description"]
    assert "Retry-After" in search["503"]["headers"]
    health = document["paths"]["/healthz"]["get"]["responses"]
    assert "431" in health
    assert "429" not in health  # no token is checked there, so none is counted
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "431" in operation["responses"], (path, method)


@pytest.mark.anyio
async def test_mcp_over_http_refuses_a_head_too_large_as_json_rpc() -> None:
    async with serving(BoundedMcpRequestHead) as port:
        request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000
        status, headers, body = await _answer(port, request)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert headers[b"content-type"] == b"application/json"
    answer = json.loads(body)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "larger than 16384 bytes" in answer["error"]["message"]
