"""The copy lock of ``migrate --to`` against what a target's setup can do to it (review 53b):
a symlink to a SQLite target, a PostgreSQL pool of one connection, and a database whose
``statement_timeout``, ``lock_timeout`` or ``idle_session_timeout`` would end the lock's
session."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.base import Store
from recalld.store.factory import open_store

# How long a waiting copy is watched for giving up: well past the timeouts set below.
WATCH_SECONDS = 1.0
TIMEOUT_MS = 200


def _settings(db: Path | str) -> Settings:
    return Settings(db=db, embedder="hashing", graph_extractor="rules", recall_catch_up=0)


@contextmanager
def _stores(first: Path | str, second: Path | str) -> Iterator[tuple[Store, Store]]:
    one, two = open_store(_settings(first)), open_store(_settings(second))
    try:
        yield one, two
    finally:
        one.close()
        two.close()


class _Second:
    """A second copy lock taken on a thread while the test holds the first."""

    def __init__(self, store: Store) -> None:
        self.waiting = threading.Event()
        self.entered = threading.Event()
        self.failed: BaseException | None = None
        self.settled = threading.Event()  # waiting, entered or failed
        self._thread = threading.Thread(target=self._run, args=(store,), daemon=True)
        self._thread.start()

    def _wait(self) -> None:
        self.waiting.set()
        self.settled.set()

    def _run(self, store: Store) -> None:
        try:
            with store.tables.copy_lock(self._wait):
                self.entered.set()
        except BaseException as error:  # noqa: BLE001 - asserted by the test
            self.failed = error
        finally:
            self.settled.set()

    def join(self) -> None:
        self._thread.join(30)
        assert not self._thread.is_alive()


def test_a_symlink_to_a_sqlite_target_takes_the_same_copy_lock(tmp_path: Path) -> None:
    target = tmp_path / "target.db"
    MemoryService.open(_settings(target)).close()
    (tmp_path / "link.db").symlink_to(target)
    with _stores(target, tmp_path / "link.db") as (one, two):
        with one.tables.copy_lock(lambda: None):
            second = _Second(two)
            assert second.settled.wait(30)
            assert second.waiting.is_set()
            assert not second.entered.is_set()
        second.join()
        assert second.entered.is_set()
        assert second.failed is None


@pytest.mark.postgres
def test_migrate_into_postgres_with_a_pool_of_one_connection(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The lock's connection is not the pool's: with one pooled connection the copy needs it.
    source = tmp_path / "source.db"
    with MemoryService.open(_settings(source)) as memory:
        memory.remember_many([{"content": f"Anna met Bob in Paris, {i}"} for i in range(5)])
    for name, value in (
        ("RECALLD_POSTGRES_POOL_MIN", "1"),
        ("RECALLD_POSTGRES_POOL_MAX", "1"),
        ("RECALLD_POSTGRES_CONNECT_TIMEOUT_SECONDS", "3"),
        ("RECALLD_EMBEDDER", "hashing"),
    ):
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["migrate", "--from", str(source), "--to", postgres_url])
    assert result.exit_code == 0, (result.output, result.exception)
    with psycopg.connect(postgres_url) as connection:
        assert connection.execute("SELECT count(*) FROM memories").fetchone() == (5,)


@contextmanager
def _database_setting(url: str, setting: str, value: str) -> Iterator[None]:
    """``setting`` for every new session of the database at ``url``."""
    with psycopg.connect(url, autocommit=True) as admin:
        name = admin.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        admin.execute(f'ALTER DATABASE "{name}" SET {setting} = {value}')
        try:
            yield
        finally:
            admin.execute(f'ALTER DATABASE "{name}" RESET {setting}')


@pytest.mark.postgres
@pytest.mark.parametrize("setting", ["statement_timeout", "lock_timeout", "transaction_timeout"])
def test_a_waiting_copy_outlasts_the_databases_timeouts(postgres_url: str, setting: str) -> None:
    # The README: a second run "starts when that one ends", not when a timeout says so.
    with psycopg.connect(postgres_url) as connection:
        known = connection.execute("SELECT 1 FROM pg_settings WHERE name = %s", (setting,))
        if known.fetchone() is None:
            pytest.skip(f"this PostgreSQL has no {setting} (17 added transaction_timeout)")
    with (
        _database_setting(postgres_url, setting, str(TIMEOUT_MS)),
        _stores(postgres_url, postgres_url) as (one, two),
    ):
        with one.tables.copy_lock(lambda: None):
            second = _Second(two)
            assert second.waiting.wait(30)
            # Five times the timeout: still waiting, not failed.
            assert not second.entered.wait(WATCH_SECONDS)
            assert second.failed is None
        second.join()
        assert second.failed is None, repr(second.failed)
        assert second.entered.is_set()


@pytest.mark.postgres
def test_the_copy_lock_outlives_the_servers_idle_session_timeout(postgres_url: str) -> None:
    # The lock's session idles while the copy works on other connections: a server that
    # ends idle sessions would end the lock with it (and the copy's last step failed).
    with (
        _database_setting(postgres_url, "idle_session_timeout", str(TIMEOUT_MS)),
        _stores(postgres_url, postgres_url) as (one, two),
    ):
        with one.tables.copy_lock(lambda: None):
            # Elapsed time is the condition under test: the session idles past it.
            time.sleep(WATCH_SECONDS)
            second = _Second(two)
            assert second.settled.wait(30)
            assert second.waiting.is_set(), "the first copy's lock was gone"
        second.join()
        assert second.failed is None
        assert second.entered.is_set()
