"""A 503 database_busy over REST and MCP says which kind of busy it was (adversarial pass
a68): a PostgreSQL conflict still there after recalld's re-runs is told as a conflict to
send again, not as "a lock another client holds"; a conversation a busy database stopped
after some chunks says what it kept, not "nothing was written"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld import conversations
from recalld.adapters.dialects.failures import CONFLICT_MESSAGE
from recalld.conversations import Conversations
from recalld.errors import (
    DatabaseBusyError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    StorageError,
    WriteConflictError,
)
from recalld.model import Receipt
from recalld.service import MemoryService
from tests.adapters.mcp_support import call, in_process, text
from tests.conversation_support import failing_turn

CONFLICT = WriteConflictError(
    "postgresql://bob:***@db.internal.example:5432/recalld: the write conflicted with"
    " another client's at the same moment (deadlock detected) and was rolled back:"
    " nothing was written; send it again"
)


def _raising(error: Exception) -> Any:
    def raise_it(*_arguments: Any, **_options: Any) -> Any:
        raise error

    return raise_it


def test_a_conflict_is_told_as_one_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MemoryService, "remember_many", _raising(CONFLICT))
    response = client.post("/v1/memories", json={"content": "anything"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["type"] == "database_busy"
    # Before: "the database is busy (a lock another client holds, ...)".
    assert error["message"] == CONFLICT_MESSAGE
    assert "db.internal" not in response.text


@pytest.mark.anyio
async def test_a_conflict_is_told_as_one_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process(tmp_path / "conflict.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "forget", _raising(CONFLICT))
        result = await call(client, "forget", {"id": "m1"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "database_busy", body
    assert body["error"]["message"] == CONFLICT_MESSAGE
    assert "db.internal" not in text(result)


def test_a_conversation_stopped_after_a_chunk_says_what_it_kept_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conversations, "CHUNK_TURNS", 2)
    turn = Conversations._turn

    def busy_at_the_third(self: Conversations, *arguments: Any) -> Receipt:
        if arguments[5] == 2:  # the message's index
            raise DatabaseBusyError("db.internal kept a lock: nothing was written")
        return turn(self, *arguments)

    monkeypatch.setattr(Conversations, "_turn", busy_at_the_third)
    messages = [{"role": "user", "content": f"Step {number} of the recipe"} for number in range(3)]
    response = client.post("/v1/conversations", json={"messages": messages})
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    # Before: "... nothing was written; retry shortly", though two turns were kept.
    assert "stopped at message 2" in message
    assert "The 2 turns before it are written and kept" in message
    assert "nothing was written" not in message
    assert "db.internal" not in response.text


STOPPING = [
    (
        DatabaseUnavailableError("db.internal:5432 could not be reached"),
        "database_unavailable",
        "the database is unavailable",
    ),
    (
        DatabaseReadOnlyError("db.internal is a hot standby: nothing was written"),
        "database_read_only",
        "the database takes no writes",
    ),
    (StorageError("db.internal: nothing was written"), "storage_error", "the database failed"),
]


@pytest.mark.parametrize(("error", "kind", "cause"), STOPPING)
def test_a_conversation_stopped_by_another_failure_says_what_it_kept_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, error: Exception, kind: str, cause: str
) -> None:
    failing_turn(monkeypatch, chunk_turns=2, failing_index=2, error=error)
    messages = [{"role": "user", "content": f"Step {number} of the recipe"} for number in range(3)]
    response = client.post("/v1/conversations", json={"messages": messages})
    assert response.status_code == 503
    told = response.json()["error"]
    assert told["type"] == kind
    # Before: "the database is unavailable; retry shortly", "... nothing was written; ..."
    # or "the database could not serve the request", though two turns were kept (review
    # of pass a68).
    assert (
        f"stopped at message 2, whose chunk of turns was not written: {cause}" in (told["message"])
    )
    assert "The 2 turns before it are written and kept" in told["message"]
    assert "nothing was written" not in told["message"]
    assert "db.internal" not in response.text


@pytest.mark.anyio
@pytest.mark.parametrize(("error", "kind", "cause"), STOPPING[:2])
async def test_a_conversation_stopped_by_another_failure_says_what_it_kept_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, kind: str, cause: str
) -> None:
    failing_turn(monkeypatch, chunk_turns=2, failing_index=2, error=error)
    messages = [{"role": "user", "content": f"Step {number} of the recipe"} for number in range(3)]
    async with in_process(tmp_path / "stopped.db", "native")() as client:
        result = await call(client, "remember_conversation", {"messages": messages})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == kind, body
    assert "The 2 turns before it are written and kept" in body["error"]["message"]
    assert "nothing was written" not in body["error"]["message"]
    assert "db.internal" not in text(result)
