"""Each dialect's published input schemas match its seed document, field for field."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from recalld.adapters import dialects as registry
from recalld.adapters.dialects.base import Dialect, ToolSpec
from recalld.errors import ValidationError
from tests.adapters.mcp_support import in_process

pytestmark = pytest.mark.anyio


async def _schemas(tmp_path: Path, dialect: str) -> dict[str, dict[str, Any]]:
    async with in_process(tmp_path / "s.db", dialect)() as client:
        listed = await client.list_tools()
    return {tool.name: tool.input_schema for tool in listed.tools}


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    """The parts of a schema the seeds specify: types, bounds, enums, defaults."""
    keep = ("type", "minimum", "maximum", "minLength", "maxLength", "enum", "default", "anyOf")
    properties = {
        name: {key: value for key, value in field.items() if key in keep}
        for name, field in schema.get("properties", {}).items()
    }
    for field in properties.values():
        if "items" in field:
            del field["items"]
    return {"properties": properties, "required": sorted(schema.get("required", []))}


async def test_schema_batbox_matches_seed(tmp_path: Path) -> None:
    schemas = await _schemas(tmp_path, "batbox")
    assert set(schemas) == {"MemoryRemember", "MemoryRecall", "MemoryStatus"}
    assert _shape(schemas["MemoryRemember"]) == {
        "properties": {
            "content": {"type": "string"},
            "source": {"type": "string"},
            "metadata": {"type": "object"},
            "captured_at": {"type": "string"},
        },
        "required": ["content"],
    }
    assert "kind" not in schemas["MemoryRemember"]["properties"]
    assert "id" not in schemas["MemoryRemember"]["properties"]
    assert _shape(schemas["MemoryRecall"]) == {
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
        },
        "required": ["query"],
    }
    assert _shape(schemas["MemoryStatus"]) == {"properties": {}, "required": []}


async def test_schema_chaoscore_matches_seed(tmp_path: Path) -> None:
    schemas = await _schemas(tmp_path, "chaoscore")
    assert _shape(schemas["chaoscore_remember"]) == {
        "properties": {
            "key": {"type": "string", "minLength": 1, "maxLength": 200},
            "value": {"type": "string"},
            "tags": {"type": "array", "default": []},
            "ttl_seconds": {"type": "number"},
            "response_format": {
                "type": "string",
                "enum": ["markdown", "json"],
                "default": "markdown",
            },
        },
        "required": ["key", "value"],
    }
    assert schemas["chaoscore_remember"]["properties"]["tags"]["items"] == {"type": "string"}
    recall = _shape(schemas["chaoscore_recall"])
    assert recall["required"] == []
    assert set(recall["properties"]) == {"key", "query", "tags", "limit", "response_format"}


async def test_schema_rover_matches_seed_signature(tmp_path: Path) -> None:
    schemas = await _schemas(tmp_path, "rover")
    nullable = {"string": None, "integer": None, "object": None}
    shape = _shape(schemas["rover_memory"])
    assert shape["required"] == []
    properties = shape["properties"]
    assert properties["action"] == {"type": "string", "default": "list"}
    assert properties["limit"] == {"type": "integer", "default": 10}
    for name in ("title", "content", "tags", "query"):
        assert properties[name] == {"type": "string", "default": ""}, name
    for name, kind in (
        ("category", "string"),
        ("importance", "integer"),
        ("meta", "object"),
        ("memory_id", "integer"),
    ):
        assert properties[name]["default"] is nullable[kind]
        assert {"type": "null"} in properties[name]["anyOf"], name
        assert any(option.get("type") == kind for option in properties[name]["anyOf"]), name
    assert list(properties) == [
        "action",
        "title",
        "content",
        "category",
        "tags",
        "importance",
        "meta",
        "memory_id",
        "query",
        "limit",
    ]


async def test_schema_native_tools_listed_with_output_schemas(tmp_path: Path) -> None:
    async with in_process(tmp_path / "n.db", "native")() as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {
        "remember",
        "recall",
        "explain",
        "get",
        "update",
        "forget",
        "list",
        "stats",
        "remind",
        "intentions",
        "cancel_intention",
        "sense",
        "pending_recollections",
        "entities",
        "neighbourhood",
        "core_memory",
        "remember_conversation",
    }
    assert tools["remember"].input_schema["required"] == ["content"]
    for name in tools:
        assert tools[name].output_schema is not None, name
    assert tools["recall"].annotations is not None
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["explain"].annotations is not None
    assert tools["explain"].annotations.read_only_hint is True
    assert tools["explain"].input_schema["required"] == ["query", "id"]
    min_score = tools["recall"].input_schema["properties"]["min_score"]
    assert (min_score["minimum"], min_score["maximum"]) == (0, 1)
    assert tools["forget"].annotations is not None
    assert tools["forget"].annotations.destructive_hint is True


def test_dialect_registry_refuses_unknown_and_clashing(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="unknown dialect 'nope'"):
        registry.resolve_dialects(["native", "nope"])
    clashing = types.ModuleType("recalld_test_clashing_dialect")
    clashing.DIALECT = Dialect(  # type: ignore[attr-defined]
        name="clashing", tools=(ToolSpec("remember", lambda: None, "a second remember"),)
    )
    monkeypatch.setitem(sys.modules, clashing.__name__, clashing)
    monkeypatch.setitem(registry.DIALECT_MODULES, "clashing", clashing.__name__)
    with pytest.raises(
        ValidationError, match="'native' and 'clashing' both define the tool 'remember'"
    ):
        registry.resolve_dialects(["native", "clashing"])
    assert [d.name for d in registry.resolve_dialects(["clashing", "batbox"])] == [
        "clashing",
        "batbox",
    ]
