"""A text argument is the text sent, even when it reads as JSON (adversarial pass f67).

The MCP SDK parses a string argument as JSON whenever the parameter is not exactly
``str`` (Claude Desktop sends lists and objects as JSON text), so an optional text
parameter (``str | None``) given ``"null"`` became None and one given ``"[1, 2]"`` or
``'{"a": 1}'`` became a list or object: a write to namespace ``"null"`` landed in the
server's namespace, a key ``"null"`` was dropped, and ``update`` refused JSON content
that ``remember`` stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.mcp_support import call, in_process, structured, text

pytestmark = pytest.mark.anyio


async def test_text_argument_null_names_its_namespace_not_the_servers(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        written = await call(client, "remember", {"content": "x", "namespace": "null"})
        assert written.is_error
        assert '"field": "namespace"' in text(written)
        assert "'null' is not a namespace this server serves" in text(written)
        by_user = await call(client, "remember", {"content": "y", "user_id": "null"})
        assert by_user.is_error
        assert '"field": "user_id"' in text(by_user)
        listed = await structured(client, "list", {})
        assert listed["memories"] == []


async def test_text_arguments_that_read_as_json_are_kept_as_text(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        receipt = await structured(
            client,
            "remember",
            {"content": "settings", "key": "null", "title": "[1, 2]", "speaker": "true"},
        )
        memory = await structured(client, "get", {"key": "null"})
        assert memory["id"] == receipt["id"]
        assert memory["title"] == "[1, 2]"
        assert memory["speaker"] == "true"
        changed = await structured(
            client, "update", {"id": receipt["id"], "content": '{"theme": "dark"}'}
        )
        assert changed["content"] == '{"theme": "dark"}'
        cleared = await call(client, "update", {"id": receipt["id"], "title": "null"})
        assert not cleared.is_error, text(cleared)
        assert (await structured(client, "get", {"id": receipt["id"]}))["title"] == "null"


async def test_list_arguments_sent_as_json_text_are_still_read(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        await structured(
            client,
            "remember",
            {"content": "tea", "tags": '["drinks", "green"]', "meta": '{"a": 1}'},
        )
        memory = await structured(client, "get", {"seq": 1})
        assert memory["tags"] == ["drinks", "green"]
        assert memory["meta"] == {"a": 1}


def test_an_sdk_that_bypasses_the_override_is_refused_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review of pass f67: TextKeptMetadata overrides an SDK method (pre_parse_json); an
    # SDK release that stops calling it would have silently read "null" as null again.
    from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata

    from recalld.adapters.dialects import _arguments
    from recalld.errors import RecalldError

    _arguments.check_text_kept()  # the pinned SDK calls it

    def bypassing(self: FuncMetadata, arguments: dict[str, Any]) -> dict[str, Any]:
        parsed = FuncMetadata.pre_parse_json(self, arguments)  # not the override
        return self.arg_model.model_validate(parsed).model_dump_one_level()

    monkeypatch.setattr(FuncMetadata, "validate_arguments", bypassing)
    with pytest.raises(RecalldError, match="keeps text arguments"):
        _arguments.check_text_kept()


def test_the_sdks_metadata_is_copied_whole() -> None:
    from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata

    from recalld.adapters.dialects._arguments import TextKeptMetadata

    def tool(text: str | None = None) -> str:
        return text or ""

    original = func_metadata(tool)
    kept = TextKeptMetadata.of(original)
    for name in FuncMetadata.model_fields:
        assert getattr(kept, name) == getattr(original, name), name
