"""The PostgreSQL connection layer: a deadlock or serialization failure is run again, never
"database_unavailable"; one that cannot be run again, or kept coming back, is
"database_busy" saying nothing was written."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from recalld.errors import (
    DatabaseBusyError,
    DatabaseUnavailableError,
    DiskFullError,
    StatementTimeoutError,
)
from recalld.store.postgres_connection import Connection, PostgresDatabase

pytestmark = pytest.mark.postgres

# What the server says when it picks this transaction as a deadlock's victim (40P01), or
# cannot serialise it (40001).
DEADLOCK = "DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '40P01'; END $$"
SERIALIZATION = "DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '40001'; END $$"
# What it says when a write finds its disk full (53100).
DISK_FULL = (
    "DO $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'"
    " USING ERRCODE = '53100'; END $$"
)


@pytest.fixture
def database(postgres_url: str) -> Iterator[PostgresDatabase]:
    opened = PostgresDatabase(postgres_url, min_size=0, max_size=2, retry_seconds=5)
    try:
        yield opened
    finally:
        opened.close()


def test_postgres_connection_write_runs_a_deadlock_victim_again(
    database: PostgresDatabase,
) -> None:
    calls: list[int] = []

    def operation(connection: Connection) -> str:
        calls.append(1)
        connection.execute("CREATE TABLE IF NOT EXISTS written(n INTEGER)")
        connection.execute("INSERT INTO written VALUES (%s)", (len(calls),))
        if len(calls) == 1:
            connection.execute(DEADLOCK)
        return "done"

    assert database.write(operation) == "done"
    assert len(calls) == 2
    # The first attempt was rolled back whole: only the second one's row is there.
    assert database.read("SELECT n FROM written") == [(2,)]


def test_postgres_connection_write_runs_a_serialization_failure_again(
    database: PostgresDatabase,
) -> None:
    calls: list[int] = []

    def operation(connection: Connection) -> int:
        calls.append(1)
        if len(calls) < 3:
            connection.execute(SERIALIZATION)
        return len(calls)

    assert database.write(operation) == 3


def test_postgres_connection_read_runs_a_serialization_failure_again(
    database: PostgresDatabase,
) -> None:
    database.write(
        lambda connection: connection.execute(
            "CREATE SEQUENCE attempts;"
            " CREATE FUNCTION flaky() RETURNS INTEGER LANGUAGE plpgsql AS $$ BEGIN"
            " IF nextval('attempts') = 1 THEN"
            " RAISE EXCEPTION 'injected' USING ERRCODE = '40001'; END IF;"
            " RETURN currval('attempts'); END $$"
        )
    )
    assert database.read("SELECT flaky()") == [(2,)]


def test_postgres_connection_write_gives_up_after_the_retry_time(postgres_url: str) -> None:
    database = PostgresDatabase(postgres_url, min_size=0, max_size=1, retry_seconds=0)
    try:
        # As a conflict that cannot be run again, and as SQLite's lock held past the same
        # setting: "database_busy", naming the setting, never a 500 (review of pass b67).
        with pytest.raises(DatabaseBusyError, match="kept conflicting") as caught:
            database.write(lambda connection: connection.execute(DEADLOCK))
    finally:
        database.close()
    assert not isinstance(caught.value, DatabaseUnavailableError | StatementTimeoutError)
    assert "RECALLD_LOCK_RETRY_SECONDS = 0" in str(caught.value)
    assert "nothing was written" in str(caught.value)


def test_postgres_connection_conflict_that_cannot_run_again_is_busy_not_unavailable(
    database: PostgresDatabase,
) -> None:
    # Rolled back, so nothing was written: "database_busy", to send again (adversarial
    # pass b67), where it was a plain StorageError (a 500, storage_error), and never
    # "database_unavailable" (the server is there).
    with (
        pytest.raises(DatabaseBusyError, match="conflicted with another") as caught,
        database.transaction() as connection,
    ):
        connection.execute(DEADLOCK)
    assert not isinstance(caught.value, DatabaseUnavailableError | StatementTimeoutError)
    assert "nothing was written" in str(caught.value)
    with (
        pytest.raises(DatabaseBusyError, match="conflicted with another") as caught,
        database.connection() as connection,
    ):
        connection.execute(SERIALIZATION)
    assert not isinstance(caught.value, DatabaseUnavailableError | StatementTimeoutError)


def test_postgres_connection_full_disk_is_a_disk_full_error_not_unavailable(
    database: PostgresDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    # An OperationalError like a server going away, so it was a DatabaseUnavailableError
    # (a 503 to retry, "the database ... is unavailable"), where SQLite says the disk is full.
    database.write(lambda connection: connection.execute("CREATE TABLE filled(n INTEGER)"))

    def operation(connection: Connection) -> None:
        connection.execute("INSERT INTO filled VALUES (1)")
        connection.execute(DISK_FULL)

    with pytest.raises(DiskFullError) as caught:
        database.write(operation)
    assert not isinstance(caught.value, DatabaseUnavailableError)
    message = str(caught.value)
    assert "the disk of the database server is full" in message, message
    assert "nothing was written" in message
    # REST and MCP clients get the message as it is: where the database is (its role,
    # host and name), and the server's file, are the log's (adversarial pass b64).
    assert "postgresql://" not in message
    assert "No space left on device" not in message
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "postgresql://" in logged
    assert "No space left on device" in logged
    assert database.read("SELECT count(*) FROM filled") == [(0,)]
    with pytest.raises(DiskFullError), database.transaction() as connection:
        connection.execute(DISK_FULL)


def test_postgres_connection_a_pool_in_use_says_so_not_that_the_server_is_away(
    postgres_url: str,
) -> None:
    # Every connection lent (slow statements, lock waits): the server is there, and the
    # operator's fix is the pool's size or what holds it (adversarial pass d62): busy,
    # not unavailable (adversarial pass b64).
    database = PostgresDatabase(postgres_url, min_size=0, max_size=2, connect_timeout=0.5)
    try:
        with (
            database.connection(),
            database.connection(),
            pytest.raises(DatabaseBusyError) as caught,
        ):
            database.read("SELECT 1")
        assert database.read("SELECT 1") == [(1,)]
    finally:
        database.close()
    message = str(caught.value)
    assert "all 2 connections of this process to postgresql://" in message, message
    assert "stayed in use for 0.5 s (RECALLD_POSTGRES_POOL_MAX = 2)" in message
    assert "is unavailable" not in message
    assert not isinstance(caught.value, StatementTimeoutError)  # no fault of the work
