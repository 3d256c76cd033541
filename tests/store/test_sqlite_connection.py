"""Opening the file while another process holds it: the lock wait is retried, not raised."""

from __future__ import annotations

import time
from pathlib import Path

import apsw
import pytest

from recalld.store.sqlite_connection import SQLiteDatabase


def test_sqlite_opening_a_file_another_connection_holds_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "held.db"
    holder = apsw.Connection(str(path))  # rollback journal: switching to WAL needs the file alone
    holder.execute("BEGIN EXCLUSIVE; CREATE TABLE t(x)")
    waits: list[float] = []

    def release_on_first_wait(seconds: float) -> None:
        # The retry loop's backoff: the holder commits while the opener waits.
        waits.append(seconds)
        if holder.in_transaction:
            holder.execute("COMMIT")

    monkeypatch.setattr(time, "sleep", release_on_first_wait)  # the module sleeps through time
    database = SQLiteDatabase(path, busy_timeout_ms=10, lock_retry_seconds=5)
    assert database.read("SELECT count(*) FROM t") == [(0,)]
    assert waits, "the first open met the lock and was retried"
    assert database.read("PRAGMA journal_mode") == [("wal",)]
    database.close()
    holder.close()
