"""A native tool's optional argument sent as null is an argument left out (adversarial
pass f67).

Models and framework converters (OpenAI strict mode makes every argument required and
nullable) send ``null`` for every optional argument they do not use. Those whose default
is not null (``kind``, ``tags``, ``verbose``, ``limit``, ``depth``, ``drain`` …) were
refused ("Input should be a valid string"), so a call that meant the defaults failed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.mcp_support import (
    call,
    http,
    in_process,
    start_http_server,
    stdio,
    stop,
    structured,
    text,
)

pytestmark = pytest.mark.anyio

# Every optional argument of each native tool whose default is not null (the ones whose
# default is null took a null already).
DEFAULTED = {
    "remember": ["kind", "tags", "verbose"],
    "recall": ["limit", "verbose"],
    "explain": ["limit", "verbose"],
    "get": ["verbose"],
    "update": ["verbose"],
    "list": ["limit", "verbose"],
    "remember_conversation": ["tags", "include_system", "include_tools", "verbose"],
    "remind": ["mention", "signals", "readings", "tags", "repeat"],
    "intentions": ["state"],
    "sense": ["tags", "verbose"],
    "pending_recollections": ["drain", "verbose"],
    "entities": ["limit"],
    "neighbourhood": ["depth"],
}


async def test_null_for_a_defaulted_argument_is_its_default(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        nulls = dict.fromkeys(DEFAULTED["remember"])
        receipt = await structured(client, "remember", {"content": "Ada likes tea", **nulls})
        assert set(receipt) == {"id", "status"}  # verbose null: compact
        memory = await structured(client, "get", {"id": receipt["id"], "verbose": True})
        assert memory["kind"] == "note"
        assert memory["tags"] == []
        compact = await structured(client, "get", {"id": receipt["id"], "verbose": None})
        assert "seq" not in compact
        hits = await structured(client, "recall", {"query": "tea", "limit": None, "verbose": None})
        assert [hit["id"] for hit in hits["hits"]] == [receipt["id"]]
        explained = await structured(
            client, "explain", {"query": "tea", "id": receipt["id"], "limit": None}
        )
        assert explained["limit"] == 10
        page = await structured(client, "list", {"limit": None, "verbose": None})
        assert len(page["memories"]) == 1
        changed = await structured(
            client, "update", {"id": receipt["id"], "title": "drink", "verbose": None}
        )
        assert changed["title"] == "drink"
        conversation = {"messages": [{"role": "user", "content": "hello there"}]}
        nulls = dict.fromkeys(DEFAULTED["remember_conversation"])
        stored = await structured(client, "remember_conversation", {**conversation, **nulls})
        assert stored["created"] == 1
        reminder = {"action": "buy bread", "at": "2030-01-01T09:00:00Z"}
        nulls = dict.fromkeys(DEFAULTED["remind"])
        intention = await structured(client, "remind", {**reminder, **nulls})
        assert intention["repeat"] == "once"
        listed = await structured(client, "intentions", {"state": None})
        assert [item["id"] for item in listed["intentions"]] == [intention["id"]]
        sensed = await structured(client, "sense", {"text": "bread", "tags": None, "verbose": None})
        assert sensed["recollections"] == []
        pending = await structured(
            client, "pending_recollections", {"drain": None, "verbose": None}
        )
        assert pending["recollections"] == []
        entities = await structured(client, "entities", {"limit": None})
        assert "entities" in entities
        missing = await call(client, "neighbourhood", {"entity": "Nobody", "depth": None})
        assert "no entity named 'Nobody'" in text(missing)


async def test_null_for_a_required_argument_is_still_refused(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        refused = await call(client, "remember", {"content": None})
        assert refused.is_error
        assert '"field": "content"' in text(refused)
        assert (await structured(client, "list", {}))["memories"] == []


async def test_every_defaulted_argument_is_listed(tmp_path: Path) -> None:
    """The table above names every native argument with a default other than null, so a
    new one is tested too."""
    async with in_process(tmp_path / "m.db", "native")() as client:
        tools = (await client.list_tools()).tools
    found: dict[str, list[str]] = {}
    for tool in tools:
        properties = tool.input_schema.get("properties", {})
        required = set(tool.input_schema.get("required", []))
        for name, schema in properties.items():
            if name not in required and "default" in schema:
                found.setdefault(tool.name, []).append(name)
    listed = {name: sorted(arguments) for name, arguments in DEFAULTED.items()}
    assert {name: sorted(arguments) for name, arguments in found.items()} == listed


@pytest.mark.slow
async def test_nulls_and_json_looking_text_read_alike_over_stdio_and_http(
    tmp_path: Path,
) -> None:
    """Review of pass f67: both readings hold over the real transports, not only in
    process (a null left out, a text argument kept as the text sent)."""
    process, url = start_http_server(tmp_path / "h.db", "native")
    try:
        for connect in (stdio(tmp_path / "s.db", "native"), http(url)):
            async with connect() as client:
                nulls = {"kind": None, "tags": None, "verbose": None, "title": None}
                receipt = await structured(
                    client, "remember", {"content": "Ada likes tea", "key": "null", **nulls}
                )
                memory = await structured(client, "get", {"key": "null", "verbose": None})
                assert (memory["id"], memory["key"]) == (receipt["id"], "null")
                assert "kind" not in memory  # the default note, left out of a compact answer
                walled = await call(client, "recall", {"query": "tea", "namespace": "null"})
                assert walled.is_error
                assert '"field": "namespace"' in text(walled)
                page = await structured(client, "list", {"limit": None, "since": None})
                assert [listed["id"] for listed in page["memories"]] == [receipt["id"]]
    finally:
        stop(process)
