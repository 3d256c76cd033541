"""A database under pressure is answered for what it is, over REST and MCP: busy (a lock
another client holds, a statement timeout, a pool in use) is ``database_busy``, not
``database_unavailable``; a full disk carries ``Retry-After``; neither says where the
database is (adversarial pass b64)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recalld import knowledge_import
from recalld.adapters._cli_support import ErrorAsJson
from recalld.errors import (
    DatabaseBusyError,
    DatabaseLockedError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
    DiskFullError,
    LastingConflictError,
    StorageError,
    WriteConflictError,
)
from recalld.service import MemoryService
from recalld.tokens import TokenRegistry
from recalld.transfer import IMPORT_CHUNK_LINES, Transfer
from tests.adapters.mcp_support import call, in_process, text

LOCATION = "postgresql://bob:***@db.internal.example:5432/recalld"
BUSY = DatabaseBusyError(
    f"{LOCATION} kept a lock recalld needed held by another client for longer than the"
    " lock timeout (RECALLD_LOCK_RETRY_SECONDS = 30): nothing was written"
)

READ_ONLY = DatabaseReadOnlyError(
    f"the database at {LOCATION} is read-only (cannot execute INSERT in a read-only"
    " transaction): nothing was written. point it at the primary server"
)


def _raising(error: Exception) -> Any:
    def raise_it(*_arguments: Any, **_options: Any) -> Any:
        raise error

    return raise_it


def test_a_busy_database_is_503_database_busy_with_retry_after_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MemoryService, "remember_many", _raising(BUSY))
    response = client.post("/v1/memories", json={"content": "anything"})
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["type"] == "database_busy", error
    assert "lock another client holds" in error["message"]
    assert "nothing was written" in error["message"]
    assert response.headers["retry-after"] == "1"
    assert "db.internal" not in response.text


def test_a_full_disk_is_503_disk_full_with_retry_after_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = DiskFullError("the disk holding the database is full; nothing was written")
    monkeypatch.setattr(MemoryService, "remember_many", _raising(full))
    response = client.post("/v1/memories", json={"content": "anything"})
    assert response.status_code == 503
    assert response.json()["error"]["type"] == "disk_full"
    assert response.headers["retry-after"] == "60"


def test_a_read_only_database_is_503_database_read_only_with_retry_after_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hot standby (a failover not finished) was 503 storage_error "the database could not
    # serve the request", without Retry-After: the log alone said why (adversarial pass d65).
    monkeypatch.setattr(MemoryService, "remember_many", _raising(READ_ONLY))
    response = client.post("/v1/memories", json={"content": "anything"})
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["type"] == "database_read_only", error
    assert "hot standby" in error["message"]
    assert "nothing was written" in error["message"]
    assert response.headers["retry-after"] == "5"
    assert "db.internal" not in response.text


@pytest.mark.anyio
async def test_a_read_only_database_is_database_read_only_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process(tmp_path / "ro.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "remember", _raising(READ_ONLY))
        result = await call(client, "remember", {"content": "anything"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "database_read_only", body
    assert "primary server" in body["error"]["message"]
    assert "db.internal" not in text(result)


@pytest.mark.anyio
async def test_a_busy_database_is_database_busy_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process(tmp_path / "busy.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "search", _raising(BUSY))
        result = await call(client, "recall", {"query": "anything"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "database_busy", body
    assert "retry shortly" in body["error"]["message"]
    assert "db.internal" not in text(result)


@pytest.mark.anyio
async def test_sqlites_write_lock_held_is_database_busy_over_mcp_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write lock another process held was `storage_error` "the database failed: <path>
    # …" over MCP while REST said 503 (passes a64 and b64, unified at their merge).
    locked = DatabaseLockedError(f"{tmp_path}/locked.db stayed locked for 30 s")
    async with in_process(tmp_path / "locked.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "remember", _raising(locked))
        result = await call(client, "remember", {"content": "while locked"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "database_busy", body
    assert "RECALLD_LOCK_RETRY_SECONDS" in body["error"]["message"]
    assert str(tmp_path) not in text(result)


@pytest.mark.parametrize(
    ("error", "kind", "retry_after"),
    [
        (BUSY, "database_busy", "1"),
        (DiskFullError("the disk is full"), "disk_full", "60"),
        (READ_ONLY, "database_read_only", "5"),
    ],
)
def test_the_token_store_under_pressure_answers_so_with_retry_after(
    client: TestClient,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    kind: str,
    retry_after: str,
) -> None:
    monkeypatch.setattr(TokenRegistry, "any_active", _raising(error))
    response = client.get("/v1/stats")
    assert response.status_code == 503
    assert response.json()["error"]["type"] == kind
    assert response.headers["retry-after"] == retry_after


@pytest.mark.anyio
async def test_a_storage_error_over_mcp_does_not_say_where_the_database_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # After a failover to a hot standby, new connections are read-only: the message named
    # the database's role, host, port and name to any client of /mcp, where REST answers
    # "the database could not serve the request" and logs the rest.
    read_only = StorageError(
        f"the database at {LOCATION} is read-only (cannot execute INSERT in a read-only"
        " transaction): nothing was written. point it at the primary server"
    )
    async with in_process(tmp_path / "ro.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "remember", _raising(read_only))
        result = await call(client, "remember", {"content": "anything"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "storage_error", body
    assert body["error"]["message"] == (
        "the database failed: the database is read-only (cannot execute INSERT in a"
        " read-only transaction): nothing was written. point it at the primary server"
    )
    assert "db.internal" not in text(result)
    assert any("db.internal" in record.getMessage() for record in caplog.records)


def _second_chunk_raises(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """An import whose second chunk (one transaction) meets ``error``; the first is kept."""
    import_chunk = Transfer._import_chunk
    chunks: list[int] = []

    def second_raises(self: Transfer, chunk: Any, report: Any, *rest: Any) -> None:
        chunks.append(len(chunk))
        if len(chunks) == 2:
            raise error
        import_chunk(self, chunk, report, *rest)

    monkeypatch.setattr(Transfer, "_import_chunk", second_raises)


def test_an_import_a_busy_database_stopped_says_what_it_kept_over_rest(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its chunks are one transaction each: those before the busy one are kept. REST said
    # only "nothing was written; retry shortly" (review of pass b64).
    _second_chunk_raises(monkeypatch, BUSY)
    lines = [json.dumps({"content": f"imported memory {n}"}) for n in range(IMPORT_CHUNK_LINES + 3)]
    response = client.post("/v1/import", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["type"] == "database_busy"
    message = error["message"]
    assert message.startswith(f"the import stopped at line {IMPORT_CHUNK_LINES + 1}:"), message
    assert f"kept ({IMPORT_CHUNK_LINES} created, 0 updated)" in message
    assert "db.internal" not in message
    assert response.headers["retry-after"] == "1"
    assert service.stats().count == IMPORT_CHUNK_LINES


def test_an_import_a_busy_database_stopped_after_its_memories_says_so_over_rest(
    client: TestClient, service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lines written after every memory (here the declared graph) have their own
    # message (stop 64): REST must keep it too, not fall back to "nothing was written".
    monkeypatch.setattr(Transfer, "_import_entity", _raising(BUSY))
    lines = [
        json.dumps({"content": "a memory before the graph"}),
        json.dumps({"type": "recalld.entity", "name": "Alice", "entity_type": "person"}),
    ]
    response = client.post("/v1/import", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    assert message.startswith("the import stopped at line 2:"), message
    assert "Every line written before it is imported and kept" in message
    assert "db.internal" not in message
    assert service.stats().count == 1


def test_an_mcp_memory_import_a_busy_database_stopped_says_what_it_kept_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its entities are written 500 a transaction: those before the busy one are kept, and
    # REST said "nothing was written" (integration read of stop 64).
    import_entity = knowledge_import._import_entity
    calls: list[int] = []

    def busy_after_the_first_batch(*arguments: Any) -> None:
        calls.append(1)
        if len(calls) > 500:
            raise BUSY
        import_entity(*arguments)

    monkeypatch.setattr(knowledge_import, "_import_entity", busy_after_the_first_batch)
    lines = [
        json.dumps({"type": "entity", "name": f"E{n}", "entityType": "thing", "observations": []})
        for n in range(700)
    ]
    response = client.post("/v1/import?format=mcp-memory", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    assert message.startswith("the import stopped at line 501:"), message
    assert "Every line written before it is imported and kept (500 entities" in message
    assert "db.internal" not in message


@pytest.mark.parametrize(
    "conflict",
    [
        WriteConflictError(f"{LOCATION}: the write conflicted with another client's"),
        LastingConflictError(f"{LOCATION}: the work kept conflicting for 30 s"),
    ],
    ids=["conflict", "lasting"],
)
def test_an_mcp_memory_import_a_conflict_stopped_says_it_conflicted_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, conflict: WriteConflictError
) -> None:
    # Review of pass c69: a batch still conflicting (a deadlock or serialization failure
    # after its re-runs) was told as "a lock another client holds", as c69 fixed for
    # every other answer; the batches before it are kept and counted once.
    import_entity = knowledge_import._import_entity
    calls: list[int] = []

    def conflicting_after_the_first_batch(*arguments: Any) -> None:
        calls.append(1)
        if len(calls) > 500:
            raise conflict
        import_entity(*arguments)

    monkeypatch.setattr(knowledge_import, "_import_entity", conflicting_after_the_first_batch)
    lines = [
        json.dumps({"type": "entity", "name": f"E{n}", "entityType": "thing", "observations": []})
        for n in range(700)
    ]
    response = client.post("/v1/import?format=mcp-memory", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["type"] == "database_busy"
    message = error["message"]
    assert message.startswith("the import stopped at line 501:"), message
    assert "conflicted with other clients' writes" in message
    assert "a lock another client holds" not in message
    assert "Every line written before it is imported and kept (500 entities" in message
    assert "db.internal" not in message


def test_an_import_sqlites_lock_stopped_names_the_setting_over_rest(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stopped import described SQLite's lock as PostgreSQL's ("a statement timeout, or
    # every connection in use"), not naming RECALLD_LOCK_RETRY_SECONDS (stop 64).
    _second_chunk_raises(monkeypatch, DatabaseLockedError("/tmp/x.db stayed locked for 30 s"))
    lines = [json.dumps({"content": f"imported memory {n}"}) for n in range(IMPORT_CHUNK_LINES + 3)]
    response = client.post("/v1/import", content="\n".join(lines) + "\n")
    message = response.json()["error"]["message"]
    assert response.json()["error"]["type"] == "database_busy"
    assert message.startswith(f"the import stopped at line {IMPORT_CHUNK_LINES + 1}:"), message
    assert "RECALLD_LOCK_RETRY_SECONDS" in message
    assert "/tmp/x.db" not in message


@pytest.mark.parametrize(
    ("error", "kind", "cause"),
    [
        (
            DatabaseUnavailableError("connection to db.internal:5432 refused"),
            "database_unavailable",
            "the server could not be reached",
        ),
        (StorageError("disk I/O error in /srv/db.internal.db"), "storage_error", "failed"),
        (READ_ONLY, "database_read_only", "takes no writes"),
    ],
)
def test_an_import_an_unreachable_or_failing_database_stopped_says_what_it_kept_over_rest(
    client: TestClient,
    service: MemoryService,
    monkeypatch: pytest.MonkeyPatch,
    error: StorageError,
    kind: str,
    cause: str,
) -> None:
    # REST said only "the database is unavailable; retry shortly" (or "could not serve
    # the request"): a client took the chunks kept for lost and sent them all again.
    _second_chunk_raises(monkeypatch, error)
    lines = [json.dumps({"content": f"imported memory {n}"}) for n in range(IMPORT_CHUNK_LINES + 3)]
    response = client.post("/v1/import", content="\n".join(lines) + "\n")
    assert response.status_code == 503
    body = response.json()["error"]
    assert body["type"] == kind
    message = body["message"]
    assert message.startswith(f"the import stopped at line {IMPORT_CHUNK_LINES + 1}:"), message
    assert cause in message
    assert f"kept ({IMPORT_CHUNK_LINES} created, 0 updated)" in message
    assert "db.internal" not in message
    assert service.stats().count == IMPORT_CHUNK_LINES


def test_openapi_503_names_every_error_type_rest_answers_it_with(client: TestClient) -> None:
    # It named only disk_full, so a client generated from it knew nothing of the others.
    document = client.get("/openapi.json").json()
    description = document["paths"]["/v1/memories"]["post"]["responses"]["503"]["description"]
    for kind in (
        "database_unavailable",
        "database_busy",
        "database_read_only",
        "disk_full",
        "storage_error",
        "embedding_error",
    ):
        assert kind in description, kind
    assert "Retry-After" in description


@pytest.mark.parametrize(
    "error",
    [
        BUSY,
        READ_ONLY,
        DatabaseLockedError("/tmp/x.db stayed locked for 30 s"),
        DatabaseUnavailableError("connection to db.internal:5432 refused"),
        DiskFullError("the disk is full"),
        StorageError("disk I/O error"),
    ],
    ids=type,
)
def test_a_cli_error_given_json_has_the_type_rest_answers_it_with(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, error: StorageError
) -> None:
    # A read-only database was "storage_error" to a CLI script given --json, while REST
    # (and MCP) answer it "database_read_only" (stop 65, at the merge of a65 and d65).
    monkeypatch.setattr(MemoryService, "remember_many", _raising(error))
    answered = client.post("/v1/memories", json={"content": "anything"}).json()["error"]["type"]
    assert ErrorAsJson(error).document()["error"]["type"] == answered
