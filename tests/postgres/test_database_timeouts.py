"""Timeouts a DBA sets on the database or role recalld uses (``lock_timeout``,
``statement_timeout``, ``idle_session_timeout``) do not break its scale-out promises.

Two servers writing one key wait for each other on an advisory lock: a database
``lock_timeout`` cut that wait (503 "the database is unavailable" while it was there).
A migration may take long on a large table: a ``statement_timeout`` cut it, so the new
version could not start. The connection listening for change notifications is idle by
design: an ``idle_session_timeout`` ended it every time it elapsed.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseBusyError, StatementTimeoutError
from recalld.service import MemoryService
from recalld.store import postgres as postgres_store
from recalld.store import postgres_migrations
from recalld.store.postgres_connection import PostgresDatabase
from recalld.store.postgres_migrations import Execute

pytestmark = pytest.mark.postgres

WAIT_SECONDS = 30.0


def _database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _database_sets(url: str, setting: str, value: int) -> None:
    """``ALTER DATABASE … SET setting = value`` for the test's database, as a DBA would."""
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{_database_name(url)}" SET {setting} = {value}')


def _waiting_on_advisory_lock(watcher: psycopg.Connection[tuple[object, ...]]) -> bool:
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
    ).fetchone()
    return row is not None and int(str(row[0])) > 0


def test_a_writer_of_a_key_held_elsewhere_waits_past_the_database_lock_timeout(
    postgres_url: str,
) -> None:
    _database_sets(postgres_url, "lock_timeout", 1)
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with (
        MemoryService.open(settings) as service,
        psycopg.connect(postgres_url, autocommit=True) as other_server,
        psycopg.connect(postgres_url, autocommit=True) as watcher,
    ):
        # The other server is inside its write of the key (recalld's advisory lock key).
        other_server.execute("BEGIN")
        other_server.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            ("key:default\x1fdeploy.region",),
        )
        outcome: list[object] = []

        def write() -> None:
            try:
                outcome.append(service.remember("Melbourne", key="deploy.region"))
            except Exception as error:  # noqa: BLE001 - the test reports what the write raised
                outcome.append(error)

        writer = threading.Thread(target=write)
        writer.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not outcome and not _waiting_on_advisory_lock(watcher):
            assert time.monotonic() < deadline, "the write neither waited nor ended"
            time.sleep(0.01)  # polling another session's state (there is no event for it)
        other_server.execute("COMMIT")
        writer.join(timeout=WAIT_SECONDS)
        assert len(outcome) == 1
        written = outcome[0]
        assert not isinstance(written, Exception), written
        assert service.get(key="deploy.region").content == "Melbourne"


