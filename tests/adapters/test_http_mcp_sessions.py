"""MCP sessions at /mcp, over a real `recalld serve`: whose they are, how they are refused."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.subscriptions import SubscriptionLost

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


def _wait_for_log(server: ServerProcess, text: str, seconds: float = 60.0) -> None:
    """Until the server has printed ``text`` (bounded: a subprocess has no event to wait on)."""
    deadline = time.monotonic() + seconds
    while text not in server.log():
        assert time.monotonic() < deadline, f"the server never said {text!r}:\n{server.log()}"
        time.sleep(0.05)


class McpHttpProcess(ServerProcess):
    """`recalld mcp --transport http`, run as :class:`ServerProcess` runs `recalld serve`
    (ready once its endpoint answers: it has no /healthz)."""

    def command(self) -> list[str]:
        """The command line that starts the server."""
        server = ["mcp", "--transport", "http", "--port", str(self.port)]
        return [sys.executable, "-m", "recalld", "--db", str(self.db), *server]

    def _wait_until_ready(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                httpx.get(f"{self.base_url}/mcp", timeout=2)
                return True
            except httpx.TransportError:
                time.sleep(0.05)  # polling a subprocess: there is no event to wait on
        self.kill()
        return False


@pytest.mark.parametrize("server_class", [ServerProcess, McpHttpProcess])
def test_http_mcp_sigterm_answers_the_tool_call_in_flight(
    tmp_path: Path, server_class: type[ServerProcess]
) -> None:
    # SIGTERM ended every MCP event stream at once, a POST's answer too: the tool call in
    # flight went on and committed its write, and the client got 200 with an empty body.
    db = tmp_path / "stopping.db"
    running = server_class(
        db, RECALLD_BUSY_TIMEOUT_MS="120000", RECALLD_LOCK_RETRY_SECONDS="120"
    ).start()
    url = f"{running.base_url}/mcp"
    headers = {"Accept": ACCEPT}
    opened = httpx.post(url, json=INITIALIZE, headers=headers, timeout=30)
    headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    headers["Mcp-Protocol-Version"] = "2025-06-18"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx.post(url, json=initialized, headers=headers, timeout=30).status_code == 202
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"content": "written while stopping"}},
    }
    blocker = sqlite3.connect(db, isolation_level=None, timeout=60)
    blocker.execute("BEGIN IMMEDIATE")  # the tool call waits for this lock
    started, answered = threading.Event(), threading.Event()
    received: list[str] = []

    def call_tool() -> None:
        with httpx.stream("POST", url, json=call, headers=headers, timeout=120) as stream:
            assert stream.status_code == 200
            started.set()  # the answer is an event stream, opened before the result
            received.extend(stream.iter_lines())
        answered.set()

    caller = threading.Thread(target=call_tool, daemon=True)
    caller.start()
    try:
        try:
            assert started.wait(60)
            assert running.process is not None
            running.process.terminate()
            _wait_for_log(running, "stopping: answering 1 MCP")  # (the log wraps lines)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert answered.wait(60)
        assert running.process.wait(timeout=60) is not None
    finally:
        running.kill()
    events = [json.loads(line[len("data: ") :]) for line in received if line.startswith("data: ")]
    assert len(events) == 1, received
    result = events[0]["result"]
    assert events[0]["id"] == 7
    assert not result["isError"], events
    with sqlite3.connect(db) as check:
        stored = check.execute("SELECT id FROM memories").fetchall()
    assert stored == [(result["structuredContent"]["id"],)]


@pytest.mark.parametrize("server_class", [ServerProcess, McpHttpProcess])
def test_http_mcp_sigterm_ends_an_idle_subscriptions_listen(
    tmp_path: Path, server_class: type[ServerProcess]
) -> None:
    # A 2026-07-28 `subscriptions/listen` is not an sse-starlette stream: the signal never
    # reached it, and the server waited for ever (until the client left) to stop.
    running = server_class(tmp_path / "listening.db").start()
    listening, ended = threading.Event(), threading.Event()
    endings: list[BaseException] = []

    async def listen() -> None:
        try:
            async with Client(f"{running.base_url}/mcp") as client:
                assert client.session.protocol_version == "2026-07-28"
                async with client.listen(tools_list_changed=True) as subscription:
                    listening.set()
                    async for _event in subscription:
                        pass
        except* SubscriptionLost as lost:  # as at any stop of a server; nothing else
            endings.append(lost)
        ended.set()

    listener = threading.Thread(target=lambda: asyncio.run(listen()), daemon=True)
    listener.start()
    try:
        assert listening.wait(60)
        assert running.process is not None
        running.process.terminate()
        assert running.process.wait(timeout=60) is not None  # old code: still serving
        assert ended.wait(60)  # the client's listen ended too: it was not left hanging
    finally:
        running.kill()


@pytest.mark.parametrize("server_class", [ServerProcess, McpHttpProcess])
def test_http_mcp_transport_refusals_carry_the_request_id(
    tmp_path: Path, server_class: type[ServerProcess]
) -> None:
    # The SDK's refusals before a session serves the request (unknown session, none
    # given) said "id": null, which JSON-RPC keeps for an id that could not be read: a
    # client matching answers by id found none for its request.
    running = server_class(tmp_path / "refusals.db").start()
    try:
        url = f"{running.base_url}/mcp"
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        with httpx.Client(timeout=30) as client:
            unknown = client.post(url, json=listing, headers={**headers, "Mcp-Session-Id": "gone"})
            assert unknown.status_code == 404, unknown.text
            assert unknown.json() == {
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32600, "message": "Session not found"},
            }
            assert int(unknown.headers["content-length"]) == len(unknown.content)
            missing = client.post(url, json={**listing, "id": "eight"}, headers=headers)
            assert missing.status_code == 400, missing.text
            assert missing.json()["id"] == "eight"
            assert "Missing session ID" in missing.json()["error"]["message"]
            # No id to give: a notification, a body that is no JSON, an id that is no id.
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            for body in (json.dumps(note), "{not json", json.dumps({**listing, "id": True})):
                refused = client.post(
                    url, content=body, headers={**headers, "Mcp-Session-Id": "gone"}
                )
                assert refused.status_code >= 400, refused.text
                assert refused.json()["id"] is None
    finally:
        running.stop()
