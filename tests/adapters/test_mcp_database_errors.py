"""A database that cannot be reached fails a tool call as the REST API answers it:
``database_unavailable`` (the kind a client retries on), without the database's
location (adversarial pass d62), and a permission error without the role it connects as
(adversarial pass c65)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from recalld.errors import DatabaseUnavailableError, StorageError
from recalld.service import MemoryService
from tests.adapters.mcp_support import call, in_process, text

pytestmark = pytest.mark.anyio

LOCATION = "postgresql://bob:***@db.internal.example:5432/recalld"


async def test_an_unreachable_database_is_database_unavailable_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(*_arguments: Any, **_options: Any) -> Any:
        raise DatabaseUnavailableError(
            f"the database at {LOCATION} is unavailable: connection refused"
        )

    async with in_process(tmp_path / "u.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "search", unavailable)
        result = await call(client, "recall", {"query": "anything"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "database_unavailable", body
    assert body["error"]["message"] == "the database is unavailable; retry shortly"
    assert "db.internal" not in text(result)


@pytest.mark.parametrize("role", ["payroll_writer", "payroll writer"])
async def test_a_permission_error_names_no_role_over_mcp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str
) -> None:
    # The location was taken out of a storage error's message, but not the role the
    # URL connects as, which PostgreSQL's permission error names twice; a role whose
    # name holds a space was still named (review of pass c65).
    pytest.importorskip("psycopg")
    from recalld.store.postgres_connection import PostgresDatabase

    connection = SimpleNamespace(
        _parameters={"user": role},
        display=LOCATION,
        _primary=lambda _error: "permission denied for table memories",
    )
    message = PostgresDatabase._not_permitted(connection, None)  # type: ignore[arg-type]
    assert role in message

    def refused(*_arguments: Any, **_options: Any) -> Any:
        raise StorageError(message)

    async with in_process(tmp_path / "p.db", "native")() as client:
        monkeypatch.setattr(MemoryService, "search", refused)
        result = await call(client, "recall", {"query": "anything"})
    assert result.is_error
    body = json.loads(text(result))
    assert body["error"]["type"] == "storage_error", body
    assert "payroll" not in text(result)
    assert "db.internal" not in text(result)
    said = body["error"]["message"]
    assert said.startswith("the database failed: the role recalld connects as may not"), said
    assert "permission denied for table memories" in said
    assert "TO <role> (and the tables' privileges)" in said
