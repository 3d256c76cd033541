"""A ``statement_timeout`` shorter than the lock bound does not make another client's
lock look like the work's own fault (adversarial pass d65).

With the database's ``statement_timeout`` at 1.5 s and ``RECALLD_LOCK_RETRY_SECONDS`` at
30, a write waiting for a lock another client held was cut by the statement timeout: a
:class:`StatementTimeoutError`, which the worker counts as a failed attempt of its batch
(the batch's own size), where a lock wait is :class:`DatabaseBusyError` (the worker holds
its results and waits, no attempt counted)."""

from __future__ import annotations

from urllib.parse import urlsplit

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseBusyError, StatementTimeoutError
from recalld.service import MemoryService
from recalld.store.postgres_connection import PostgresDatabase

pytestmark = pytest.mark.postgres


def _database_sets(url: str, setting: str, value: int) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" SET {setting} = {value}')


def test_a_lock_wait_under_a_short_statement_timeout_is_a_lock_wait(postgres_url: str) -> None:
    _database_sets(postgres_url, "statement_timeout", 1500)
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with (
        MemoryService.open(settings) as service,
        psycopg.connect(postgres_url, autocommit=True) as other_client,
    ):
        other_client.execute("BEGIN")
        other_client.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            ("key:default\x1fdeploy.region",),
        )
        with pytest.raises(DatabaseBusyError) as caught:
            service.remember("Melbourne", key="deploy.region")
        other_client.execute("ROLLBACK")
        assert not isinstance(caught.value, StatementTimeoutError), caught.value
        assert "statement_timeout of 1.5 s" in str(caught.value)
        # Nothing was written; once the lock is gone the same write goes through.
        assert service.remember("Melbourne", key="deploy.region").created


def test_a_lock_bound_stays_under_a_short_transaction_timeout(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as probe:
        known = probe.execute(
            "SELECT 1 FROM pg_settings WHERE name = 'transaction_timeout'"
        ).fetchone()
    if known is None:
        pytest.skip("this PostgreSQL has no transaction_timeout")
    _database_sets(postgres_url, "transaction_timeout", 2000)
    database = PostgresDatabase(postgres_url, max_size=1)
    try:
        assert database.read("SHOW lock_timeout") == [("1800ms",)]
        with database.connection() as connection:
            bound = database.lock_bound(connection)
        assert bound == (1.8, 2.0, "the database's transaction_timeout")
    finally:
        database.close()


def test_a_slow_statement_is_still_a_statement_timeout(postgres_url: str) -> None:
    _database_sets(postgres_url, "statement_timeout", 50)
    database = PostgresDatabase(postgres_url, max_size=1)
    try:
        assert database.read("SHOW lock_timeout") == [("45ms",)]
        with pytest.raises(StatementTimeoutError):
            database.write(lambda connection: connection.execute("SELECT pg_sleep(1)"))
    finally:
        database.close()


def test_a_longer_statement_timeout_leaves_the_lock_bound(postgres_url: str) -> None:
    _database_sets(postgres_url, "statement_timeout", 60_000)
    database = PostgresDatabase(postgres_url, max_size=1, retry_seconds=30.0)
    try:
        assert database.read("SHOW lock_timeout") == [("30s",)]
        with database.connection() as connection:
            assert database.lock_bound(connection) is None
    finally:
        database.close()


def test_a_lock_timeout_the_url_sets_is_kept_under_a_short_statement_timeout(
    postgres_url: str,
) -> None:
    _database_sets(postgres_url, "statement_timeout", 1000)
    separator = "&" if "?" in postgres_url else "?"
    database = PostgresDatabase(
        f"{postgres_url}{separator}options=-c%20lock_timeout%3D5000", max_size=1
    )
    try:
        assert database.read("SHOW lock_timeout") == [("5s",)]
    finally:
        database.close()


def _lock_wait_message(database: PostgresDatabase, url: str) -> str:
    with psycopg.connect(url, autocommit=True) as other_client:
        other_client.execute("BEGIN")
        other_client.execute("SELECT pg_advisory_xact_lock(4242)")
        with pytest.raises(DatabaseBusyError) as caught:
            database.write(
                lambda connection: connection.execute("SELECT pg_advisory_xact_lock(4242)")
            )
        other_client.execute("ROLLBACK")
    assert not isinstance(caught.value, StatementTimeoutError), caught.value
    return str(caught.value)


def test_a_lock_wait_names_the_bound_of_its_own_connection(postgres_url: str) -> None:
    # Review of pass d65: one bound was kept for the whole pool, set by the first
    # connection that lowered it, so once the database's statement_timeout was gone (a
    # DBA's RESET, the connections opened after it waiting RECALLD_LOCK_RETRY_SECONDS)
    # a lock wait still named a statement_timeout that no longer bounded it.
    _database_sets(postgres_url, "statement_timeout", 900)
    database = PostgresDatabase(postgres_url, max_size=1, retry_seconds=0.5)
    try:
        assert database.read("SHOW lock_timeout") == [("500ms",)]  # under it already
        name = urlsplit(postgres_url).path.lstrip("/")
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" SET statement_timeout = 400')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        assert database.read("SHOW lock_timeout") == [("360ms",)]  # a new connection
        lowered = _lock_wait_message(database, postgres_url)
        assert "0.36 s, under the database's statement_timeout of 0.4 s" in lowered, lowered
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" RESET statement_timeout')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        assert database.read("SHOW lock_timeout") == [("500ms",)]
        plain = _lock_wait_message(database, postgres_url)
        assert "statement_timeout" not in plain, plain
        assert "RECALLD_LOCK_RETRY_SECONDS = 0.5" in plain, plain
    finally:
        database.close()


def test_a_lock_wait_names_a_role_s_statement_timeout_as_the_role_s(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        role = str(admin.execute("SELECT current_user").fetchone()[0])  # type: ignore[index]
        name = urlsplit(postgres_url).path.lstrip("/")
        admin.execute(f'ALTER ROLE "{role}" IN DATABASE "{name}" SET statement_timeout = 400')
    database = PostgresDatabase(postgres_url, max_size=1, retry_seconds=5.0)
    try:
        message = _lock_wait_message(database, postgres_url)
        assert "under the role's (in this database) statement_timeout of 0.4 s" in message
    finally:
        database.close()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'ALTER ROLE "{role}" IN DATABASE "{name}" RESET statement_timeout')
