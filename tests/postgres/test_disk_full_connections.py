"""A server whose full disk refuses new connections says ``disk_full``, not "unavailable"
(adversarial pass d65).

The pool only learnt it could not get a connection: a request answered 503
``database_unavailable`` ("retry shortly"), the worker waited it out as a server away,
and nothing said the disk was what to free. The refusal is simulated by a login event
trigger (PostgreSQL 17+) raising what a backend that cannot write its files says."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseUnavailableError, DiskFullError
from recalld.service import MemoryService
from recalld.store.postgres_connection import PostgresDatabase
from recalld.store.postgres_refusals import disk_full_reason

pytestmark = pytest.mark.postgres

ADMIN = "recalld-test-admin"
REFUSAL = 'could not write to file "global/pg_internal.init.4242": No space left on device'


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True, application_name=ADMIN)


@contextmanager
def _disk_full_at_login(url: str) -> Iterator[None]:
    """Every new connection but the test's own is refused as on a full disk; the open
    ones of recalld's are ended, so its pool must open new ones."""
    with _admin(url) as admin:
        version = int(str(admin.execute("SHOW server_version_num").fetchone()[0]))  # type: ignore[index]
        if version < 170000:
            pytest.skip("login event triggers need PostgreSQL 17")
        admin.execute(
            "CREATE FUNCTION refuse_login() RETURNS event_trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF current_setting('application_name') <> '{ADMIN}' THEN"
            f" RAISE EXCEPTION '{REFUSAL}' USING ERRCODE = '53100'; END IF; END $$"
        )
        admin.execute("CREATE EVENT TRIGGER refuse ON login EXECUTE FUNCTION refuse_login()")
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        try:
            yield
        finally:
            admin.execute("DROP EVENT TRIGGER refuse")


def test_a_request_on_a_server_refusing_connections_for_its_disk_says_disk_full(
    postgres_url: str,
) -> None:
    settings = Settings(
        db=postgres_url,
        embedder="none",
        graph_extractor="none",
        postgres_connect_timeout_seconds=2,
    )
    with MemoryService.open(settings) as service:
        service.remember("written before the disk filled")
        with _disk_full_at_login(postgres_url), pytest.raises(DiskFullError) as caught:
            service.remember("written while it is full")
        assert "disk of the database server is full" in str(caught.value)
        assert "refuses new connections" in str(caught.value)
        # Once there is room again the same service writes, without a restart.
        assert service.remember("written after").created


def test_opening_on_a_server_refusing_connections_for_its_disk_says_disk_full(
    postgres_url: str,
) -> None:
    with _disk_full_at_login(postgres_url), pytest.raises(DiskFullError):
        PostgresDatabase(postgres_url, connect_timeout=2)


def test_a_connection_refused_for_another_reason_is_still_unavailable() -> None:
    with pytest.raises(DatabaseUnavailableError):
        PostgresDatabase("postgresql://nobody:secret@127.0.0.1:1/none", connect_timeout=1)


def test_what_reads_as_a_full_disk() -> None:
    refused = psycopg.OperationalError(
        'connection failed: connection to server at "db", port 5432 failed: FATAL:  '
        f"{REFUSAL}\nCONTEXT:  PL/pgSQL function refuse_login() line 1 at RAISE"
    )
    assert disk_full_reason(refused) == REFUSAL
    assert disk_full_reason(psycopg.OperationalError("Connection refused")) is None


def test_a_name_holding_the_words_is_no_full_disk() -> None:
    # Review of pass d65: a database or role named so (a typo'd URL) was answered
    # disk_full, "free space on that server", for a login the server refused for another
    # reason. The operating system's words end the server's message; a name is quoted.
    for refusal in (
        'database "No space left on device" does not exist',
        'password authentication failed for user "No space left on device"',
        'role "x: No space left on device" does not exist',
    ):
        refused = psycopg.OperationalError(
            f'connection failed: connection to server at "db", port 5432 failed: FATAL:  {refusal}'
        )
        assert disk_full_reason(refused) is None, refusal
    real = "could not write init file: No space left on device"
    refused = psycopg.OperationalError(
        f'connection failed: connection to server at "db", port 5432 failed: FATAL:  {real}\n'
    )
    assert disk_full_reason(refused) == real
