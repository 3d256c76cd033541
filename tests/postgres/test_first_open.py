"""Opening a database recalld may not have set up: several processes at once (one of them
created recalld's schema, and only that one says so), and a search path that would start
an empty store in front of the memories (refused) (adversarial pass d62)."""

from __future__ import annotations

import secrets
import threading
import time

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
from recalld.store import postgres as postgres_store
from recalld.store.postgres import PostgresStore
from tests.postgres_server import LocalPostgres

pytestmark = pytest.mark.postgres

WAIT_SECONDS = 30.0
OPENERS = 3


def _settings(url: str) -> Settings:
    return Settings(db=url, embedder="none", graph_extractor="none", postgres_pool_min=0)


def _waiting_on_the_migration_lock(watcher: psycopg.Connection[tuple[object, ...]]) -> int:
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock' AND wait_event = 'advisory'"
    ).fetchone()
    return 0 if row is None else int(str(row[0]))


def test_only_the_process_that_created_the_schema_says_it_did(
    postgres_server: LocalPostgres,
) -> None:
    url = postgres_server.create_database(f"first_{secrets.token_hex(4)}")
    settings = Settings(db=url, embedder="none", graph_extractor="none", postgres_pool_min=0)
    created: list[bool] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def open_once() -> None:
        try:
            store = PostgresStore.open(settings)
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            with lock:
                failures.append(error)
            return
        try:
            with lock:
                created.append(store.created)
        finally:
            store.close()

    with (
        psycopg.connect(url, autocommit=True) as holder,
        psycopg.connect(url, autocommit=True) as watcher,
    ):
        # Every opener finds no schema, then waits for the migration lock: the race of
        # several servers started together on a new database, made certain.
        holder.execute("SELECT pg_advisory_lock(%s)", (postgres_store.MIGRATION_LOCK,))
        openers = [threading.Thread(target=open_once) for _ in range(OPENERS)]
        for opener in openers:
            opener.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while _waiting_on_the_migration_lock(watcher) < OPENERS and not failures:
            assert time.monotonic() < deadline, "the openers never waited for the lock"
            time.sleep(0.01)  # polling another session's state (there is no event for it)
        holder.execute("SELECT pg_advisory_unlock(%s)", (postgres_store.MIGRATION_LOCK,))
        for opener in openers:
            opener.join(timeout=WAIT_SECONDS)
    assert failures == []
    assert sorted(created) == [False] * (OPENERS - 1) + [True]


def test_opening_a_database_recalld_already_set_up_creates_nothing(postgres_url: str) -> None:
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="none", postgres_pool_min=0
    )
    store = PostgresStore.open(settings)
    try:
        assert store.created is False
    finally:
        store.close()


def test_a_schema_put_in_front_of_the_store_does_not_start_an_empty_one(
    postgres_server: LocalPostgres, postgres_url: str
) -> None:
    with MemoryService.open(_settings(postgres_url)) as service:
        kept = service.remember("an important memory")
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("CREATE SCHEMA app")
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{name}" SET search_path = app, public')
    with pytest.raises(StorageError) as caught:
        MemoryService.open(_settings(postgres_url))
    message = str(caught.value)
    assert "are in schema 'public', which the search_path ('app, public') puts after" in message
    assert "CREATE TABLE app.schema_migrations" in message
    with psycopg.connect(postgres_url) as connection:
        tables = connection.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'app'"
        ).fetchone()
    assert tables == (0,)  # nothing was created in front of the store
    with MemoryService.open(
        _settings(f"{postgres_url}?options=-csearch_path%3Dpublic,app")
    ) as service:
        assert service.get(kept.id).content == "an important memory"
    # A new store in front of it, asked for as the message says.
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            "CREATE TABLE app.schema_migrations"
            " (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)"
        )
    with MemoryService.open(_settings(postgres_url)) as service:
        assert service.stats().count == 0
        assert service.store.created is True


def test_another_tools_schema_migrations_behind_a_new_store_is_not_taken_for_recalld(
    postgres_server: LocalPostgres,
) -> None:
    # Rails names its ledger schema_migrations too (version text, no applied_at): the
    # application's tables in public, recalld's store new in its own schema in front
    # (review of pass d62).
    database = f"shared_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
        connection.execute(f"ALTER DATABASE {database} SET search_path = recalld, public")
    with psycopg.connect(postgres_server.url(database), autocommit=True) as connection:
        connection.execute("CREATE EXTENSION vector")
        connection.execute("CREATE SCHEMA recalld")
        connection.execute("CREATE TABLE public.schema_migrations (version VARCHAR PRIMARY KEY)")
        connection.execute("INSERT INTO public.schema_migrations VALUES ('20240101000000')")
    with MemoryService.open(_settings(postgres_server.url(database))) as service:
        assert service.store.created is True
        service.remember("kept in the recalld schema")
    with psycopg.connect(postgres_server.url(database)) as connection:
        where = connection.execute(
            "SELECT schemaname FROM pg_tables WHERE tablename = 'memories'"
        ).fetchall()
        rails = connection.execute("SELECT version FROM public.schema_migrations").fetchall()
    assert where == [("recalld",)]
    assert rails == [("20240101000000",)]
