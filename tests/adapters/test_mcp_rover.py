"""rover_memory's actions against its seed (004), through the MCP SDK client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.mcp_support import call, in_process, text

pytestmark = pytest.mark.anyio


async def _rover(client: Any, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    """Call rover_memory: the MCP error flag and the envelope."""
    result = await call(client, "rover_memory", arguments)
    body: dict[str, Any] = json.loads(text(result))
    assert body["status"] == ("error" if result.is_error else "success")
    return bool(result.is_error), body


def _rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    listing = body["content"][0]["text"]
    rows: list[dict[str, Any]] = json.loads(listing[listing.index("\n") + 1 :])
    return rows


async def test_rover_remember_the_same_content_under_another_title_stores_both(
    tmp_path: Path,
) -> None:
    # The seed's remember "stores a new memory" labelled by its title: the same directions
    # to two rooms are two memories (the second was answered "duplicate; nothing stored").
    directions = "Through the second door on the left from the hallway."
    async with in_process(tmp_path / "rover.db", "rover")() as client:
        for title in ("kitchen entrance", "bathroom entrance"):
            failed, body = await _rover(
                client,
                {
                    "action": "remember",
                    "title": title,
                    "content": directions,
                    "category": "spatial",
                },
            )
            assert not failed
            assert body["content"][0]["text"].startswith("Remembered memory")
        # The same call again (a retry) is still one memory.
        failed, again = await _rover(
            client, {"action": "remember", "title": "bathroom entrance", "content": directions}
        )
        assert not failed
        assert "duplicate" in again["content"][0]["text"]
        _, listed = await _rover(client, {"action": "list"})
        assert sorted(row["title"] for row in _rows(listed)) == [
            "bathroom entrance",
            "kitchen entrance",
        ]


async def test_rover_update_refuses_a_blank_title_as_remember_does(tmp_path: Path) -> None:
    # remember refuses a title of spaces; update stored one (a memory labelled "   ").
    async with in_process(tmp_path / "rover.db", "rover")() as client:
        await _rover(client, {"action": "remember", "title": "ladder", "content": "In the garage"})
        failed, body = await _rover(
            client, {"action": "update", "memory_id": 1, "title": "   ", "importance": 5}
        )
        assert failed
        assert body["content"][0]["text"].startswith("title: ")
        _, listed = await _rover(client, {"action": "list"})
        [row] = _rows(listed)
        assert (row["title"], row["importance"]) == ("ladder", None)  # nothing changed


async def test_rover_an_empty_category_is_no_category(tmp_path: Path) -> None:
    # Review 59b: a model that fills in every argument sends category "" for "none", and
    # every action refused it ("must be one of spatial, ..."), as no other default is.
    async with in_process(tmp_path / "rover.db", "rover")() as client:
        failed, _ = await _rover(
            client,
            {"action": "remember", "title": "ladder", "content": "In the garage", "category": ""},
        )
        assert not failed
        await _rover(
            client,
            {
                "action": "remember",
                "title": "stairs",
                "content": "Mind the step",
                "category": "hazard",
            },
        )
        for action in ("list", "recent", "stats"):
            failed, body = await _rover(client, {"action": action, "category": " "})
            assert not failed, (action, body)
        failed, listed = await _rover(client, {"action": "list", "category": ""})
        assert sorted(row["title"] for row in _rows(listed)) == ["ladder", "stairs"]
        failed, found = await _rover(client, {"action": "recall", "query": "step", "category": ""})
        assert not failed
        assert [row["title"] for row in _rows(found)] == ["stairs"]
        # An empty category changes nothing in an update, as an empty title keeps the title.
        failed, _ = await _rover(
            client, {"action": "update", "memory_id": 2, "category": "", "importance": 4}
        )
        assert not failed
        _, listed = await _rover(client, {"action": "list", "category": "hazard"})
        [row] = _rows(listed)
        assert (row["title"], row["importance"]) == ("stairs", 4)
        failed, body = await _rover(client, {"action": "list", "category": "kitchen"})
        assert failed
        assert body["content"][0]["text"].startswith("category: ")
