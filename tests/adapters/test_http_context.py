"""REST for core memory and involuntary recall, and MCP at /mcp, over a real server."""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError

from recalld.config import Settings
from recalld.tokens import TokenRegistry
from tests.adapters.http_support import ServerProcess
from tests.adapters.mcp_support import INITIALIZE
from tests.media import melody

pytestmark = pytest.mark.slow

CAFE = {"lat": 48.8642, "lon": 2.3475}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory: Path = tmp_path_factory.mktemp("http_context")
    running = ServerProcess(directory / "context.db").start()
    yield running
    running.stop()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[httpx.Client]:
    namespace = f"ctx-{uuid.uuid4().hex[:12]}"
    with httpx.Client(
        base_url=server.base_url, headers={"X-Recalld-Namespace": namespace}, timeout=30
    ) as opened:
        yield opened


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_http_core_memory_read_edit_and_full(client: httpx.Client) -> None:
    empty = _ok(client.get("/v1/core"))
    assert empty["user"]["entries"] == []
    assert empty["memory"]["limit"] == 2200
    added = _ok(
        client.post(
            "/v1/core/user",
            json={
                "operations": [
                    {"action": "add", "content": "Name: Ana"},
                    {"action": "add", "new_text": "Role: SRE"},
                ]
            },
        )
    )
    assert added["entries"] == ["Name: Ana", "Role: SRE"]
    assert added["usage"] == "19/1375"
    patched = _ok(
        client.post(
            "/v1/core/user", json={"action": "patch", "old_text": "SRE", "content": "platform"}
        )
    )
    assert patched["entries"][1] == "Role: platform"
    full = client.post("/v1/core/user", json={"action": "add", "content": "x" * 1400})
    assert full.status_code == 422
    error = full.json()["error"]
    assert error["type"] == "core_memory_full"
    assert error["entries"] == ["Name: Ana", "Role: platform"]
    ambiguous = client.post("/v1/core/user", json={"action": "remove", "old_text": "a"})
    assert ambiguous.status_code == 422
    # The single form names the body's own field (it was "operations[0].old_text").
    assert ambiguous.json()["error"]["field"] == "old_text"
    batch = client.post(
        "/v1/core/user", json={"operations": [{"action": "remove", "old_text": "a"}]}
    )
    assert batch.json()["error"]["field"] == "operations[0].old_text"
    blank = client.post("/v1/core/user", json={"action": "add", "content": "  "})
    assert blank.json()["error"] == {
        "type": "validation_error",
        "field": "content",
        "message": "must not be empty",
    }
    bad_target = client.post("/v1/core/everyone", json={"action": "add", "content": "x"})
    assert bad_target.status_code == 422
    view = _ok(client.get("/v1/core"))
    assert view["block"].startswith("USER PROFILE [24/1375 chars]\nName: Ana\nRole: platform")


def test_http_sense_webhook_fires_and_pending_delivers_once(client: httpx.Client) -> None:
    stored = _ok(
        client.post(
            "/v1/experiences",
            json={
                "content": "Croissant with Léa",
                **CAFE,
                "at": "2026-11-04T08:10:00+01:00",
                "tags": ["lea"],
            },
        ),
        201,
    )
    assert stored["kind"] == "experience"
    hits = _ok(client.post("/v1/context/recall", json={"geohash": "u09tvrmq", "k": 3}))
    assert hits[0]["memory"]["id"] == stored["id"]
    assert _ok(client.get("/v1/recollections/pending", params={"drain": "false"})) == []
    fired = _ok(client.post("/v1/sense", json={**CAFE, "at": "2026-11-05T08:05:00+01:00"}))
    assert [item["memory"]["id"] for item in fired] == [stored["id"]]
    assert _ok(client.post("/v1/sense", json={**CAFE, "at": "2026-11-05T08:06:00+01:00"})) == []
    peeked = _ok(client.get("/v1/recollections/pending", params={"drain": "false"}))
    assert len(peeked) == 1
    delivered = _ok(client.get("/v1/recollections/pending"))
    assert [item["memory"]["id"] for item in delivered] == [stored["id"]]
    assert _ok(client.get("/v1/recollections/pending")) == []


