"""A database recalld may not write to is one clear error naming what to change, not the
driver's class name and the statement it choked on (adversarial pass d62)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from urllib.parse import quote

import psycopg
import pytest

from recalld.config import Settings
from recalld.errors import DatabaseReadOnlyError, DiskFullError, StorageError
from recalld.service import MemoryService
from recalld.store.postgres_scrub import MAY_NOT_VACUUM, MAY_NOT_VACUUM_17, VACUUM_TABLES
from tests.postgres_server import LocalPostgres

pytestmark = pytest.mark.postgres


def _settings(url: str) -> Settings:
    return Settings(db=url, embedder="none", graph_extractor="none", postgres_pool_min=0)


def test_a_read_only_database_is_named_as_such(
    postgres_server: LocalPostgres, postgres_database: Callable[[], str]
) -> None:
    url = postgres_database()
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    with pytest.raises(StorageError) as caught:
        MemoryService.open(_settings(url))
    message = str(caught.value)
    assert (
        f"the database at postgresql://recalld:***@127.0.0.1:{postgres_server.port}/{name}"
        in message
    )
    assert "is read-only (cannot execute" in message
    assert "default_transaction_read_only off" in message
    assert "ReadOnlySqlTransaction" not in message
    assert postgres_server.password not in message
    # Its own class, which the worker holds its results through (adversarial pass d65).
    assert isinstance(caught.value, DatabaseReadOnlyError)


def test_a_role_that_may_not_create_tables_is_named_with_the_grant(
    postgres_server: LocalPostgres,
) -> None:
    suffix = secrets.token_hex(4)
    role, database, password = f"plain_{suffix}", f"fresh_{suffix}", secrets.token_hex(8)
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        connection.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(postgres_server.url(database), autocommit=True) as connection:
        # What a DBA gives an application role: the extension, no CREATE in public (the
        # default since PostgreSQL 15, revoked here for older servers too).
        connection.execute("CREATE EXTENSION vector")
        connection.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    url = f"postgresql://{role}:{quote(password)}@127.0.0.1:{postgres_server.port}/{database}"
    with pytest.raises(StorageError) as caught:
        MemoryService.open(_settings(url))
    message = str(caught.value)
    assert f"the role {role} may not do what recalld needs in" in message
    assert "(permission denied for schema public)" in message
    assert f"GRANT USAGE, CREATE ON SCHEMA <schema> TO {role}" in message
    assert "InsufficientPrivilege" not in message
    assert "LINE 1" not in message
    assert password not in message
    with psycopg.connect(postgres_server.url(database)) as connection:
        created = connection.execute("SELECT to_regclass('schema_migrations')").fetchone()
    assert created == (None,)


def test_a_vector_extension_outside_the_search_path_is_named_at_once(
    postgres_server: LocalPostgres,
) -> None:
    database = f"hidden_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
        connection.execute(f"ALTER DATABASE {database} SET search_path = app")
    with psycopg.connect(postgres_server.url(database), autocommit=True) as connection:
        # A DBA's layout: extensions in one schema, the application's tables in another.
        connection.execute("CREATE SCHEMA app")
        connection.execute("CREATE SCHEMA extensions")
        connection.execute("CREATE EXTENSION vector SCHEMA extensions")
    url = postgres_server.url(database)
    settings = Settings(
        db=url, embedder="none", graph_extractor="none", postgres_connect_timeout_seconds=2
    )
    # Not DatabaseUnavailableError ("cannot connect … within 2 s"): the server is there.
    with pytest.raises(StorageError) as caught:
        MemoryService.open(settings)
    message = str(caught.value)
    assert "installed in schema 'extensions'" in message
    assert "search_path recalld's connections get ('app')" in message
    assert "cannot connect" not in message
    fixed = f"{url}?options=-csearch_path%3Dapp,extensions"
    with MemoryService.open(_settings(fixed)) as service:
        service.remember("the tables live in app")
        assert [hit.memory.content for hit in service.search("tables")] == [
            "the tables live in app"
        ]


def _application_role(postgres_server: LocalPostgres, url: str) -> str:
    """A role with the tables' data privileges and no more (a DBA's least privilege: the
    owner migrates, the application reads and writes); the URL recalld opens with it."""
    role, password = f"app_{secrets.token_hex(4)}", secrets.token_hex(8)
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        connection.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
        )
        connection.execute(
            f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}"
        )
    database = url.rsplit("/", 1)[1]
    return f"postgresql://{role}:{password}@127.0.0.1:{postgres_server.port}/{database}"


def test_a_role_with_data_privileges_only_opens_and_never_claims_a_scrub(
    postgres_server: LocalPostgres, postgres_url: str
) -> None:
    url = _application_role(postgres_server, postgres_url)
    # It opened a migrated database only with CREATE on the schema (each open re-ran
    # CREATE TABLE IF NOT EXISTS schema_migrations).
    with MemoryService.open(_settings(url)) as service:
        receipt = service.remember("a secret to forget")
        forgotten = service.forget(receipt.id)
        # PostgreSQL skips the tables it may not vacuum with a warning and VACUUM
        # succeeds: the scrub was reported done while the row stayed in the dead rows.
        assert forgotten.scrub == "pending"
        assert service.stats().pending_scrubs == 1
    with psycopg.connect(postgres_url) as connection:
        vacuumed = connection.execute(
            "SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'memories'"
        ).fetchone()
    assert vacuumed == (None,)


def test_the_database_owner_scrubs_tables_another_role_owns(
    postgres_server: LocalPostgres, postgres_url: str
) -> None:
    # PostgreSQL lets a database's owner VACUUM every table of it (the VACUUM page's
    # Notes, on 17+ too, beside MAINTAIN): its scrubs are done, not left pending for good
    # (review of pass d62).
    url = _application_role(postgres_server, postgres_url)
    role = url.split("//", 1)[1].split(":", 1)[0]
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{database}" OWNER TO {role}')
    with MemoryService.open(_settings(url)) as service:
        receipt = service.remember("a secret to forget")
        assert service.forget(receipt.id).scrub == "done"
        assert service.stats().pending_scrubs == 0
    with psycopg.connect(postgres_url) as connection:
        vacuumed = connection.execute(
            "SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'memories'"
        ).fetchone()
    assert vacuumed == (True,)


@pytest.mark.parametrize("query", [MAY_NOT_VACUUM, MAY_NOT_VACUUM_17])
def test_both_vacuum_permission_checks_name_the_tables_a_role_may_not_vacuum(
    postgres_server: LocalPostgres, postgres_url: str, query: str
) -> None:
    # The server here is 17+: the check for older servers (ownership) is run on it too,
    # its answers being the same for these roles (review of pass d62).
    with MemoryService.open(_settings(postgres_url)):
        pass
    application = _application_role(postgres_server, postgres_url)
    tables = {"tables": list(VACUUM_TABLES)}

    def refused(url: str) -> set[str]:
        with psycopg.connect(url) as connection:
            return {str(row[0]) for row in connection.execute(query, tables).fetchall()}

    assert refused(postgres_url) == set()  # the tables' owner
    assert refused(application) == set(VACUUM_TABLES)
    role = application.split("//", 1)[1].split(":", 1)[0]
    database = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{database}" OWNER TO {role}')
    assert refused(application) == set()  # the database's owner


def test_a_full_disk_that_stops_creating_the_vector_extension_says_so(
    postgres_server: LocalPostgres,
) -> None:
    # The extension's script failed with "could not extend file … No space left on
    # device", and recalld said the extension was not installed: install pgvector
    # (adversarial pass b64, found on a full tmpfs).
    database = f"full_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {database}")
    with psycopg.connect(postgres_server.url(database), autocommit=True) as connection:
        connection.execute(
            "CREATE FUNCTION disk_is_full() RETURNS event_trigger LANGUAGE plpgsql AS $$"
            " BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'"
            " USING ERRCODE = '53100'; END $$"
        )
        connection.execute(
            "CREATE EVENT TRIGGER disk_is_full ON ddl_command_start"
            " WHEN TAG IN ('CREATE EXTENSION') EXECUTE FUNCTION disk_is_full()"
        )
    with pytest.raises(DiskFullError) as caught:
        MemoryService.open(_settings(postgres_server.url(database)))
    message = str(caught.value)
    assert "could not create the 'vector' extension" in message, message
    assert "No space left on device" in message
    assert "install pgvector" not in message
    assert postgres_server.password not in message
