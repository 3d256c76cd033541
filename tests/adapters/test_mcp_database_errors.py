"""A database that cannot be reached fails a tool call as the REST API answers it:
``database_unavailable`` (the kind a client retries on), without the database's
location (adversarial pass d62)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseUnavailableError
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
