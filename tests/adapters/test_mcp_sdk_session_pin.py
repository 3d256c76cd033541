"""recalld's MCP middleware reads the SDK's private ``ServerSession._connection`` (to tell
a second ``initialize`` and a request before ``initialize``): the SDK version assumption
is pinned here, and a session without it degrades to the SDK's own answers."""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from recalld.adapters.mcp_requests import name_invalid_params


def test_sdk_server_session_still_has_the_private_connection_recalld_reads() -> None:
    # If this fails after an SDK update, the second-initialize refusal and the "not
    # initialized" message silently went back to the SDK's answers: port them.
    connection = Connection(SimpleNamespace(), protocol_version="2025-06-18")
    session = ServerSession(SimpleNamespace(), connection)
    private = getattr(session, "_connection", None)
    assert private is connection
    assert private.client_params is None
    assert private.initialize_accepted is False
    assert private.protocol_version == "2025-06-18"


def test_sdk_server_session_still_has_the_dispatch_context_recalld_reads() -> None:
    # The log of a tool call cancelled while it ran reads the request's cancel flag from
    # the private ServerSession._request_outbound: if this fails after an SDK update, that
    # warning silently stopped (mcp_server._note_cancelled_call): port it.
    dispatch = SimpleNamespace(cancel_requested=anyio.Event())
    connection = Connection(SimpleNamespace(), protocol_version="2025-06-18")
    session = ServerSession(dispatch, connection)
    assert getattr(session, "_request_outbound", None) is dispatch


def _context(method: str, session: Any) -> Any:
    return SimpleNamespace(method=method, session=session, params=None)


def test_a_session_without_the_private_connection_gets_the_sdk_answers() -> None:
    sdk_refusal = MCPError(code=types.INVALID_PARAMS, message="Invalid request parameters", data="")

    async def refuse(context: Any) -> Any:
        raise sdk_refusal

    async def answer(context: Any) -> Any:
        return {"answered": context.method}

    async def main() -> None:
        session = SimpleNamespace()  # an SDK that renamed or dropped _connection
        assert await name_invalid_params(_context("initialize", session), answer) == {
            "answered": "initialize"
        }
        with pytest.raises(MCPError) as raised:
            await name_invalid_params(_context("tools/list", session), refuse)
        assert raised.value is sdk_refusal

    anyio.run(main)


def test_sdk_connection_still_has_the_teardown_the_session_table_uses() -> None:
    # The session table learns that the SDK ended a session (idle, failed) from a
    # callback on its connection's exit_stack (public), reached through the private
    # ServerSession._connection: if this fails after an SDK update, such sessions count
    # against their client's share until their 404 again (mcp_server._forget_ended_sessions).
    connection = Connection(SimpleNamespace(), protocol_version="2025-06-18", session_id="s")
    session = ServerSession(SimpleNamespace(), connection)
    private = getattr(session, "_connection", None)
    assert private is connection
    assert private.session_id == "s"
    assert isinstance(private.exit_stack, AsyncExitStack)
