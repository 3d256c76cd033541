"""Per-call scope on the native dialect: a namespace (or mem0's user_id/agent_id) within what
the server allows, anything else refused naming the argument; duplicates in each dialect's shape."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from recalld.adapters.mcp_server import build_server
from recalld.config import Settings
from recalld.service import MemoryService
from tests.adapters.mcp_support import call, structured, text


def _server(db: Path | str, dialects: list[str], namespaces: list[str]) -> object:
    settings = Settings(db=db, synchronous="NORMAL", embedder="none", graph_extractor="none")
    return build_server(lambda: MemoryService.open(settings), dialects, namespaces=namespaces)


def test_mcp_scope_allowed_namespaces_and_refusals(tmp_path: Path) -> None:
    server = _server(tmp_path / "scope.db", ["native"], ["team", "user:ada"])

    async def scenario() -> None:
        async with Client(server) as client:  # type: ignore[arg-type]
            written = await structured(
                client, "remember", {"content": "Team lunch is on Fridays", "namespace": "team"}
            )
            assert written["status"] == "created"
            mine = await structured(
                client, "remember", {"content": "Prefers tea", "user_id": "ada"}
            )
            assert mine["status"] == "created"
            found = await structured(client, "recall", {"query": "tea", "user_id": "ada"})
            assert [hit["id"] for hit in found["hits"]] == [mine["id"]]
            # The server's own namespace does not see the others' memories.
            default = await structured(client, "recall", {"query": "lunch Fridays"})
            assert default["hits"] == []
            refused = await call(client, "recall", {"query": "x", "namespace": "secret"})
            assert refused.is_error
            body = json.loads(text(refused))
            assert body["error"]["field"] == "namespace"
            assert "--namespaces secret" in body["error"]["message"]
            refused = await call(client, "remember", {"content": "x", "agent_id": "planner"})
            assert refused.is_error
            assert json.loads(text(refused))["error"]["field"] == "agent_id"
            both = await call(
                client, "recall", {"query": "x", "namespace": "team", "user_id": "ada"}
            )
            assert both.is_error

    anyio.run(scenario)


def test_mcp_duplicates_in_each_dialects_shape(any_database: Path | str) -> None:
    # any_database: on SQLite, and on PostgreSQL with pytest --postgres.
    server = _server(any_database, ["native", "batbox", "rover"], [])

    async def scenario() -> None:
        async with Client(server) as client:  # type: ignore[arg-type]
            first = await structured(client, "remember", {"content": "The gate code is 4821"})
            again = await structured(client, "remember", {"content": "The  gate code is 4821 "})
            assert (again["id"], again["status"]) == (first["id"], "duplicate")
            # batbox's writes carry the session's transcript as their source: a finding
            # of its own (provenance differs), and a retried call is its duplicate.
            batbox = await structured(
                client, "MemoryRemember", {"content": "The gate code is 4821"}
            )
            assert batbox["receipt"]["status"] == "created"
            retried = await structured(
                client, "MemoryRemember", {"content": "The gate code is 4821"}
            )
            assert (retried["id"], retried["receipt"]["status"]) == (batbox["id"], "duplicate")
            # rover's titled write is a memory of its own too (its title is part of what
            # it says), and a retried call is its duplicate, said in rover's envelope.
            titled = {"action": "remember", "title": "gate", "content": "The gate code is 4821"}
            rover = await call(client, "rover_memory", titled)
            assert "duplicate" not in text(rover)
            rover = await call(client, "rover_memory", titled)
            assert "duplicate" in text(rover)

    anyio.run(scenario)
