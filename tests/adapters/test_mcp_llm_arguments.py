"""What an LLM gets back for the argument slips it makes (adversarial pass b68).

Text where a list, boolean, number or object belongs, arguments wrapped in ``input``, an
empty cursor: each is refused as before (nothing is read into what was sent, nothing
changes), now with the exact fix, where "Input should be a valid list" left a model
guessing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.mcp_support import call, in_process, structured, text

pytestmark = pytest.mark.anyio


async def _refusal(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await call(client, tool, arguments)
    assert result.is_error, text(result)
    error: dict[str, Any] = (result.structured_content or {})["error"]
    return error


async def test_text_for_a_list_of_strings_names_the_list_to_send(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        error = await _refusal(client, "remember", {"content": "x", "tags": "work"})
        assert error["field"] == "tags"
        assert error["message"] == (
            "must be a list (a JSON array), got the text 'work': for one item send [\"work\"]"
        )
        filtered = await _refusal(client, "recall", {"query": "x", "tags_any": "日本"})
        assert filtered["message"].endswith('for one item send ["日本"]')
        # A list of objects is not fixed by wrapping the text: no such advice.
        operations = await _refusal(
            client, "core_memory", {"target": "user", "operations": "add x"}
        )
        assert operations["message"] == "must be a list (a JSON array), got the text 'add x'"
        assert (await structured(client, "list", {}))["memories"] == []


async def test_text_for_a_boolean_or_a_number_says_send_it_unquoted(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        verbose = await _refusal(client, "list", {"verbose": "True"})
        assert verbose["field"] == "verbose"
        assert verbose["message"] == (
            "must be true or false (a JSON boolean), got the text 'True': send true without quotes"
        )
        salience = await _refusal(client, "remember", {"content": "x", "salience": "0.5"})
        assert salience["message"] == (
            "must be a number, got the text '0.5': send 0.5 as a JSON number, without quotes"
        )
        limit = await _refusal(client, "list", {"limit": "5"})
        assert limit["message"] == (
            "must be an integer from 1 to 100, got '5': send 5 as a JSON number, without quotes"
        )
        place = await _refusal(client, "remember", {"content": "x", "place": "Paris"})
        assert place["message"] == "must be an object (JSON), got the text 'Paris'"
        assert (await structured(client, "list", {}))["memories"] == []


async def test_arguments_wrapped_in_input_are_told_to_come_out(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native,chaoscore")() as client:
        error = await _refusal(client, "recall", {"input": {"query": "x"}})
        assert error["type"] == "unknown_argument"
        assert error["message"].startswith(
            "is not an argument of this tool: send the arguments themselves, not wrapped in"
            " input (it takes agent_id, category,"
        )
        seed = await call(client, "chaoscore_remember", {"arguments": {"key": "k", "value": "v"}})
        assert text(seed).startswith(
            "Error: arguments: is not an argument of this tool: send the arguments themselves"
        )


async def test_an_empty_cursor_is_refused_naming_the_first_page(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        await structured(client, "remember", {"content": "one"})
        for tool in ("list", "entities"):
            error = await _refusal(client, tool, {"cursor": ""})
            assert error["field"] == "cursor"
            assert error["message"] == (
                "is empty: leave cursor out (or null) for the first page; a page without"
                " next_cursor is the last"
            )


async def test_every_native_argument_says_what_it_is(tmp_path: Path) -> None:
    # An LLM picks arguments by their descriptions; converters (Gemini's, OpenAI's) pass
    # on nothing else.
    async with in_process(tmp_path / "m.db", "native")() as client:
        undescribed = {
            f"{tool.name}.{name}"
            for tool in (await client.list_tools()).tools
            for name, schema in tool.input_schema.get("properties", {}).items()
            if not schema.get("description")
        }
        assert undescribed == set()
