"""The seed dialects do what their seed documents' prose says, called as an agent calls them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.mcp_support import call, in_process, json_text, text

pytestmark = pytest.mark.anyio


async def test_chaoscore_recall_refuses_a_key_and_a_query_together(tmp_path: Path) -> None:
    """An exact key names one record and a query cannot narrow it: answering the key's
    record passed the query over in silence (a search for "Melbourne" under the key of a
    record that says "Sydney" answered that record). Refused naming ``query``; a blank
    query is no query, and a key with tags still filters."""
    async with in_process(tmp_path / "c.db", "chaoscore")() as client:
        await call(
            client,
            "chaoscore_remember",
            {"key": "staging.region", "value": "Sydney", "tags": ["infra"]},
        )
        both = await call(
            client,
            "chaoscore_recall",
            {"key": "staging.region", "query": "Melbourne", "response_format": "json"},
        )
        assert both.is_error
        assert text(both).startswith("Error: query: give either key")
        assert "not both" in text(both)

        blank = await json_text(
            client,
            "chaoscore_recall",
            {"key": "staging.region", "query": "  ", "response_format": "json"},
        )
        assert [record["value"] for record in blank] == ["Sydney"]
        assert (
            await json_text(
                client,
                "chaoscore_recall",
                {"key": "staging.region", "tags": ["other"], "response_format": "json"},
            )
            == []
        )
        by_query = await json_text(
            client, "chaoscore_recall", {"query": "sydney", "response_format": "json"}
        )
        assert [record["key"] for record in by_query] == ["staging.region"]
        # Nothing changed: the record is as written.
        (record,) = json.loads(
            text(await call(client, "chaoscore_recall", {"response_format": "json"}))
        )
        assert record["createdAt"] == record["updatedAt"]


def _envelope(result_text: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(result_text)
    assert set(body) == {"status", "content"}, body
    return body


async def test_rover_refuses_an_argument_its_action_does_not_take(tmp_path: Path) -> None:
    """The seed lists what each action takes; an argument another action takes was
    ignored, answering another question: ``list`` with a ``query`` listed everything,
    ``recent`` with a ``category`` every category, ``remember`` with a ``memory_id``
    stored a new memory instead of changing that one. Refused in the envelope, naming
    the argument; every argument at its default (a model filling all) is still served."""
    async with in_process(tmp_path / "r.db", "rover")() as client:
        stored = await call(
            client,
            "rover_memory",
            {"action": "remember", "title": "kitchen", "content": "Second door on the left"},
        )
        assert not stored.is_error, text(stored)
        for arguments, field in (
            ({"action": "list", "query": "garage"}, "query"),
            ({"action": "recent", "category": "hazard"}, "category"),
            ({"action": "remember", "title": "t", "content": "c", "memory_id": 1}, "memory_id"),
            ({"action": "recall", "query": "kitchen", "tags": "indoor"}, "tags"),
            ({"action": "forget", "memory_id": 1, "title": "kitchen"}, "title"),
            ({"action": "stats", "importance": 3}, "importance"),
        ):
            result = await call(client, "rover_memory", arguments)
            assert result.is_error, arguments
            body = _envelope(text(result))
            assert body["status"] == "error"
            message = body["content"][0]["text"]
            assert message.startswith(f"{field}: is not used by {arguments['action']}"), message
        # Nothing was stored, forgotten or changed by the refused calls.
        every_default = {
            "title": "",
            "content": "",
            "category": None,
            "tags": "",
            "importance": None,
            "meta": None,
            "memory_id": None,
            "query": "",
            "limit": 10,
        }
        listed = await call(client, "rover_memory", {**every_default, "action": "list"})
        assert not listed.is_error, text(listed)
        rows_text = _envelope(text(listed))["content"][0]["text"]
        rows = json.loads(rows_text.split("\n", 1)[1])
        assert [(row["memory_id"], row["title"]) for row in rows] == [(1, "kitchen")]
