"""2025-era ``resources/subscribe`` at scale: one subscription per session however often
asked, an unsubscribe that holds, sessions forgotten when they end, and a subscriber
that stops reading its stream holding up no one else."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx
import pytest
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ResourceUpdatedNotification, SubscribeRequestParams, UnsubscribeRequestParams

from recalld.adapters import mcp_server
from recalld.adapters.dialects.base import McpState, Subscribers
from recalld.adapters.mcp_server import build_server, http_endpoint
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.mcp_support import INITIALIZE, in_process, structured
from tests.adapters.test_http_mcp_session_limits import URL, _as_token

pytestmark = pytest.mark.anyio

CORE = "memory://core"
GRAPH = "memory://knowledge-graph"


async def test_a_session_is_told_once_however_often_it_subscribed_and_not_after_unsubscribe(
    tmp_path: Path,
) -> None:
    # Subscriptions were kept by the per-request proxy the SDK hands each handler: a
    # second subscribe of one session was a second subscriber (every change told twice),
    # and an unsubscribe, another proxy, removed nothing.
    told: list[str] = []
    graph_told = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            told.append(str(message.params.uri))
            if str(message.params.uri) == GRAPH:
                graph_told.set()

    async def core_then_graph(client: Any, note: str) -> list[str]:
        """Change the core memory, then the graph; what was told up to the graph's news
        (the watcher checks the core before the graph, and tells in order)."""
        nonlocal graph_told
        told.clear()
        graph_told = anyio.Event()
        add = {"action": "add", "content": note}
        await structured(client, "core_memory", {"target": "memory", "operations": [add]})
        entity = {"name": note, "entityType": "note", "observations": ["x"]}
        await structured(client, "create_entities", {"entities": [entity]})
        with anyio.fail_after(20):
            await graph_told.wait()
        return list(told)

    connect = in_process(tmp_path / "subscriptions.db", "native,knowledge")
    async with connect(mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource(GRAPH)
            # Told of the graph: the watcher has had its first look at every resource (a
            # change made before that look is its starting point, told to no one).
            for attempt in range(20):
                warm = {"name": f"warm {attempt}", "entityType": "note", "observations": ["x"]}
                await structured(client, "create_entities", {"entities": [warm]})
                with anyio.move_on_after(1):
                    await graph_told.wait()
                if graph_told.is_set():
                    break
            assert graph_told.is_set()
            await client.subscribe_resource(CORE)
            await client.subscribe_resource(CORE)
            assert await core_then_graph(client, "first") == [CORE, GRAPH]
            await client.unsubscribe_resource(CORE)
            assert await core_then_graph(client, "second") == [GRAPH]


def _handlers(tmp_path: Path) -> tuple[Any, Any]:
    server = build_server(lambda: MemoryService.open(Settings(db=tmp_path / "s.db")), ["native"])
    lowlevel = server._lowlevel_server
    subscribe = lowlevel.get_request_handler("resources/subscribe")
    unsubscribe = lowlevel.get_request_handler("resources/unsubscribe")
    assert subscribe is not None
    assert unsubscribe is not None
    return subscribe.handler, unsubscribe.handler


def _request(state: McpState, connection: Connection) -> ServerRequestContext[McpState]:
    """A request on ``connection``, with its own session proxy as the SDK builds one."""
    session = ServerSession(SimpleNamespace(), connection)
    return ServerRequestContext(
        session=session,
        lifespan_context=state,
        protocol_version="2025-06-18",
        method="resources/subscribe",
    )


async def test_a_session_that_ends_takes_its_subscriptions_with_it(tmp_path: Path) -> None:
    # The SDK's notify never fails for a closed session, so a session dropped without
    # DELETE (or reaped idle) stayed subscribed, held and written to, for the server's life.
    subscribe, unsubscribe = _handlers(tmp_path)
    state = McpState(service=SimpleNamespace())  # type: ignore[arg-type]
    ending = Connection(SimpleNamespace(), protocol_version="2025-06-18")
    staying = Connection(SimpleNamespace(), protocol_version="2025-06-18")
    for connection in (ending, ending, staying):
        await subscribe(_request(state, connection), SubscribeRequestParams(uri=CORE))
    assert state.subscribers.of(CORE) == [ending, staying]
    await ending.exit_stack.aclose()  # what the SDK does when a session ends
    assert state.subscribers.of(CORE) == [staying]
    await unsubscribe(_request(state, staying), UnsubscribeRequestParams(uri=CORE))
    assert state.subscribers.count() == 0


class _Reader:
    """A subscribed session that takes every notification."""

    def __init__(self) -> None:
        self.told: list[str] = []

    async def send_resource_updated(self, uri: str) -> None:
        self.told.append(uri)


class _Stalled:
    """A subscribed session whose event stream is open but no longer read."""

    async def send_resource_updated(self, uri: str) -> None:
        await anyio.Event().wait()


async def test_a_subscriber_that_stops_reading_holds_up_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Subscribers were told one after the other: the first whose buffers were full held
    # the watcher, and no one was told of any change again.
    monkeypatch.setattr(mcp_server, "NOTIFY_SECONDS", 0.05, raising=False)
    state = McpState(service=SimpleNamespace())  # type: ignore[arg-type]
    stalled, reader = _Stalled(), _Reader()
    state.subscribers.add(CORE, stalled)
    state.subscribers.add(CORE, reader)
    with anyio.fail_after(10):
        await mcp_server._notify(InMemorySubscriptionBus(), state, CORE)
    assert reader.told == [CORE]
    # The stalled one is dropped (logged), so the next change does not wait for it.
    assert state.subscribers.of(CORE) == [reader]


async def test_two_sessions_of_one_token_are_told_apart_and_a_delete_ends_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Over /mcp, through the SDK's own session teardown (the test above calls it by
    # hand): each session of one token is one subscriber however often it subscribed,
    # and DELETE ends that session's subscriptions only (review of pass c65).
    made: list[Subscribers] = []
    dropped = anyio.Event()
    create, drop = Subscribers.__init__, Subscribers.drop

    def recorded(self: Subscribers) -> None:
        create(self)
        made.append(self)

    def dropping(self: Subscribers, session: Any) -> None:
        drop(self, session)
        dropped.set()

    monkeypatch.setattr(Subscribers, "__init__", recorded)
    monkeypatch.setattr(Subscribers, "drop", dropping)
    settings = Settings(db=tmp_path / "two.db", embedder="none", graph_extractor="rules")
    server = build_server(lambda: MemoryService.open(settings), ["native"])
    endpoint, lifespan = http_endpoint(server, path="/mcp", host="127.0.0.1")
    transport = httpx.ASGITransport(app=_as_token(endpoint))
    accept = {"Accept": "application/json, text/event-stream", "X-Token": "one"}
    subscribe = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe"}
    async with lifespan(), httpx.AsyncClient(transport=transport, timeout=30) as client:
        sessions: list[dict[str, str]] = []
        for _ in range(2):
            opened = await client.post(URL, json=INITIALIZE, headers=accept)
            assert opened.status_code == 200, opened.text
            session = {**accept, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            session["Mcp-Protocol-Version"] = "2025-06-18"
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await client.post(URL, json=initialized, headers=session)).status_code == 202
            for _ in range(2):
                asked = {**subscribe, "params": {"uri": CORE}}
                answered = await client.post(URL, json=asked, headers=session)
                assert answered.status_code == 200, answered.text
            sessions.append(session)
        [subscribers] = made
        assert subscribers.count() == 2
        assert (await client.delete(URL, headers=sessions[0])).status_code == 200
        with anyio.fail_after(10):
            await dropped.wait()
        assert subscribers.count() == 1