def test_the_change_listener_outlives_a_database_idle_session_timeout(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # idle_session_timeout (PostgreSQL 14) ends every session idle that long; the
    # listener's connection is idle between notifications by design, so it was ended,
    # logged a warning and reconnected every time (a warning a minute with 60 s).
    _database_sets(postgres_url, "idle_session_timeout", 50)
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as watching, MemoryService.open(settings) as writing:
        feed = watching.store.change_feed
        assert feed is not None
        assert feed.listening(WAIT_SECONDS)  # type: ignore[attr-defined]
        seen = feed.wait(0, 0.0)
        # Idle for six times the database's timeout: nothing changes, nothing is heard.
        assert feed.wait(seen, 0.3) == seen
        writing.core.apply("memory", [{"action": "add", "content": "Heard while idle"}])
        assert feed.wait(seen, WAIT_SECONDS) > seen
    interrupted = [
        record for record in caplog.records if "change notifications interrupted" in record.message
    ]
    assert interrupted == []


def test_a_lock_timeout_the_url_sets_is_kept(postgres_url: str) -> None:
    separator = "&" if "?" in postgres_url else "?"
    own = f"{postgres_url}{separator}options=-c%20lock_timeout%3D1234"
    settings = Settings(db=own, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        assert service.store._database.read("SHOW lock_timeout") == [("1234ms",)]  # type: ignore[attr-defined]
    # One connection: the scrub's and the reads after it are the same one.
    settings = Settings(
        db=postgres_url,
        embedder="none",
        graph_extractor="none",
        postgres_pool_min=1,
        postgres_pool_max=1,
    )
    _database_sets(postgres_url, "lock_timeout", 1)
    with MemoryService.open(settings) as service:
        # RECALLD_LOCK_RETRY_SECONDS (30) in place of the database's (adversarial pass b64).
        assert service.store._database.read("SHOW lock_timeout") == [("30s",)]  # type: ignore[attr-defined]
        # A scrub's VACUUM bounds its own lock wait, then puts the connection's back.
        service.store._scrub.vacuum(wait_seconds=0.5)  # type: ignore[attr-defined]
        assert service.store._database.read("SHOW lock_timeout") == [("30s",)]  # type: ignore[attr-defined]
        service.store._scrub.vacuum()  # type: ignore[attr-defined]
        assert service.store._database.read("SHOW lock_timeout") == [("30s",)]  # type: ignore[attr-defined]


def _server_knows(url: str, setting: str) -> bool:
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute("SELECT 1 FROM pg_settings WHERE name = %s", (setting,))
        return row.fetchone() is not None


# transaction_timeout is PostgreSQL 17's: it cuts a whole transaction, a migration's too.
@pytest.mark.parametrize("setting", ["statement_timeout", "transaction_timeout"])
def test_a_migration_runs_past_the_database_statement_timeout(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    # The last migration again, as a slow one (migration 23 rebuilds a column of every
    # memory: minutes on a large table) under a database timeout of 200 ms.
    if not _server_knows(postgres_url, setting):
        pytest.skip(f"this PostgreSQL has no {setting}")
    last = len(postgres_migrations.MIGRATIONS)

    def slow(execute: Execute) -> None:
        execute("SELECT pg_sleep(1)")

    monkeypatch.setattr(postgres_store, "MIGRATIONS", [*postgres_migrations.MIGRATIONS[:-1], slow])
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("DELETE FROM schema_migrations WHERE version = %s", (last,))
        admin.execute(f'ALTER DATABASE "{_database_name(postgres_url)}" SET {setting} = 200')
    # One connection: the migrations' and the read after them are the same one.
    settings = Settings(
        db=postgres_url,
        embedder="none",
        graph_extractor="none",
        postgres_pool_min=1,
        postgres_pool_max=1,
    )
    with MemoryService.open(settings) as service:
        assert service.stats().schema_version == last
        # Off for the migrations' transactions only (SET LOCAL): other statements keep
        # the database's.
        assert service.store._database.read(f"SHOW {setting}") == [("200ms",)]  # type: ignore[attr-defined]


def test_a_process_starting_during_another_ones_migration_waits_for_it(
    postgres_url: str,
) -> None:
    # A migration of minutes holds the migration lock; a process starting meanwhile
    # (another server, a worker) waits for it under the database's timeouts.
    _database_sets(postgres_url, "lock_timeout", 1)
    _database_sets(postgres_url, "statement_timeout", 100)
    # Nor by recalld's own bound on other clients' locks (adversarial pass b64).
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="none", lock_retry_seconds=0.1
    )
    with (
        psycopg.connect(postgres_url, autocommit=True) as migrating,
        psycopg.connect(postgres_url, autocommit=True) as watcher,
    ):
        migrating.execute("BEGIN")
        migrating.execute("SET LOCAL statement_timeout = 0")
        migrating.execute("SELECT pg_advisory_xact_lock(%s)", (postgres_store.MIGRATION_LOCK,))
        outcome: list[object] = []

        def start() -> None:
            try:
                with MemoryService.open(settings) as service:
                    outcome.append(service.stats().schema_version)
            except Exception as error:  # noqa: BLE001 - the test reports what the open raised
                outcome.append(error)

        starting = threading.Thread(target=start)
        starting.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not outcome and not _waiting_on_advisory_lock(watcher):
            assert time.monotonic() < deadline, "the open neither waited nor ended"
            time.sleep(0.01)  # polling another session's state (there is no event for it)
        # Waiting past both of the database's timeouts is what is under test.
        time.sleep(0.3)
        migrating.execute("COMMIT")
        starting.join(timeout=WAIT_SECONDS)
    assert outcome == [len(postgres_migrations.MIGRATIONS)]


def test_pooled_connections_outlive_a_database_idle_session_timeout(postgres_url: str) -> None:
    # The database ends each session idle past its idle_session_timeout: the pool's idle
    # connections all died at once after a burst, and each one lent was found broken, its
    # replacement queued behind the other dead ones and dead in turn before its turn came.
    # The server then answered every request 503 after the connect timeout, for good.
    _database_sets(postgres_url, "idle_session_timeout", 100)
    database = PostgresDatabase(postgres_url, max_size=10, connect_timeout=3)
    try:
        burst = [
            threading.Thread(target=database.read, args=("SELECT pg_sleep(0.1)",))
            for _ in range(12)
        ]
        for thread in burst:
            thread.start()
        for thread in burst:
            thread.join()
        time.sleep(0.5)  # idle five times the database's timeout: the condition under test
        assert database.read("SELECT 1") == [(1,)]
    finally:
        database.close()


@pytest.mark.parametrize(
    "options",
    [
        # Sets deadlock_timeout, not lock_timeout (a substring test took it for one).
        "-c%20deadlock_timeout%3D2s",
        # PostgreSQL reads dashes as underscores: this one does set lock_timeout.
        "--lock-timeout%3D1234",
    ],
)
def test_whether_the_url_sets_lock_timeout_is_asked_of_the_server(
    postgres_url: str, options: str
) -> None:
    _database_sets(postgres_url, "lock_timeout", 1)
    separator = "&" if "?" in postgres_url else "?"
    database = PostgresDatabase(f"{postgres_url}{separator}options={options}", max_size=1)
    try:
        own = "1234ms" if "lock-timeout" in options else "30s"
        assert database.read("SHOW lock_timeout") == [(own,)]
    finally:
        database.close()


def test_a_lock_timeout_pgoptions_sets_is_kept(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # libpq sends PGOPTIONS as the connection's options when the URL sets none.
    _database_sets(postgres_url, "lock_timeout", 1)
    monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=1234")
    database = PostgresDatabase(postgres_url, max_size=1)
    try:
        assert database.read("SHOW lock_timeout") == [("1234ms",)]
    finally:
        database.close()


@pytest.mark.parametrize("setting", ["statement_timeout", "transaction_timeout"])
def test_a_statement_the_database_cuts_is_database_busy(postgres_url: str, setting: str) -> None:
    # Both cut a slow request the same way: 503 database_busy with Retry-After
    # (transaction_timeout's error is of another class, and was a StorageError: 503
    # storage_error, "could not serve the request", with no Retry-After). Not
    # database_unavailable, "unreachable": the server answered (adversarial pass b64).
    if not _server_knows(postgres_url, setting):
        pytest.skip(f"this PostgreSQL has no {setting}")
    _database_sets(postgres_url, setting, 50)
    database = PostgresDatabase(postgres_url, max_size=1)
    try:
        with pytest.raises(DatabaseBusyError, match="timeout") as caught:
            database.write(lambda connection: connection.execute("SELECT pg_sleep(1)"))
        assert "raise them" in str(caught.value)
        # Perhaps the work's own size: the worker counts the attempt (review of pass b64).
        assert isinstance(caught.value, StatementTimeoutError)
        assert database.read("SELECT 1") == [(1,)]
    finally:
        database.close()


def _waiting_on_a_table_lock(watcher: psycopg.Connection[tuple[object, ...]]) -> bool:
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock' AND wait_event = 'relation'"
    ).fetchone()
    return row is not None and int(str(row[0])) > 0


@pytest.mark.parametrize("setting", ["statement_timeout", "transaction_timeout"])
def test_a_scrubs_vacuum_runs_past_the_database_statement_timeout(
    postgres_url: str, setting: str
) -> None:
    # VACUUM (FULL) of a large memories table takes long; cut by the database's timeout,
    # the scrub never finished and what was forgotten stayed in the dead rows. Here it
    # waits for a table lock (the same clock) for longer than the timeout.
    if not _server_knows(postgres_url, setting):
        pytest.skip(f"this PostgreSQL has no {setting}")
    _database_sets(postgres_url, setting, 100)
    # One connection: the VACUUM's and the read after it are the same one.
    settings = Settings(
        db=postgres_url,
        embedder="none",
        graph_extractor="none",
        postgres_pool_min=1,
        postgres_pool_max=1,
    )
    with (
        MemoryService.open(settings) as service,
        psycopg.connect(postgres_url, autocommit=True) as holder,
        psycopg.connect(postgres_url, autocommit=True) as watcher,
    ):
        holder.execute(f"SET {setting} = 0")
        holder.execute("BEGIN")
        holder.execute("LOCK TABLE memories IN SHARE UPDATE EXCLUSIVE MODE")
        outcome: list[object] = []

        def vacuum() -> None:
            try:
                outcome.append(service.store._scrub.vacuum())  # type: ignore[attr-defined]
            except Exception as error:  # noqa: BLE001 - the test reports what the VACUUM raised
                outcome.append(error)

        vacuuming = threading.Thread(target=vacuum)
        vacuuming.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not outcome and not _waiting_on_a_table_lock(watcher):
            assert time.monotonic() < deadline, "the VACUUM neither waited nor ended"
            time.sleep(0.01)  # polling another session's state (there is no event for it)
        time.sleep(0.3)  # past the database's timeout: the condition under test
        holder.execute("COMMIT")
        vacuuming.join(timeout=WAIT_SECONDS)
        assert outcome == [True]
        # The pooled connection keeps the database's for every other statement.
        assert service.store._database.read(f"SHOW {setting}") == [("100ms",)]  # type: ignore[attr-defined]
