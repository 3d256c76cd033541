"""Every argument of every tool, in every dialect, has a description: a model chooses
arguments by them (rover's and four knowledge tools' had none; adversarial pass e69).
What the seeds fix of each schema (types, defaults, required) is held by
test_mcp_schemas and test_mcp_knowledge; a description adds to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.adapters.dialects import DIALECT_MODULES
from tests.adapters.mcp_support import in_process

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("dialect", sorted(DIALECT_MODULES))
async def test_every_tool_argument_has_a_description(tmp_path: Path, dialect: str) -> None:
    async with in_process(tmp_path / "d.db", dialect)() as client:
        tools = (await client.list_tools()).tools
    undescribed = [
        f"{tool.name}.{name}"
        for tool in tools
        for name, schema in tool.input_schema.get("properties", {}).items()
        if not str(schema.get("description", "")).strip()
    ]
    assert tools
    assert undescribed == []
