"""MCP sessions at /mcp, over a real `recalld serve`: whose they are, how they are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from recalld.config import Settings
from recalld.tokens import TokenRegistry
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.slow

ACCEPT = "application/json, text/event-stream"
PING: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = "2025-06-18"
    return headers


def test_http_mcp_session_serves_only_the_token_that_opened_it(tmp_path: Path) -> None:
    # Any token allowed on /mcp could drive another token's session once it had its
    # id: call tools in it, take its event stream, or DELETE it from under its owner.
    db = tmp_path / "sessions.db"
    with TokenRegistry.open(Settings(db=db)) as registry:
        owner = registry.create("owner", {"default": "read+write"}).token
        intruder = registry.create("intruder", {"*": "read+write"}).token
    running = ServerProcess(db).start()
    try:
        url = f"{running.base_url}/mcp"
        with httpx.Client(timeout=30) as client:
            opened = client.post(url, json=INITIALIZE, headers=_headers(owner))
            assert opened.status_code == 200, opened.text
            session = opened.headers["mcp-session-id"]
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            ready = client.post(url, json=initialized, headers=_headers(owner, session))
            assert ready.status_code == 202, ready.text

            foreign = _headers(intruder, session)
            listen = {**foreign, "Accept": "text/event-stream"}
            with client.stream("GET", url, headers=listen) as stream:
                # Read only the status: a stream granted would stay open.
                assert stream.status_code == 404
            for refused in (
                client.post(url, json=PING, headers=foreign),
                client.delete(url, headers=foreign),
            ):
                assert refused.status_code == 404, refused.text
                assert refused.json()["error"]["message"] == "Session not found"

            still = client.post(url, json=PING, headers=_headers(owner, session))
            assert still.status_code == 200, still.text
            assert '"id":2,"result":{}' in still.text
            own = client.post(url, json=INITIALIZE, headers=_headers(intruder))
            assert own.status_code == 200, own.text  # the other token opens its own
    finally:
        running.stop()


def test_http_mcp_chunked_body_over_the_cap_is_a_json_rpc_error(tmp_path: Path) -> None:
    # A body without Content-Length is found too large only while /mcp reads it; that
    # 413 came in the REST API's shape, which an MCP client reports as a bare "Server
    # returned an error response", hiding the limit (one with Content-Length said it).
    running = ServerProcess(tmp_path / "chunked.db").start()
    try:

        def chunks() -> Any:
            for _ in range(12):
                yield b"x" * 100_000

        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        url = f"{running.base_url}/mcp"
        refused = httpx.post(url, content=chunks(), headers=headers, timeout=30)
        assert refused.status_code == 413, refused.text
        assert "content-length" not in {name.lower() for name in refused.request.headers}
        error = refused.json()["error"]
        assert error["code"] == -32600
        assert "larger than 1048576 bytes (RECALLD_MAX_BODY_BYTES)" in error["message"]
        rest = httpx.post(f"{running.base_url}/v1/memories", content=chunks(), headers=headers)
        assert rest.status_code == 413
        assert rest.json()["error"]["type"] == "payload_too_large"  # REST keeps its shape
    finally:
        running.stop()
