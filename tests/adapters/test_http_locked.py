"""REST while another process holds SQLite's write lock past RECALLD_LOCK_RETRY_SECONDS
(adversarial pass a64): a write answered 503 ``storage_error`` "the database could not
serve the request", telling a client neither that nothing was written nor that a retry
would do; it is now 503 ``database_busy`` saying so, with ``Retry-After``, as a busy
PostgreSQL server is."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from fastapi.testclient import TestClient

from recalld.config import Settings
from tests.lock_support import locked_settings


@pytest.fixture
def settings(db_path: Path) -> Settings:
    return locked_settings(db_path)


def test_http_a_write_the_lock_held_off_says_so_and_when_to_retry(
    client: TestClient, db_path: Path
) -> None:
    assert client.post("/v1/memories", json={"content": "before"}).status_code == 200
    other = apsw.Connection(str(db_path))  # another process, in the middle of a long write
    other.execute("BEGIN IMMEDIATE")
    try:
        response = client.post("/v1/memories", json={"content": "while locked"})
        found = client.get("/v1/memories").json()
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["type"] == "database_busy"
    assert "RECALLD_LOCK_RETRY_SECONDS" in error["message"]
    assert "nothing was written" in error["message"]
    assert str(db_path) not in error["message"]
    assert [memory["content"] for memory in found["memories"]] == ["before"]
