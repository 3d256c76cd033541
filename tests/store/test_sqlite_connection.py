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


def test_sqlite_a_commit_waits_no_busy_timeout_for_its_statistics_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Adversarial pass a64: after 5,000 changed rows a commit refreshes the planner's
    # statistics (PRAGMA optimize, which wants the write lock for a table never analysed),
    # and waited busy_timeout for it (5 s by default) when another process took the lock
    # right after the commit: the write, already acknowledged, was held that long. It now
    # leaves the refresh to a later commit. Ten minutes of busy_timeout here.
    path = tmp_path / "refresh.db"
    database = SQLiteDatabase(path, busy_timeout_ms=600_000, lock_retry_seconds=600)
    # An empty indexed table, never analysed: PRAGMA optimize wants the write lock for it.
    database.write(
        lambda connection: connection.execute(
            "CREATE TABLE t(x); CREATE INDEX t_x ON t(x);"
            " CREATE TABLE empty(x); CREATE INDEX empty_x ON empty(x)"
        )
    )
    other = apsw.Connection(str(path))  # another process, writing as soon as the lock is free
    noted = database.note_written

    def commit_then_another_writes() -> None:  # after_commit's first step
        noted()
        if other.get_autocommit():
            other.execute("BEGIN IMMEDIATE")

    monkeypatch.setattr(database, "note_written", commit_then_another_writes)
    committed = threading.Event()

    def write() -> None:
        database.write(
            lambda connection: connection.execute(
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 6000)"
                " INSERT INTO t SELECT x FROM n"
            )
        )
        committed.set()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        assert committed.wait(timeout=120), "the commit waited for another process's lock"
    finally:
        if not other.get_autocommit():
            other.execute("ROLLBACK")
        writer.join()
    assert database.read("SELECT count(*) FROM t") == [(6000,)]
    database.close()
    other.close()
