"""Opening the file while another process holds it: the lock wait is retried, not raised."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw
import pytest

from recalld.errors import StorageError
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


def test_sqlite_close_waits_for_a_statement_running_in_another_thread(tmp_path: Path) -> None:
    # A thread that outlived its stop's timeout (a worker, the scrubber, a request) may
    # still be inside a statement when the store closes; closing its connection under it
    # raised apsw.ThreadingViolationError out of close().
    database = SQLiteDatabase(tmp_path / "busy.db")
    database.write(lambda connection: connection.execute("CREATE TABLE t(x)"))
    inside, closing = threading.Event(), threading.Event()
    answers: list[object] = []

    def slow_statement(connection: apsw.Connection) -> list[tuple[object, ...]]:
        # Blocks inside SQLite (a SQL function) until close() has begun.
        def hold(*_: object) -> int:
            inside.set()
            return int(closing.wait(timeout=10))

        connection.create_scalar_function("hold", hold, 0)
        return connection.execute("SELECT hold()").fetchall()

    def reader() -> None:
        answers.append(database.run(slow_statement))

    thread = threading.Thread(target=reader)
    thread.start()
    assert inside.wait(timeout=10)
    original = database._wait_for_statements

    def signalling(timeout: float) -> bool:
        closing.set()  # the statement may finish only once close() is under way
        return original(timeout)

    database._wait_for_statements = signalling  # type: ignore[method-assign]
    database.close()
    thread.join(timeout=10)
    assert answers == [[(1,)]], "the running statement finished with its answer"
    with pytest.raises(StorageError, match="closed"):
        database.read("SELECT 1")
