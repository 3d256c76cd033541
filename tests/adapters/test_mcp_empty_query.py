"""A blank query to a search tool is refused naming ``query``, in every dialect that
searches by text, rather than answered with no hits (adversarial pass e69)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.mcp_support import call, in_process, text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("query", ["", "   "])
async def test_native_recall_refuses_a_blank_query(tmp_path: Path, query: str) -> None:
    # It answered {"hits": []}: an agent read "nothing is stored about that".
    connect = in_process(tmp_path / "blank.db", "native")
    async with connect() as client:
        await call(client, "remember", {"content": "the cat likes fish"})
        refused = await call(client, "recall", {"query": query})
        found = await call(client, "recall", {"query": "cat"})
    assert refused.is_error
    error = json.loads(text(refused))["error"]
    assert error["field"] == "query"
    assert "blank" in error["message"]
    assert "use list" in error["message"]
    assert not found.is_error
    assert json.loads(text(found))["hits"]


@pytest.mark.parametrize(
    ("dialect", "tool", "arguments"),
    [
        ("batbox", "MemoryRecall", {"query": " "}),
        ("rover", "rover_memory", {"action": "recall", "query": ""}),
        ("rover", "rover_memory", {"action": "search", "query": " "}),
    ],
)
async def test_seed_search_tools_refuse_a_blank_query_naming_it(
    tmp_path: Path, dialect: str, tool: str, arguments: dict[str, str]
) -> None:
    connect = in_process(tmp_path / "blank.db", dialect)
    async with connect() as client:
        refused = await call(client, tool, arguments)
    assert refused.is_error
    assert "query" in text(refused)
