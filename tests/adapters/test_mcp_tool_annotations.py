"""The native tools' definitions as agent frameworks and model APIs read them
(adversarial pass f67).

Names within ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI, Anthropic), an object input schema with
``properties``, a description, and side-effect hints a client may act on (auto-approve
what neither reads nor destroys): ``update`` replaced a memory's text for good, and
``core_memory`` removed entries, while both said ``destructiveHint: false``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.adapters.mcp_support import in_process

pytestmark = pytest.mark.anyio

# tool: (readOnlyHint, destructiveHint, idempotentHint); openWorldHint is false for all.
HINTS = {
    "remember": (False, True, False),  # a key's earlier value is overwritten
    "recall": (True, False, True),
    "explain": (True, False, True),
    "get": (True, False, True),
    "update": (False, True, False),  # the fields it is given replace the stored ones
    "forget": (False, True, True),  # a second forget of the id changes nothing
    "list": (True, False, True),
    "stats": (True, False, True),
    "core_memory": (False, True, False),  # patch and remove change entries for good
    "remember_conversation": (False, True, True),  # a turn sent edited replaces its text
    "remind": (False, False, False),
    "intentions": (True, False, True),
    "cancel_intention": (False, True, True),  # a cancelled intention never fires again
    "sense": (False, False, False),
    "pending_recollections": (False, False, False),  # delivers each item once
    "entities": (True, False, True),
    "neighbourhood": (True, False, True),
}


async def test_native_tool_hints_say_what_each_tool_does(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        tools = (await client.list_tools()).tools
    found = {}
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.open_world_hint is False, tool.name
        found[tool.name] = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
    assert found == HINTS


async def test_native_tool_definitions_meet_model_api_rules(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool.name), tool.name
        assert tool.description, tool.name
        assert tool.input_schema["type"] == "object", tool.name
        assert isinstance(tool.input_schema.get("properties"), dict), tool.name
        assert "$ref" not in str(tool.input_schema), tool.name
        assert "$defs" not in tool.input_schema, tool.name


# The seed dialects' tools that may destroy what is stored (annotations are no part of
# the seeds' schemas), each with whether repeating a call changes nothing more.
SEED_DESTRUCTIVE_IDEMPOTENT = {
    # Overwrites a key, and is "idempotent for a given key/value pair", as its seed says
    # (review of pass f67).
    "chaoscore_remember": True,
    "chaoscore_forget": True,
    "rover_memory": False,  # its update and forget actions
    "memory": False,  # hermes: replace and remove
}


async def test_seed_tools_that_overwrite_or_delete_say_so(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "chaoscore,rover,hermes")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, idempotent in SEED_DESTRUCTIVE_IDEMPOTENT.items():
        hints = tools[name].annotations
        assert hints is not None, name
        assert (hints.read_only_hint, hints.destructive_hint) == (False, True), name
        assert hints.idempotent_hint is idempotent, name
    async with in_process(tmp_path / "m.db", "madeleine")() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    forget = tools["forget"].annotations
    assert forget is not None
    assert (forget.destructive_hint, forget.idempotent_hint) == (True, True)
