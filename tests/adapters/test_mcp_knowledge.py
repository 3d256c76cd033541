"""The knowledge dialect through the official MCP SDK client: the reference server's schemas,
every tool over in-process, stdio and HTTP, and two server processes writing one graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.adapters.conftest import OpenTransport
from tests.adapters.mcp_support import Connect, call, in_process, stdio, structured, text

pytestmark = pytest.mark.anyio

REFERENCE = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "mcp_memory_reference_schemas.json").read_text()
)


def _interface(schema: Any) -> Any:
    """What a client relies on: types, properties, required, items and whether other keys
    are refused, recursively."""
    if isinstance(schema, list):
        return [_interface(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    shape: dict[str, Any] = {}
    if "type" in schema:
        shape["type"] = schema["type"]
    if "properties" in schema:
        shape["properties"] = {k: _interface(v) for k, v in schema["properties"].items()}
    if "items" in schema:
        shape["items"] = _interface(schema["items"])
    if schema.get("required"):
        shape["required"] = sorted(schema["required"])
    if "additionalProperties" in schema:
        shape["additionalProperties"] = schema["additionalProperties"]
    return shape


async def test_knowledge_input_schemas_match_the_reference_server(tmp_path: Path) -> None:
    async with in_process(tmp_path / "k.db", "knowledge")() as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    reference = REFERENCE["input_schemas"]
    assert set(tools) == set(reference)
    for name, expected in reference.items():
        ours = _interface(tools[name].input_schema)
        if name == "read_graph":
            # The one documented extension: optional paging, nothing required.
            assert set(ours["properties"]) == {"limit", "cursor"}
            assert "required" not in ours
            assert ours["properties"]["limit"]["type"] == "integer"
            ours = {"type": "object", "properties": {}, "additionalProperties": False}
        assert ours == _interface(expected), name
        assert tools[name].description
        # The answer's schema names the reference's keys (the deletes add the details).
        output = tools[name].output_schema
        assert output is not None, name
        assert set(REFERENCE["output_keys"][name]) <= set(output["properties"]), name
    assert tools["read_graph"].annotations is not None
    assert tools["read_graph"].annotations.read_only_hint is True
    assert tools["delete_entities"].annotations is not None
    assert tools["delete_entities"].annotations.destructive_hint is True


# The reference's titles and annotations (src/memory/index.ts at the fixture's commit):
# (title, readOnlyHint, destructiveHint, idempotentHint); openWorldHint is false for all.
REFERENCE_HINTS = {
    "create_entities": ("Create Entities", False, False, False),
    "create_relations": ("Create Relations", False, False, False),
    "add_observations": ("Add Observations", False, False, False),
    "delete_entities": ("Delete Entities", False, True, True),
    "delete_observations": ("Delete Observations", False, True, True),
    "delete_relations": ("Delete Relations", False, True, True),
    "read_graph": ("Read Graph", True, False, True),
    "search_nodes": ("Search Nodes", True, False, True),
    "open_nodes": ("Open Nodes", True, False, True),
}


async def test_knowledge_titles_and_hints_match_the_reference_server(tmp_path: Path) -> None:
    # A client that retries only idempotent tools, or shows titles, treats them alike
    # (the deletes said idempotentHint false and no tool had a title; adversarial pass a62).
    async with in_process(tmp_path / "k.db", "knowledge")() as client:
        listed = await client.list_tools()
    shown = {}
    for tool in listed.tools:
        hints = tool.annotations
        assert hints is not None
        assert hints.open_world_hint is False
        shown[tool.name] = (
            tool.title,
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
        )
    assert shown == REFERENCE_HINTS


@pytest.fixture
def connect(mcp_transport: OpenTransport) -> Connect:
    return mcp_transport("knowledge,native")[0]


async def test_knowledge_tools_over_every_transport(connect: Connect) -> None:
    entity_keys = set(REFERENCE["entity_keys"])
    relation_keys = set(REFERENCE["relation_keys"])
    async with connect() as client:
        created = await structured(
            client,
            "create_entities",
            {
                "entities": [
                    {
                        "name": "Ada_Quill",
                        "entityType": "person",
                        "observations": ["Keeps the lighthouse logbook"],
                    },
                    {"name": "Tern_Island", "entityType": "place", "observations": []},
                ]
            },
        )
        assert set(created) >= set(REFERENCE["output_keys"]["create_entities"])
        assert [set(e) for e in created["entities"]] == [entity_keys, entity_keys]
        # A key the reference's schema does not know is refused, as the library refuses it.
        odd = await call(
            client,
            "create_entities",
            {"entities": [{"name": "Odd", "entityType": "x", "observations": [], "bogus": 1}]},
        )
        assert odd.is_error
        assert "bogus" in text(odd)
        relations = await structured(
            client,
            "create_relations",
            {"relations": [{"from": "Ada_Quill", "to": "Tern_Island", "relationType": "lives_on"}]},
        )
        assert relations["relations"] == [
            {"from": "Ada_Quill", "to": "Tern_Island", "relationType": "lives_on"}
        ]
        # The text is the created list itself, as the reference's (none: already there).
        repeated = await call(
            client,
            "create_relations",
            {"relations": [{"from": "Ada_Quill", "to": "Tern_Island", "relationType": "lives_on"}]},
        )
        assert (json.loads(text(repeated)), repeated.structured_content) == ([], {"relations": []})
        added = await structured(
            client,
            "add_observations",
            {"observations": [{"entityName": "Ada_Quill", "contents": ["Bakes rye bread"]}]},
        )
        assert added == {
            "results": [{"entityName": "Ada_Quill", "addedObservations": ["Bakes rye bread"]}]
        }
        # What the agent wrote here is a memory every other dialect recalls.
        recalled = await structured(client, "recall", {"query": "rye bread"})
        assert recalled["hits"][0]["prompt_line"].endswith("Bakes rye bread")
        assert "observation" in recalled["hits"][0]["prompt_line"]

        opened = await structured(client, "open_nodes", {"names": ["ada_quill", "Nobody"]})
        assert set(opened) >= set(REFERENCE["output_keys"]["open_nodes"])
        [ada] = opened["entities"]
        assert ada["observations"] == ["Keeps the lighthouse logbook", "Bakes rye bread"]
        # The reference: every relation with one end opened, the other opened or not.
        assert opened["relations"] == [
            {"from": "Ada_Quill", "to": "Tern_Island", "relationType": "lives_on"}
        ]
        both = await structured(client, "open_nodes", {"names": ["ada_quill", "Tern_Island"]})
        assert [set(r) for r in both["relations"]] == [relation_keys]
        found = await structured(client, "search_nodes", {"query": "LIGHTHOUSE"})
        assert [e["name"] for e in found["entities"]] == ["Ada_Quill"]
        page = await structured(client, "read_graph", {"limit": 1})
        assert set(page) >= set(REFERENCE["output_keys"]["read_graph"])
        assert (len(page["entities"]), page["hasMore"]) == (1, True)
        rest = await structured(client, "read_graph", {"cursor": page["nextCursor"]})
        # Observations are not extracted: the graph is what the agent declared.
        assert [e["name"] for e in rest["entities"]] == ["Tern_Island"]
        assert page["entities"][0] not in rest["entities"]
        assert rest["hasMore"] is False

        removed = await structured(
            client,
            "delete_observations",
            {"deletions": [{"entityName": "Ada_Quill", "observations": ["Bakes rye bread"]}]},
        )
        assert set(removed) >= set(REFERENCE["output_keys"]["delete_observations"])
        assert removed["success"] is True
        # As the reference, a delete's text is its message alone; a create's is the list.
        again = await call(
            client,
            "delete_observations",
            {"deletions": [{"entityName": "Ada_Quill", "observations": ["Bakes rye bread"]}]},
        )
        assert again.structured_content is not None
        assert text(again) == again.structured_content["message"]
        gone = await structured(
            client,
            "delete_relations",
            {"relations": [{"from": "Ada_Quill", "to": "Tern_Island", "relationType": "lives_on"}]},
        )
        assert gone["deleted"] == ["Ada_Quill -[lives_on]-> Tern_Island"]
        deleted = await structured(
            client, "delete_entities", {"entityNames": ["Tern_Island", "Ghost"]}
        )
        assert deleted["success"] is True
        assert deleted["notFound"] == ["Ghost"]
        assert "Ghost" in deleted["message"]
        final = await structured(client, "read_graph", {})
        names = [e["name"] for e in final["entities"]]
        assert "Ada_Quill" in names
        assert "Tern_Island" not in names
        assert final["relations"] == []

        refused = await call(
            client,
            "create_entities",
            {"entities": [{"name": "x" * 201, "entityType": "person", "observations": []}]},
        )
        assert refused.is_error
        assert "entities[0].name" in text(refused)
        unknown = await call(
            client,
            "add_observations",
            {"observations": [{"entityName": "Ghost", "contents": ["boo"]}]},
        )
        assert unknown.is_error
        assert "Ghost" in text(unknown)


async def _write_graph(connect: Connect, writer: str, count: int) -> None:
    async with connect() as client:
        await call(
            client,
            "create_entities",
            {"entities": [{"name": f"hub {writer}", "entityType": "hub", "observations": []}]},
        )
        for index in range(count):
            name = f"{writer} node {index}"
            result = await call(
                client,
                "create_entities",
                {
                    "entities": [
                        {"name": name, "entityType": "node", "observations": [f"{name} fact"]}
                    ]
                },
            )
            assert not result.is_error, text(result)
            result = await call(
                client,
                "create_relations",
                {"relations": [{"from": f"hub {writer}", "to": name, "relationType": "holds"}]},
            )
            assert not result.is_error, text(result)
            result = await call(
                client,
                "add_observations",
                {"observations": [{"entityName": f"hub {writer}", "contents": [f"holds {name}"]}]},
            )
            assert not result.is_error, text(result)


@pytest.mark.slow
async def test_knowledge_two_processes_writing_one_graph_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    count = 25
    async with anyio.create_task_group() as writers:
        for writer in ("left", "right"):
            writers.start_soon(_write_graph, stdio(db, "knowledge"), writer, count)
    async with stdio(db, "knowledge")() as reader:
        page = await structured(reader, "read_graph", {"limit": 1000})
    names = {entity["name"] for entity in page["entities"]}
    for writer in ("left", "right"):
        assert {f"{writer} node {index}" for index in range(count)} <= names
        [hub] = [e for e in page["entities"] if e["name"] == f"hub {writer}"]
        held = {obs for obs in hub["observations"] if obs.startswith("holds ")}
        assert held == {f"holds {writer} node {index}" for index in range(count)}
    assert len([r for r in page["relations"] if r["relationType"] == "holds"]) == 2 * count
