"""A SQLite database a newer recalld migrated is refused, naming both versions, and left
as it was: when this process reads the versions first, and when a newer process migrates
it between that read and this one's migration lock (a rolling upgrade) (adversarial pass
b66)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from recalld.errors import StorageError
from recalld.store import sqlite as sqlite_store
from recalld.store.migrations import MIGRATIONS
from recalld.store.sqlite import SQLiteStore

KNOWN = len(MIGRATIONS)


def _migrated_by_a_newer_recalld(path: Path) -> list[int]:
    """A database of this version that a recalld knowing one more migration then opened;
    returns the versions it records."""
    SQLiteStore(path).close()
    connection = apsw.Connection(str(path))
    connection.execute(
        "INSERT INTO schema_migrations VALUES (?, '2027-01-01T00:00:00Z')", (KNOWN + 1,)
    )
    connection.execute(f"PRAGMA user_version = {KNOWN + 1}")
    connection.close()
    return _versions(path)


def _versions(path: Path) -> list[int]:
    connection = apsw.Connection(str(path))
    try:
        rows = connection.execute("SELECT version FROM schema_migrations ORDER BY 1")
        return [int(str(row[0])) for row in rows]
    finally:
        connection.close()


def test_a_database_a_newer_recalld_migrated_is_refused_naming_both_versions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "newer.db"
    versions = _migrated_by_a_newer_recalld(path)
    with pytest.raises(StorageError) as refused:
        SQLiteStore(path)
    message = str(refused.value)
    assert f"schema {KNOWN + 1}" in message
    assert f"knows up to {KNOWN}" in message
    assert "upgrade recalld" in message
    assert _versions(path) == versions


def test_a_newer_recalld_migrating_after_the_first_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "raced.db"
    versions = _migrated_by_a_newer_recalld(path)

    # What this process read before a newer one migrated the file: the last migration it
    # knows still pending (so it goes on to take the lock) and none newer.
    def read_before_the_newer_one(connection: apsw.Connection) -> set[int]:
        return set(range(1, KNOWN))

    monkeypatch.setattr(sqlite_store, "schema_versions", read_before_the_newer_one)
    with pytest.raises(StorageError, match=f"schema {KNOWN + 1}; this one knows up to {KNOWN}"):
        SQLiteStore(path)
    assert _versions(path) == versions
