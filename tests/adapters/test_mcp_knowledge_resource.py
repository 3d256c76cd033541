"""The knowledge dialect's ``memory://knowledge-graph`` resource (adversarial pass f64): the
reference server (``@modelcontextprotocol/server-memory`` since 2026.7.4) serves its graph
as that resource, JSON, and notifies its subscribers when a tool changes the graph; a
client that read or subscribed to it was refused ("not a resource of this server")."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ResourceUpdatedNotification

from tests.adapters.conftest import OpenTransport
from tests.adapters.mcp_support import in_process, structured

pytestmark = pytest.mark.anyio

URI = "memory://knowledge-graph"


def _graph(resource: Any) -> Any:
    [content] = resource.contents
    assert content.mime_type == "application/json"
    return json.loads(content.text)


async def test_knowledge_graph_resource_is_listed_and_reads_the_first_page(
    tmp_path: Path,
) -> None:
    async with in_process(tmp_path / "k.db", "knowledge")() as client:
        listed = await client.list_resources()
        [resource] = listed.resources
        assert str(resource.uri) == URI
        assert resource.name == "knowledge-graph"
        # The reference registers it titled (src/memory/index.ts; review of pass f64).
        assert resource.title == "Knowledge Graph"
        assert resource.mime_type == "application/json"
        await structured(
            client,
            "create_entities",
            {
                "entities": [
                    {"name": "Alice", "entityType": "person", "observations": ["engineer"]},
                    {"name": "Acme", "entityType": "company", "observations": []},
                ]
            },
        )
        await structured(
            client,
            "create_relations",
            {"relations": [{"from": "Alice", "to": "Acme", "relationType": "works_at"}]},
        )
        graph = _graph(await client.read_resource(URI))
        page = await structured(client, "read_graph", {})
    assert graph == page
    assert [entity["name"] for entity in graph["entities"]] == ["Acme", "Alice"]
    assert graph["entities"][1]["observations"] == ["engineer"]
    assert graph["relations"] == [{"from": "Alice", "to": "Acme", "relationType": "works_at"}]
    assert graph["hasMore"] is False


def _add_from_another_process(db: Path | str) -> None:
    lines = json.dumps(
        {"type": "entity", "name": "Bo", "entityType": "person", "observations": ["late"]}
    )
    subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "import", "--format", "mcp-memory", "-"],
        input=lines.encode(),
        check=True,
        capture_output=True,
        timeout=60,
    )


async def test_knowledge_graph_resource_notifies_its_subscribers(
    mcp_transport: OpenTransport,
) -> None:
    connect, db = mcp_transport("knowledge")
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification) and str(message.params.uri) == URI:
            updated.set()

    async with connect(mode="legacy", message_handler=on_message) as client:
        await structured(
            client,
            "create_entities",
            {"entities": [{"name": "Ada", "entityType": "person", "observations": ["before"]}]},
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource(URI)
        # A change made by another process is told (the server checks the graph's version
        # from its start: a process launched after the subscription comes after that).
        await anyio.to_thread.run_sync(_add_from_another_process, db)
        with anyio.fail_after(20):
            await updated.wait()
        graph = _graph(await client.read_resource(URI))
        assert [entity["name"] for entity in graph["entities"]] == ["Ada", "Bo"]
        # And one made by a tool of this session.
        updated = anyio.Event()
        await structured(
            client,
            "add_observations",
            {"observations": [{"entityName": "Ada", "contents": ["notified"]}]},
        )
        with anyio.fail_after(20):
            await updated.wait()
        graph = _graph(await client.read_resource(URI))
        assert graph["entities"][0]["observations"] == ["before", "notified"]