def test_http_media_must_be_base64_never_a_server_path(
    client: httpx.Client, tmp_path: Path
) -> None:
    song = tmp_path / "song.wav"
    song.write_bytes(melody(3))
    refused = client.post("/v1/sense", json={"audio": str(song)})
    assert refused.status_code == 422
    assert refused.json()["error"]["field"] == "audio"
    encoded = base64.b64encode(melody(3)).decode()
    stored = _ok(
        client.post("/v1/experiences", json={"content": "the song", "audio": encoded}), 201
    )
    fired = _ok(client.post("/v1/sense", json={"audio": encoded}))
    assert [item["memory"]["id"] for item in fired] == [stored["id"]]
    nothing = client.post("/v1/sense", json={})
    assert nothing.status_code == 422


async def _mcp_round_trip(url: str) -> list[str]:
    async with Client(url) as mcp:
        tools = sorted(tool.name for tool in (await mcp.list_tools()).tools)
        await mcp.call_tool("remember", {"content": "written through /mcp"})
        return tools


def test_http_serves_mcp_at_slash_mcp(server: ServerProcess, client: httpx.Client) -> None:
    tools = anyio.run(_mcp_round_trip, f"{server.base_url}/mcp")
    assert tools == [
        "cancel_intention",
        "core_memory",
        "entities",
        "explain",
        "forget",
        "get",
        "intentions",
        "list",
        "neighbourhood",
        "pending_recollections",
        "recall",
        "remember",
        "remember_conversation",
        "remind",
        "sense",
        "stats",
        "update",
    ]
    default = httpx.post(
        f"{server.base_url}/v1/search", json={"query": "written through"}, timeout=30
    )
    assert default.status_code == 200
    assert default.json()[0]["memory"]["content"] == "written through /mcp"


async def _mcp_oversized(url: str) -> str:
    async with Client(url) as mcp:
        with pytest.raises(MCPError) as raised:
            await mcp.call_tool("remember", {"content": "x" * 1_100_000})
        return str(raised.value)


def test_http_mcp_body_over_the_cap_is_a_json_rpc_error(
    server: ServerProcess, client: httpx.Client
) -> None:
    # The MCP client reads a JSON-RPC error from an error status: the caller learns the limit.
    message = anyio.run(_mcp_oversized, f"{server.base_url}/mcp")
    assert "larger than 1048576 bytes" in message
    assert "RECALLD_MAX_BODY_BYTES" in message
    raw = httpx.post(f"{server.base_url}/mcp", content=b"x" * 1_100_000, timeout=30)
    assert raw.status_code == 413
    assert raw.json()["error"]["code"] == -32600
    # The REST API keeps its own error shape.
    rest = client.post("/v1/memories", content=b"x" * 1_100_000)
    assert rest.status_code == 413
    assert rest.json()["error"]["type"] == "payload_too_large"


def test_http_mcp_endpoint_needs_a_token_for_its_namespace(tmp_path: Path) -> None:
    db = tmp_path / "secured.db"
    with TokenRegistry.open(Settings(db=db)) as registry:
        writer = registry.create("agent", {"default": "read+write"}).token
        outsider = registry.create("other", {"elsewhere": "read+write"}).token
        reader = registry.create("reader", {"default": "read"}).token
    running = ServerProcess(db).start()
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        url = f"{running.base_url}/mcp"
        assert httpx.post(url, json=body, timeout=30).status_code == 401
        for token in (outsider, reader):
            refused = httpx.post(
                url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30
            )
            assert refused.status_code == 403
            assert "default" in refused.json()["error"]["message"]
        tools = anyio.run(_mcp_with_token, url, writer)
        assert "remember" in tools
    finally:
        running.stop()


def test_http_mcp_refusals_reach_the_client_as_json_rpc_errors(tmp_path: Path) -> None:
    # The MCP client reads only a JSON-RPC error from an error status; the API's own
    # error body became a bare "Server returned an error response", hiding why.
    db = tmp_path / "refusals.db"
    with TokenRegistry.open(Settings(db=db)) as registry:
        reader = registry.create("reader", {"default": "read"}).token
    running = ServerProcess(db).start()
    try:
        url = f"{running.base_url}/mcp"
        for token, reason in (
            (None, "a bearer token is required"),
            ("rcd_0000000000000000_wrong", "the bearer token is not valid"),
            (reader, "this token may not read and write it"),
        ):
            message = anyio.run(_mcp_refused, url, token)
            assert reason in message, (token, message)
        raw = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=30)
        assert raw.status_code == 401
        assert raw.headers["WWW-Authenticate"] == "Bearer"
        assert raw.json()["error"]["code"] == -32600
    finally:
        running.stop()


