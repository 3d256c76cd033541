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
        # Even a query that matches that very record: whether a query matches is a ranked,
        # thresholded judgement ("melb" finds no "Melbourne"), so "the key's record if the
        # query matches it" could answer "No memories found" for a record that is there.
        restated = await call(
            client, "chaoscore_recall", {"key": "staging.region", "query": "staging region"}
        )
        assert restated.is_error
        assert text(restated).startswith("Error: query: give either key")

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


async def test_rover_refuses_an_argument_that_would_narrow_an_action_not_taking_it(
    tmp_path: Path,
) -> None:
    """An argument that selects or narrows what an action acts on was ignored by an action
    that does not take it, answering another question: ``list`` with a ``query`` listed
    everything, ``recent`` with a ``category`` every category, ``remember`` with a
    ``memory_id`` stored a new memory instead of changing that one. Refused in the
    envelope, naming the argument; a descriptive argument the action does not take
    (``title`` with forget, ``category`` with stats) is ignored, and every argument at its
    default (a model filling all) is served."""
    async with in_process(tmp_path / "r.db", "rover")() as client:

        async def rows(arguments: dict[str, Any]) -> list[dict[str, Any]]:
            result = await call(client, "rover_memory", arguments)
            assert not result.is_error, text(result)
            body = _envelope(text(result))
            assert body["status"] == "success"
            found: list[dict[str, Any]] = json.loads(body["content"][0]["text"].split("\n", 1)[1])
            return found

        await rows({"action": "remember", "title": "kitchen", "content": "Second door on the left"})
        await rows({"action": "remember", "title": "stairs", "content": "Steep", "tags": "indoor"})
        for arguments, field in (
            ({"action": "remember", "title": "t", "content": "c", "memory_id": 1}, "memory_id"),
            ({"action": "recall", "query": "kitchen", "memory_id": 1}, "memory_id"),
            ({"action": "search", "query": "kitchen", "memory_id": 0}, "memory_id"),
            ({"action": "list", "memory_id": 2}, "memory_id"),
            ({"action": "recent", "memory_id": 2}, "memory_id"),
            ({"action": "stats", "memory_id": 1}, "memory_id"),
            ({"action": "list", "query": "garage"}, "query"),
            ({"action": "recent", "query": "garage"}, "query"),
            ({"action": "recent", "category": "hazard"}, "category"),
            ({"action": "recall", "query": "kitchen", "tags": "indoor"}, "tags"),
            ({"action": "search", "query": "kitchen", "tags": " indoor ,"}, "tags"),
            ({"action": "list", "tags": "indoor"}, "tags"),
            ({"action": "recent", "tags": "indoor"}, "tags"),
        ):
            result = await call(client, "rover_memory", arguments)
            assert result.is_error, arguments
            body = _envelope(text(result))
            assert body["status"] == "error"
            message = body["content"][0]["text"]
            assert message.startswith(f"{field}: is not used by {arguments['action']}"), message
        # Nothing was stored or changed by the refused calls.
        assert [(row["memory_id"], row["title"]) for row in await rows({"action": "list"})] == [
            (2, "stairs"),
            (1, "kitchen"),
        ]
        # Descriptive arguments, and narrowing ones at their defaults, change no answer.
        stats = await call(client, "rover_memory", {"action": "stats", "category": "hazard"})
        assert json.loads(_envelope(text(stats))["content"][0]["text"])["count"] == 2
        every_default = {
            "title": "",
            "content": "",
            "category": None,
            "tags": " , ",
            "importance": None,
            "meta": None,
            "memory_id": None,
            "query": "  ",
            "limit": 10,
        }
        listed = await rows({**every_default, "action": "recent"})
        assert [row["memory_id"] for row in listed] == [2, 1]
        forgot = await call(
            client,
            "rover_memory",
            {"action": "forget", "memory_id": 1, "title": "kitchen", "query": "kitchen"},
        )
        assert not forgot.is_error, text(forgot)
        assert [row["memory_id"] for row in await rows({"action": "list"})] == [2]
