"""The hermes dialect over every transport: exact schema, batches, the core_memory
prompt, the memory://core resource, and change notifications across processes."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from mcp.types import ResourceUpdatedNotification

from tests.adapters.conftest import OpenTransport
from tests.adapters.mcp_support import (
    Connect,
    call,
    in_process,
    structured,
)

pytestmark = pytest.mark.anyio

SEED_SCHEMA_WITHOUT_DESCRIPTIONS = {
    "type": "object",
    "required": ["target"],
    "properties": {
        "action": {"enum": ["add", "patch", "remove"], "type": "string"},
        "content": {"type": "string"},
        "new_text": {"type": "string"},
        "old_text": {"type": "string"},
        "operations": {
            "type": "array",
            "items": {
                "additionalProperties": False,
                "properties": {
                    "action": {"enum": ["add", "patch", "remove"], "type": "string"},
                    "content": {"type": "string"},
                    "new_text": {"type": "string"},
                    "old_text": {"type": "string"},
                },
                "required": ["action"],
                "type": "object",
            },
        },
        "target": {"enum": ["memory", "user"], "type": "string"},
    },
}


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: _without_descriptions(value)
            for key, value in node.items()
            if not (key == "description" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_without_descriptions(item) for item in node]
    return node


@pytest.fixture
def hermes(mcp_transport: OpenTransport) -> tuple[Connect, Path | str]:
    return mcp_transport("hermes")


async def test_hermes_schema_batches_prompt_and_resource(hermes: tuple[Connect, Path]) -> None:
    connect, _ = hermes
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"memory"}
        schema = tools["memory"].input_schema
        assert _without_descriptions(schema) == SEED_SCHEMA_WITHOUT_DESCRIPTIONS
        assert "operations" in schema["properties"]["operations"]["description"] or (
            "batch" in schema["properties"]["operations"]["description"].lower()
        )

        added = await structured(
            client,
            "memory",
            {
                "target": "user",
                "operations": [
                    {"action": "add", "content": "Name: Ana Lima"},
                    {"action": "add", "new_text": "Role: SRE"},
                ],
            },
        )
        assert added["success"] is True
        assert added["entries"] == ["Name: Ana Lima", "Role: SRE"]
        assert added["usage"] == "24/1375"
        single = await structured(
            client,
            "memory",
            {
                "target": "user",
                "action": "patch",
                "old_text": "SRE",
                "content": "platform engineer",
            },
        )
        assert single["entries"][1] == "Role: platform engineer"

        overflow = await call(
            client, "memory", {"target": "memory", "action": "add", "content": "x" * 2201}
        )
        assert overflow.is_error
        body = overflow.structured_content
        assert body is not None
        assert body["success"] is False
        assert body["entries"] == []
        assert body["usage"] == "0/2200"
        ambiguous = await call(
            client, "memory", {"target": "user", "action": "remove", "old_text": "a"}
        )
        assert ambiguous.is_error
        assert ambiguous.structured_content is not None
        assert "more than once" in ambiguous.structured_content["error"]
        # A remove names an entry, not a span: text found twice in that one entry names it,
        # and a content the model filled in as well (the seed forbids it nowhere) is ignored.
        await structured(
            client,
            "memory",
            {"target": "memory", "action": "add", "content": "Use pnpm not npm; pnpm is faster"},
        )
        removed = await structured(
            client,
            "memory",
            {"target": "memory", "action": "remove", "old_text": "pnpm", "content": "unused"},
        )
        assert removed["success"] is True
        assert removed["entries"] == []
        rejected = await call(
            client, "memory", {"target": "user", "operations": [{"action": "add", "text": "x"}]}
        )
        assert rejected.is_error  # items allow no other keys

        resource = await client.read_resource("memory://core")
        text = resource.contents[0].text  # type: ignore[union-attr]
        assert "USER PROFILE [38/1375 chars]\nName: Ana Lima\nRole: platform engineer" in text
        prompt = await client.get_prompt("core_memory")
        prompt_text = prompt.messages[0].content.text  # type: ignore[union-attr]
        assert "Name: Ana Lima" in prompt_text
        assert "not as instructions" in prompt_text
        listed = await client.list_resources()
        assert [str(item.uri) for item in listed.resources] == ["memory://core"]


def _edit_from_another_process(db: Path | str, content: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "recalld", "--db", str(db), "core", "add", "memory", content],
        check=True,
        capture_output=True,
        timeout=60,
    )


async def test_hermes_resource_update_reaches_legacy_subscriber(
    hermes: tuple[Connect, Path],
) -> None:
    connect, db = hermes
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification) and (
            str(message.params.uri) == "memory://core"
        ):
            updated.set()

    async with connect(mode="legacy", message_handler=on_message) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource("memory://core")
        await anyio.to_thread.run_sync(_edit_from_another_process, db, "Edited by the CLI")
        with anyio.fail_after(20):
            await updated.wait()
        resource = await client.read_resource("memory://core")
        assert "Edited by the CLI" in resource.contents[0].text  # type: ignore[union-attr]


async def test_hermes_resource_update_reaches_listen_stream(
    hermes: tuple[Connect, Path],
) -> None:
    connect, db = hermes
    async with (
        connect() as client,
        client.listen(resource_subscriptions=["memory://core"]) as subscription,
    ):
        await anyio.to_thread.run_sync(_edit_from_another_process, db, "Seen by listen")
        with anyio.fail_after(20):
            event = await subscription.__anext__()
        assert isinstance(event, ResourceUpdated)
        assert event.uri == "memory://core"


async def test_native_core_memory_takes_new_text_as_hermes_does(tmp_path: Path) -> None:
    # The README: new_text is an alias of content, content wins when both are given; the
    # native core_memory has Hermes' batch semantics, so it takes the alias too.
    async with in_process(tmp_path / "alias.db", "native")() as client:
        added = await structured(
            client,
            "core_memory",
            {
                "target": "user",
                "operations": [
                    {"action": "add", "new_text": "Likes tea"},
                    {"action": "add", "content": "Lives in Porto", "new_text": "ignored"},
                ],
            },
        )
        assert added["entries"] == ["Likes tea", "Lives in Porto"]
        patched = await structured(
            client,
            "core_memory",
            {
                "target": "user",
                "operations": [{"action": "patch", "old_text": "tea", "new_text": "green tea"}],
            },
        )
        assert patched["entries"] == ["Likes green tea", "Lives in Porto"]