def test_http_mcp_refuses_a_url_that_is_not_utf8_as_a_json_rpc_error(
    server: ServerProcess,
) -> None:
    # The URL check answered /mcp in the REST API's shape, which the MCP client reports
    # as a bare "Server returned an error response", hiding which part was wrong.
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    refused = httpx.post(f"{server.base_url}/mcp?client=%FF", json=ping, headers=accept)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == -32600
    assert error["message"].startswith("query: is not valid UTF-8"), error
    rest = httpx.get(f"{server.base_url}/v1/memories?q=%FF").json()["error"]
    assert (rest["type"], rest["field"]) == ("validation_error", "query")  # REST unchanged


def test_http_mcp_refuses_a_namespace_named_the_rest_way(server: ServerProcess) -> None:
    # /mcp works in the server's namespace; a client configured with the REST API's
    # namespace header (or query) used to write there silently instead of where it asked.
    url = f"{server.base_url}/mcp"
    accept = {"Accept": "application/json, text/event-stream"}
    for headers, query, named in (
        ({"X-Recalld-Namespace": "infra"}, "", "X-Recalld-Namespace"),
        ({}, "?namespace=infra", "namespace"),
        ({}, "?user_id=alice", "user_id"),
    ):
        refused = httpx.post(
            url + query, json=INITIALIZE, headers={**accept, **headers}, timeout=30
        )
        assert refused.status_code == 422, refused.text
        message = refused.json()["error"]["message"]
        assert message.startswith(f"{named}: "), message
        assert "'default'" in message
    same = httpx.post(
        url, json=INITIALIZE, headers={**accept, "X-Recalld-Namespace": "default"}, timeout=30
    )
    assert same.status_code == 200, same.text


def test_http_mcp_stream_ends_when_its_token_is_revoked(tmp_path: Path) -> None:
    # "A revoked token stops at once": a stream opened before the revocation kept
    # telling its holder when the core memory changed, for as long as it stayed open.
    db = tmp_path / "revoked.db"
    with TokenRegistry.open(Settings(db=db)) as registry:
        watcher = registry.create("watcher", {"default": "read+write"})
        editor = registry.create("editor", {"default": "read+write"}).token
    running = ServerProcess(db).start()
    try:
        url = f"{running.base_url}/mcp"
        headers = {
            "Authorization": f"Bearer {watcher.token}",
            "Accept": "application/json, text/event-stream",
        }
        opened = httpx.post(url, json=INITIALIZE, headers=headers, timeout=30)
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = "2025-06-18"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(url, json=initialized, headers=headers, timeout=30).status_code == 202
        subscribe = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/subscribe",
            "params": {"uri": "memory://core"},
        }
        assert httpx.post(url, json=subscribe, headers=headers, timeout=30).status_code == 200
        received: list[str] = []
        listening, ended = threading.Event(), threading.Event()

        def listen() -> None:
            stream_headers = {**headers, "Accept": "text/event-stream"}
            with httpx.stream("GET", url, headers=stream_headers, timeout=60) as stream:
                listening.set()
                received.extend(stream.iter_lines())
            ended.set()

        reader = threading.Thread(target=listen, daemon=True)
        reader.start()
        assert listening.wait(30)
        with TokenRegistry.open(Settings(db=db)) as registry:
            assert registry.revoke(watcher.info.id)
        edit = {"operations": [{"action": "add", "content": "after the revocation"}]}
        changed = httpx.post(
            f"{running.base_url}/v1/core/memory",
            json=edit,
            headers={"Authorization": f"Bearer {editor}"},
            timeout=30,
        )
        assert changed.status_code == 200, changed.text
        assert ended.wait(20), "the revoked token's stream is still open"
        assert not any("resources/updated" in line for line in received), received
    finally:
        running.stop()


async def _mcp_refused(url: str, token: str | None) -> str:
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers) as http_client:
        with pytest.raises(BaseExceptionGroup) as raised:
            async with Client(streamable_http_client(url, http_client=http_client)):
                pass
    return "; ".join(str(error) for error in _leaves(raised.value))


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions inside ``group`` and the groups nested in it."""
    found: list[BaseException] = []
    for error in group.exceptions:
        found.extend(_leaves(error) if isinstance(error, BaseExceptionGroup) else [error])
    return found


async def _mcp_with_token(url: str, token: str) -> list[str]:
    import httpx2  # the MCP SDK's HTTP client library
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as mcp,
    ):
        return sorted(tool.name for tool in (await mcp.list_tools()).tools)
