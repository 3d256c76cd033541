"""A conversation's send or an import a replaced database file stopped after some chunks
says both what it kept and that only a restart helps (integration read, stop 68): REST
said "the database failed" (a68's cause for any storage failure), MCP said the file was
replaced but not that the earlier turns were kept (c68's message, chosen before a68's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld.errors import DatabaseReplacedError
from recalld.transfer import IMPORT_CHUNK_LINES, Transfer
from tests.adapters.mcp_support import call, in_process, text
from tests.conversation_support import failing_turn

REPLACED = DatabaseReplacedError(
    "/srv/secret-place/live.db was moved, deleted or replaced while recalld had it open"
)
SAID = "moved, deleted or replaced while this server had it open"
MESSAGES = [{"role": "user", "content": f"Step {number} of the recipe"} for number in range(3)]


def _said_both(message: str) -> None:
    assert "stopped at message 2, whose chunk of turns was not written" in message, message
    assert "The 2 turns before it are written and kept" in message, message
    assert SAID in message, message
    assert "restart the server" in message, message
    assert "secret-place" not in message


def test_a_conversation_stopped_by_a_replaced_file_says_both_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_turn(monkeypatch, chunk_turns=2, failing_index=2, error=REPLACED)
    response = client.post("/v1/conversations", json={"messages": MESSAGES})
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["type"] == "storage_error"
    _said_both(error["message"])


@pytest.mark.anyio
async def test_a_conversation_stopped_by_a_replaced_file_says_both_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing_turn(monkeypatch, chunk_turns=2, failing_index=2, error=REPLACED)
    async with in_process(tmp_path / "stopped.db", "native")() as client:
        result = await call(client, "remember_conversation", {"messages": MESSAGES})
    assert result.is_error
    error = json.loads(text(result))["error"]
    assert error["type"] == "storage_error", error
    _said_both(error["message"])


def test_an_import_stopped_by_a_replaced_file_says_to_restart_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_chunk = Transfer._import_chunk
    chunks: list[int] = []

    def second_replaced(self: Transfer, chunk: Any, report: Any, *rest: Any) -> None:
        chunks.append(len(chunk))
        if len(chunks) == 2:
            raise REPLACED
        import_chunk(self, chunk, report, *rest)

    monkeypatch.setattr(Transfer, "_import_chunk", second_replaced)
    lines = [json.dumps({"content": f"imported memory {n}"}) for n in range(IMPORT_CHUNK_LINES + 3)]
    response = client.post("/v1/import", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    assert message.startswith(f"the import stopped at line {IMPORT_CHUNK_LINES + 1}:"), message
    assert f"kept ({IMPORT_CHUNK_LINES} created, 0 updated)" in message
    # Before: "the database failed: nothing of that line's chunk was written".
    assert SAID in message
    assert "restart the server" in message
    assert "secret-place" not in message
