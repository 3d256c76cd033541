"""A compact recall or list answer holds at most 64 KiB of full contents (adversarial
pass f67).

A hit whose one-line summary had to shorten its memory carries the full ``content``;
100 hits of 64 KiB put 6 MB into the prompt of the model that called ``recall`` (or
``list``) with ``limit: 100``, more than any model's context.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.adapters.dialects._compact import CONTENT_BUDGET, within_budget
from tests.adapters.mcp_support import call, in_process, structured, text

pytestmark = pytest.mark.anyio

LONG = "lorem ipsum dolor " * 2000  # 36,000 bytes: one fits the budget, two do not


async def test_recall_and_list_hold_full_contents_to_the_budget(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        for number in range(3):
            await structured(client, "remember", {"content": f"banana {number} {LONG}"})
        recalled = await call(client, "recall", {"query": "banana", "limit": 3})
        hits = recalled.structured_content
        assert hits is not None
        assert len(hits["hits"]) == 3
        whole = [hit for hit in hits["hits"] if "content" in hit]
        assert len(whole) == 1
        assert whole[0] is hits["hits"][0]
        assert hits["content_left_out"] == 2
        assert all(hit["prompt_line"] for hit in hits["hits"])
        assert len(text(recalled).encode()) < CONTENT_BUDGET + 4096
        page = await structured(client, "list", {"limit": 3})
        assert [("content" in memory) for memory in page["memories"]] == [True, False, False]
        assert page["content_left_out"] == 2
        verbose = await structured(client, "recall", {"query": "banana", "verbose": True})
        assert all(hit["memory"]["content"].endswith(LONG) for hit in verbose["hits"])
        assert "content_left_out" not in verbose


async def test_answers_within_the_budget_are_whole(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "native")() as client:
        short = "lorem ipsum " * 100  # longer than a line, well within the budget
        for number in range(3):
            await structured(client, "remember", {"content": f"banana {number} {short}"})
        hits = await structured(client, "recall", {"query": "banana"})
        assert all("content" in hit for hit in hits["hits"])
        assert "content_left_out" not in hits


async def test_sensed_and_pending_recollections_hold_full_contents_to_the_budget(
    tmp_path: Path,
) -> None:
    # Review of pass f67: sense (up to 3) and pending_recollections (up to 100 a call)
    # carried every long recollection's whole content too: 6 MB for a full queue.
    cafe = {"lat": 48.8566, "lon": 2.3522}
    async with in_process(tmp_path / "m.db", "native")() as client:
        for number in range(3):
            memory = {"content": f"croissant {number} {LONG}", "place": cafe}
            await structured(client, "remember", {**memory, "at": "2026-11-04T08:10:00+01:00"})
        cue = {"place": cafe, "at": "2026-11-05T08:05:00+01:00"}
        sensed = await call(client, "sense", cue)
        fired = sensed.structured_content
        assert fired is not None
        assert len(fired["recollections"]) == 3
        assert [("content" in item) for item in fired["recollections"]] == [True, False, False]
        assert fired["content_left_out"] == 2
        assert len(text(sensed).encode()) < CONTENT_BUDGET + 4096
        peeked = await structured(client, "pending_recollections", {"drain": False})
        assert peeked == fired
        whole = await structured(client, "pending_recollections", {"verbose": True})
        assert [item["memory"]["content"].endswith(LONG) for item in whole["recollections"]] == [
            True
        ] * 3
        assert "content_left_out" not in whole


def test_the_budget_counts_utf8_bytes_up_to_exactly_64_kib() -> None:
    half = "é" * (CONTENT_BUDGET // 4)  # 32 KiB of UTF-8 in 16 Ki characters
    exact = within_budget({"hits": [{"content": half}, {"content": half}]}, "hits", False)
    assert [("content" in hit) for hit in exact["hits"]] == [True, True]
    assert "content_left_out" not in exact
    over = within_budget({"hits": [{"content": half}, {"content": half + "a"}]}, "hits", False)
    assert [("content" in hit) for hit in over["hits"]] == [True, False]
    assert over["content_left_out"] == 1
    huge = "x" * (2 * CONTENT_BUDGET)
    first = within_budget({"hits": [{"content": huge}, {"content": "y"}]}, "hits", False)
    assert first["hits"] == [{"content": huge}, {}]  # the first whole, then nothing more
