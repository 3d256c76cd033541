"""What an LLM gets back for the argument slips it makes (adversarial pass b68).

Text where a list, boolean, number or object belongs, arguments wrapped in ``input``, an
empty cursor: each is refused as before (nothing is read into what was sent, nothing
changes), now with the exact fix, where "Input should be a valid list" left a model
guessing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

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
                "is empty: leave cursor out (or null) for the first page; a page that"
                " gives no next cursor is the last"
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


# Review of pass b68: the new messages' limits and every dialect's shape for them.


async def test_a_long_text_for_a_list_or_a_number_is_not_repeated_whole(tmp_path: Path) -> None:
    # "for one item send [...]" and "send ... as a JSON number" repeated the whole text
    # (a 100,000-character tags text came back as a 100 kB message), besides the cut echo.
    async with in_process(tmp_path / "m.db", "native,chaoscore")() as client:
        tags = await _refusal(client, "remember", {"content": "x", "tags": "w" * 100_000})
        assert tags["message"].endswith(
            '(100000 characters): for one item send it inside a list, ["..."]'
        )
        salience = await _refusal(
            client, "remember", {"content": "x", "salience": "0." + "1" * 100_000}
        )
        assert salience["message"].endswith(
            "(100002 characters): send it as a JSON number, without quotes"
        )
        seed = await call(
            client, "chaoscore_remember", {"key": "k", "value": "v", "tags": "w" * 100_000}
        )
        assert seed.is_error
        assert len(text(seed)) < 300, len(text(seed))
        assert (await structured(client, "list", {}))["memories"] == []


async def test_only_a_json_number_is_offered_as_the_fix(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native,rover")() as client:
        # NaN and Infinity are no JSON numbers (Python's json reads them).
        for constant in ("NaN", "Infinity", "-Infinity"):
            error = await _refusal(client, "remember", {"content": "x", "salience": constant})
            assert error["message"] == f"must be a number, got the text '{constant}'"
        # Text refused for its length is text: no advice to send 201 digits as a number.
        speaker = await _refusal(client, "remember", {"content": "x", "speaker": "1" * 201})
        assert speaker["message"] == "String should have at most 200 characters"
        # A fraction sent for a count would only be refused again.
        limit = await _refusal(client, "list", {"limit": "5.5"})
        assert limit["message"] == "must be an integer from 1 to 100, got '5.5'"
        seq = await _refusal(client, "get", {"seq": "7.0"})
        assert seq["message"] == "must be an integer: send 7.0 as a JSON number, without quotes"
        # rover's action is one of its words, not a number.
        action = await call(client, "rover_memory", {"action": "7"})
        assert action.is_error
        assert "JSON number" not in text(action)


def _chaoscore(answer: CallToolResult) -> str:
    assert answer.is_error
    assert text(answer).startswith("Error: ")
    return text(answer).removeprefix("Error: ")


def _rover(answer: CallToolResult) -> str:
    body = json.loads(text(answer))
    assert answer.is_error
    assert set(body) == {"status", "content"}
    assert body["status"] == "error"
    message: str = body["content"][0]["text"]
    return message


def _hermes(answer: CallToolResult) -> str:
    body = json.loads(text(answer))
    assert answer.is_error
    assert body["success"] is False
    assert body["target"] == "user"
    message: str = body["error"]
    return message


def _batbox(answer: CallToolResult) -> str:
    body = json.loads(text(answer))
    assert answer.is_error
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "field", "message"}
    return f"{body['error']['field']}: {body['error']['message']}"


def _knowledge(answer: CallToolResult) -> str:
    assert answer.is_error
    assert not text(answer).startswith(("{", "Error"))
    return text(answer)


@pytest.mark.parametrize(
    ("tool", "arguments", "shape", "message"),
    [
        (
            "chaoscore_remember",
            {"key": "k", "value": "v", "tags": "work"},
            _chaoscore,
            "tags: must be a list (a JSON array), got the text 'work': for one item send"
            ' ["work"]',
        ),
        (
            "chaoscore_recall",
            {"limit": "5"},
            _chaoscore,
            "limit: must be an integer: send 5 as a JSON number, without quotes",
        ),
        (
            "rover_memory",
            {"action": "list", "limit": "5"},
            _rover,
            "limit: must be an integer: send 5 as a JSON number, without quotes",
        ),
        (
            "rover_memory",
            {"input": {"action": "list"}},
            _rover,
            "input: is not an argument of this tool: send the arguments themselves, not wrapped"
            " in input (it takes action, category, content, importance, limit, memory_id, meta,"
            " query, tags, title)",
        ),
        (
            "memory",
            {"target": "user", "operations": "add x"},
            _hermes,
            "operations: must be a list (a JSON array), got the text 'add x'",
        ),
        (
            "MemoryRecall",
            {"query": "x", "limit": "5"},
            _batbox,
            "limit: must be an integer: send 5 as a JSON number, without quotes",
        ),
        (
            "open_nodes",
            {"names": "Alice"},
            _knowledge,
            "names: must be a list (a JSON array), got the text 'Alice': for one item send"
            ' ["Alice"]',
        ),
        (
            "delete_entities",
            {"entityNames": "Alice"},
            _knowledge,
            "entityNames: must be a list (a JSON array), got the text 'Alice': for one item send"
            ' ["Alice"]',
        ),
        (
            "read_graph",
            {"cursor": ""},
            _knowledge,
            # knowledge's answer calls it nextCursor: the message names no field for it.
            "cursor: is empty: leave cursor out (or null) for the first page; a page that gives"
            " no next cursor is the last",
        ),
    ],
)
async def test_every_seed_dialect_words_the_fixes_in_its_own_shape(
    tmp_path: Path, tool: str, arguments: dict[str, Any], shape: Any, message: str
) -> None:
    dialects = "native,chaoscore,rover,hermes,batbox,knowledge"
    async with in_process(tmp_path / "m.db", dialects)() as client:
        assert shape(await call(client, tool, arguments)) == message
        assert (await structured(client, "list", {}))["memories"] == []


def test_an_sdk_that_hides_argument_types_fails_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The "send [...]" fix reads the SDK's FuncMetadata.arg_model: a release that stops
    # carrying the types there must fail loudly, not drop the fix without a word.
    from mcp.server.mcpserver.utilities.func_metadata import func_metadata

    from recalld.adapters.dialects import _arguments
    from recalld.errors import RecalldError

    _arguments.check_text_lists()  # the pinned SDK carries them

    def untyped(tags, entityNames=None):  # type: ignore[no-untyped-def]  # noqa: N803
        return None

    monkeypatch.setattr(_arguments, "func_metadata", lambda _function: func_metadata(untyped))
    with pytest.raises(RecalldError, match=r"arg_model; found lists of strings \[\]"):
        _arguments.check_text_lists()
    monkeypatch.setattr(_arguments, "func_metadata", lambda _function: object())
    with pytest.raises(RecalldError, match="install the mcp release"):
        _arguments.check_text_lists()
    monkeypatch.undo()
    # The server's tools are not built on such an SDK.
    monkeypatch.setattr(_arguments, "_is_text_list", lambda _annotation: False)
    with pytest.raises(RecalldError, match="no longer describes a tool's arguments"):
        in_process(tmp_path / "m.db", "native")
