"""A request uvicorn cannot parse is refused in the JSON shape of every other refusal.

uvicorn answered it ``400`` in plain text ("Invalid HTTP request received."), a header
block over h11's 16 KiB limit as a malformed request line: a client could not tell
which, nor what the limit was. Each wait for the answer is bounded generously."""

from __future__ import annotations

import asyncio
import json

import anyio
import pytest

from recalld.adapters.http_connections import BoundedRequestHead
from tests.adapters.uvicorn_serving import serving

pytestmark = pytest.mark.anyio

WAIT_SECONDS = 30.0


async def _answer(port: int, request: bytes) -> tuple[bytes, dict[bytes, bytes], bytes]:
    """The status line, headers and body the server answers ``request`` with, then closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        with anyio.fail_after(WAIT_SECONDS):
            answer = await reader.read()
    finally:
        writer.close()
        await writer.wait_closed()
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = dict(line.lower().split(b": ", 1) for line in lines)
    return status, headers, body


async def test_http_request_head_too_large_is_431_naming_the_limit() -> None:
    async with serving(BoundedRequestHead) as port:
        # A head over the limit and not ended, all read by the server before it answers (a
        # client still sending when the server closes may be reset before it reads).
        request = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000
        status, headers, body = await _answer(port, request)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert headers[b"content-type"] == b"application/json"
    error = json.loads(body)["error"]
    assert error["type"] == "request_header_fields_too_large"
    assert error["field"] == "headers"
    assert "16384 bytes" in error["message"]


async def test_http_malformed_request_line_is_400_in_json() -> None:
    async with serving(BoundedRequestHead) as port:
        status, headers, body = await _answer(port, b"NOT HTTP AT ALL\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 400 ")
    assert headers[b"content-type"] == b"application/json"
    error = json.loads(body)["error"]
    assert error["type"] == "bad_request"
    assert "not a valid HTTP/1.1 request" in error["message"]


async def test_http_malformed_request_line_with_a_large_body_is_400_not_431() -> None:
    # A request line with a space in its path, its body (over 16 KiB) sent with its head:
    # everything waiting unparsed was counted as head, and the client was told to send
    # shorter headers, which were a few bytes.
    body = b"x" * 40_000
    request = (
        b"POST /v1/import?note=a b HTTP/1.1\r\nHost: x\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    async with serving(BoundedRequestHead) as port:
        status, headers, answer = await _answer(port, request)
    assert status.startswith(b"HTTP/1.1 400 "), status
    assert headers[b"content-type"] == b"application/json"
    assert json.loads(answer)["error"]["type"] == "bad_request"


@pytest.mark.parametrize("target", [b"/mcp", b"/mcp?x=1"])
async def test_http_request_head_too_large_for_mcp_is_a_jsonrpc_error(target: bytes) -> None:
    # recalld serve answered /mcp's 431 REST-shaped, which an MCP client reading the
    # SDK's JSON-RPC errors could not read (recalld mcp --transport http answered
    # JSON-RPC) (adversarial pass e69).
    async with serving(BoundedRequestHead) as port:
        request = b"POST " + target + b" HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000
        status, headers, body = await _answer(port, request)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert headers[b"content-type"] == b"application/json"
    answer = json.loads(body)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    assert "16384 bytes" in answer["error"]["message"]


async def test_http_request_head_too_large_elsewhere_stays_rest_shaped() -> None:
    async with serving(BoundedRequestHead) as port:
        request = b"POST /mcpx HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000
        _status, _headers, body = await _answer(port, request)
    assert json.loads(body)["error"]["type"] == "request_header_fields_too_large"


@pytest.mark.parametrize(
    "request_line",
    [b"POST /mcp?q=" + b"\xe9" * 20_000, b"POST /mcp?" + b"a" * 20_000 + b" HTTP/1.1"],
    ids=["request-line-over-the-limit-not-ascii", "request-line-over-the-limit"],
)
async def test_http_request_line_too_large_for_mcp_is_a_jsonrpc_error(
    request_line: bytes,
) -> None:
    # The request line alone past the limit, never ended, with bytes that are no ASCII:
    # still read as naming /mcp (review of pass e69).
    async with serving(BoundedRequestHead) as port:
        status, _headers, body = await _answer(port, request_line)
    assert status.startswith(b"HTTP/1.1 431 ")
    assert json.loads(body)["error"]["code"] == -32600
