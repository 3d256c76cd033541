"""A PostgreSQL database a newer recalld migrated is refused, naming both versions, and
left as it was: when this process reads the versions first, and when a newer process
migrates it between that read and this one's migration lock (a rolling upgrade of
several servers) (adversarial pass b66)."""

from __future__ import annotations

import secrets

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.store import postgres as postgres_store
from recalld.store.postgres import PostgresStore
from recalld.store.postgres_migrations import MIGRATIONS
from tests.postgres_server import LocalPostgres

pytestmark = pytest.mark.postgres

KNOWN = len(MIGRATIONS)


def _settings(url: str) -> Settings:
    return Settings(db=url, embedder="none", graph_extractor="none", postgres_pool_min=0)


def _migrated_by_a_newer_recalld(url: str) -> list[tuple[int]]:
    """A database of this version that a recalld knowing one more migration then opened;
    returns the versions it records."""
    PostgresStore.open(_settings(url)).close()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO schema_migrations(version, applied_at) VALUES (%s, now())", (KNOWN + 1,)
        )
        return _versions(connection)


def _versions(connection: psycopg.Connection[tuple[int]]) -> list[tuple[int]]:
    return connection.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()


def test_a_database_a_newer_recalld_migrated_is_refused_naming_both_versions(
    postgres_server: LocalPostgres,
) -> None:
    url = postgres_server.create_database(f"newer_{secrets.token_hex(4)}")
    versions = _migrated_by_a_newer_recalld(url)
    with pytest.raises(StorageError, match=f"schema {KNOWN + 1}; this one knows up to {KNOWN}"):
        PostgresStore.open(_settings(url))
    with psycopg.connect(url) as connection:
        assert _versions(connection) == versions


def test_a_newer_recalld_migrating_after_the_first_read_is_refused(
    postgres_server: LocalPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_server.create_database(f"raced_{secrets.token_hex(4)}")
    versions = _migrated_by_a_newer_recalld(url)

    # What this process read before a newer one migrated the database: the last migration
    # it knows still pending (so it goes on to take the lock) and none newer.
    def read_before_the_newer_one(store: PostgresStore) -> set[int]:
        return set(range(1, KNOWN))

    monkeypatch.setattr(PostgresStore, "_applied_migrations", read_before_the_newer_one)
    with pytest.raises(StorageError, match=f"schema {KNOWN + 1}; this one knows up to {KNOWN}"):
        PostgresStore.open(_settings(url))
    with psycopg.connect(url) as connection:
        assert _versions(connection) == versions


def test_an_up_to_date_database_opens_without_a_migration_transaction(
    postgres_server: LocalPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_server.create_database(f"current_{secrets.token_hex(4)}")
    PostgresStore.open(_settings(url)).close()

    def no_transaction(*arguments: object) -> None:
        raise AssertionError("a migration transaction on an up-to-date database")

    # Each migration's transaction checks the versions again under the lock: none runs.
    monkeypatch.setattr(postgres_store, "refuse_newer_schema", no_transaction)
    store = PostgresStore.open(_settings(url))
    try:
        assert store.schema_version == KNOWN
        assert not store.created
    finally:
        store.close()
