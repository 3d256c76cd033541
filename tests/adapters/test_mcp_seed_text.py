"""Text in other scripts reaches the model as itself in the seed dialects' answers
(adversarial pass b68): rover's rows and chaoscore's JSON format were written with
``json.dumps``' ASCII escapes, so "日本語" reached rover's model as ``\\\\u65e5\\\\u672c\\\\u8a9e``
(escaped twice, in the text it reads: seven bytes a character, illegible) and chaoscore's
as ``\\u65e5...``. The JSON values are the same; the seeds ask for no escaping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.mcp_support import call, in_process, structured, text

pytestmark = pytest.mark.anyio

WORDS = "日本語のメモ 👨‍👩‍👧 שלום עולם e\u0301"


async def test_rover_rows_carry_other_scripts_as_themselves(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "rover")() as client:
        stored = await call(
            client,
            "rover_memory",
            {"action": "remember", "title": "メモ", "content": WORDS, "tags": "仕事,עבודה"},
        )
        assert not stored.is_error, text(stored)
        # FTS reads a run of CJK as one word: the query is the whole run.
        for arguments in ({"action": "recall", "query": "日本語のメモ"}, {"action": "list"}):
            answer = await call(client, "rover_memory", arguments)
            action = arguments["action"]
            assert WORDS in text(answer), action
            assert "\\u" not in text(answer), action
            inner = json.loads(text(answer))["content"][0]["text"]
            rows = json.loads(inner[inner.index("\n") + 1 :])
            assert rows[0]["content"] == WORDS
            assert rows[0]["tags"] == "仕事,עבודה"


async def test_chaoscore_json_carries_other_scripts_as_themselves(tmp_path: Path) -> None:
    async with in_process(tmp_path / "m.db", "chaoscore,native")() as client:
        written = await call(
            client,
            "chaoscore_remember",
            {"key": "キー", "value": WORDS, "tags": ["仕事"], "response_format": "json"},
        )
        assert WORDS in text(written)
        assert "\\u" not in text(written)
        found = await call(client, "chaoscore_recall", {"key": "キー", "response_format": "json"})
        assert "\\u" not in text(found)
        assert json.loads(text(found))[0]["value"] == WORDS
        assert (await structured(client, "get", {"key": "キー"}))["content"] == WORDS
