"""SessionTable against a stand-in for the SDK: a session with a request in flight (an
open event stream) is never the one closed to make room, and ``recalld mcp --transport
http`` holds its one client to its share too (adversarial pass d68)."""

from __future__ import annotations

import itertools
import json
import logging

import anyio
import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from recalld.adapters.http_mcp_session_table import SESSIONS_PER_CLIENT, SessionTable
from recalld.adapters.mcp_server import _bound_sessions, build_server
from tests.adapters.mcp_support import INITIALIZE

pytestmark = pytest.mark.anyio


class _StandIn:
    """Opens a session per POST, holds a GET open until ``release``, answers a DELETE."""

    def __init__(self) -> None:
        self.ids = (f"s{number}" for number in itertools.count(1))
        self.streaming = anyio.Event()
        self.release = anyio.Event()
        self.deleted: list[str] = []
        self.closing_scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id", b"").decode()
        answer: list[tuple[bytes, bytes]] = []
        if scope["method"] == "POST" and not session:
            answer = [(b"mcp-session-id", next(self.ids).encode())]
        elif scope["method"] == "GET":
            self.streaming.set()
            await self.release.wait()
        elif scope["method"] == "DELETE":
            self.deleted.append(session)
            self.closing_scopes.append(scope)
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        await send({"type": "http.response.body", "body": b"{}"})


_INITIALIZE = json.dumps(INITIALIZE).encode()


async def _call(app: SessionTable, method: str, session: str | None = None) -> Message:
    headers = [(b"host", b"127.0.0.1:8765")]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    scope = {"type": "http", "method": method, "path": "/mcp", "headers": headers}
    answers: list[Message] = []
    # Only an initialize opens a session (adversarial pass e69).
    body = _INITIALIZE if method == "POST" and session is None else b""

    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        answers.append(message)

    await app(scope, receive, send)
    return {**answers[0], "body": answers[1]["body"]}


async def test_a_session_with_an_open_stream_is_not_closed_to_make_room() -> None:
    stand_in = _StandIn()
    table = SessionTable(stand_in, per_client=1)
    first = await _call(table, "POST")
    assert dict(first["headers"])[b"mcp-session-id"] == b"s1"
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_call, table, "GET", "s1")
        with anyio.fail_after(30):
            await stand_in.streaming.wait()
        refused = await _call(table, "POST")
        stand_in.release.set()
    assert refused["status"] == 503
    assert b"the limit per client is 1" in refused["body"]
    assert stand_in.deleted == []
    # Its stream ended: now it is idle, and closed for the next.
    assert (await _call(table, "POST"))["status"] == 200
    assert stand_in.deleted == ["s1"]
    assert table.open_sessions == 1


async def test_the_server_limit_closes_the_longest_idle_session_of_any_client() -> None:
    stand_in = _StandIn()
    table = SessionTable(stand_in, per_client=5, server=2)
    await _call(table, "POST")
    await _call(table, "POST")
    await _call(table, "POST", None)
    assert stand_in.deleted == ["s1"]
    assert table.open_sessions == 2


def test_recalld_mcp_over_http_holds_its_client_to_a_share() -> None:
    server = build_server(lambda: None, ["native"])  # type: ignore[arg-type, return-value]
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    _bound_sessions(app, server, "/mcp")
    assert isinstance(app, Starlette)
    routes = [route for route in app.routes if isinstance(route, Route) and route.path == "/mcp"]
    assert isinstance(routes[0].app, SessionTable)
    assert routes[0].app.per_client == SESSIONS_PER_CLIENT


async def test_a_session_keeps_nothing_of_its_openers_connection() -> None:
    # The opener's scope, kept for the DELETE that may close the session, held its
    # connection's abort (and so the connection) for as long as the session lasted.
    stand_in = _StandIn()
    table = SessionTable(stand_in, per_client=1)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(b"host", b"127.0.0.1:8765")],
        "extensions": {"recalld.abort": {"abort": print}},
    }

    async def receive() -> Message:
        return {"type": "http.request", "body": _INITIALIZE, "more_body": False}

    async def send(message: Message) -> None:
        """The answer is not looked at."""

    await table(scope, receive, send)
    await _call(table, "POST")  # closes the first to make room
    assert stand_in.deleted == ["s1"]
    assert "extensions" not in stand_in.closing_scopes[0]


class _Refusing(_StandIn):
    """A stand-in for an SDK whose DELETE wants more than the opener's scope gives."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "DELETE":
            await super().__call__(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 400, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


async def test_a_session_the_sdk_would_not_close_is_not_said_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The DELETE's answer went nowhere: a session still open in the SDK was counted as
    # closed, and its next request answered 404 by the table (review of pass d68).
    table = SessionTable(_Refusing(), per_client=1)
    await _call(table, "POST")
    with caplog.at_level(logging.ERROR, "recalld.adapters.http_mcp_session_table"):
        refused = await _call(table, "POST")
    assert refused["status"] == 503
    assert b"the MCP SDK answered its DELETE 400" in refused["body"]
    assert table.open_sessions == 1
    assert (await _call(table, "POST", "s1"))["status"] == 200  # still served, not 404
    (record,) = caplog.records
    assert "answered its DELETE 400" in record.getMessage()


class _SlowOpener(_StandIn):
    """Opens a session whose answer (the initialize result) is sent after ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.answering = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or self.answering.is_set():
            await super().__call__(scope, receive, send)
            return
        answer = [(b"mcp-session-id", next(self.ids).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        self.answering.set()
        await self.release.wait()
        await send({"type": "http.response.body", "body": b"{}"})


async def test_a_session_still_answering_its_initialize_is_not_closed() -> None:
    # A session joined the table with no request in flight as soon as its answer
    # started: a concurrent initialize closed it while its initialize result was still
    # being sent, and was refused itself (review of pass d68).
    stand_in = _SlowOpener()
    table = SessionTable(stand_in, per_client=1)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_call, table, "POST")
        with anyio.fail_after(30):
            await stand_in.answering.wait()
        refused = await _call(table, "POST")
        stand_in.release.set()
    assert refused["status"] == 503
    assert b"this client holds 1," in refused["body"]
    assert stand_in.deleted == []
    assert (await _call(table, "POST"))["status"] == 200  # now idle: closed for the next
    assert stand_in.deleted == ["s1"]
    assert table.open_sessions == 1
