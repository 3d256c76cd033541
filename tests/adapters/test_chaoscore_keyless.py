"""chaoscore_recall finds keyed records however many keyless key/value memories stand before
them, on either store: no record skipped or repeated between pages (review of pass c62)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.conftest import OpenTransport
from tests.adapters.mcp_support import call, in_process, text

pytestmark = pytest.mark.anyio


async def test_chaoscore_recall_pages_past_keyless_memories_in_order(
    mcp_transport: OpenTransport,
) -> None:
    connect, _ = mcp_transport("chaoscore,native")
    async with connect() as client:
        for key, notes in (("garden.gate", 15), ("garden.shed", 15)):
            saved = await call(client, "chaoscore_remember", {"key": key, "value": f"{key} code"})
            assert not saved.is_error, text(saved)
            for number in range(notes):
                note = {"content": f"garden {key} note {number}", "kind": "kv"}
                assert not (await call(client, "remember", note)).is_error
        for arguments, keys in (
            ({"limit": 1}, ["garden.shed"]),
            ({"limit": 2}, ["garden.shed", "garden.gate"]),
            ({"limit": 3}, ["garden.shed", "garden.gate"]),
        ):
            answer = await call(
                client, "chaoscore_recall", {**arguments, "response_format": "json"}
            )
            assert [record["key"] for record in json.loads(text(answer))] == keys, arguments
        found = await call(
            client, "chaoscore_recall", {"query": "garden", "limit": 2, "response_format": "json"}
        )
        assert sorted(record["key"] for record in json.loads(text(found))) == [
            "garden.gate",
            "garden.shed",
        ]


async def test_chaoscore_recall_finds_records_behind_more_keyless_notes_than_the_cap(
    tmp_path: Path,
) -> None:
    # chaoscore_recall widened its search up to RECALLD_MAX_LIMIT and then gave up: with
    # more keyless kv notes ranking above a record than that, the record was never found.
    connect = in_process(tmp_path / "c.db", "chaoscore,native", max_limit=20)
    async with connect() as client:
        saved = await call(
            client, "chaoscore_remember", {"key": "garden.gate", "value": "gate code 4411"}
        )
        assert not saved.is_error, text(saved)
        for number in range(30):
            note = {"content": f"garden garden note {number} about the garden", "kind": "kv"}
            assert not (await call(client, "remember", note)).is_error
        for arguments in ({"query": "garden", "limit": 1}, {"limit": 1}):
            answer = await call(
                client, "chaoscore_recall", {**arguments, "response_format": "json"}
            )
            assert [record["key"] for record in json.loads(text(answer))] == ["garden.gate"]
