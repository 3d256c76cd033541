"""The seed dialects do what their seed documents' prose says, called as an agent calls them."""

from __future__ import annotations

import json
from pathlib import Path

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
