"""A recalld process killed (SIGKILL, a crash, an OOM kill) in the middle of a long
statement: the server ends that statement's transaction soon after, instead of running it
to its end with no one to answer, holding its locks (adversarial pass c69).

Without ``client_connection_check_interval`` PostgreSQL only notices a client is gone when
it next reads from or writes to its socket: a process killed while its migration rebuilt a
column, or while its worker backfilled the jobs of 300,000 memories, left a backend running
for minutes with the migration lock (or the table's) held, and the process started again
in its place waited for it without a word.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store import postgres_connection
from recalld.store.postgres import MIGRATION_LOCK

pytestmark = pytest.mark.postgres

REPOSITORY = Path(__file__).resolve().parent.parent.parent
WAIT_SECONDS = 60.0
# The statement the child is killed in runs far longer than the test waits.
SLEEP_SECONDS = 600

CHILD = """
import sys
from recalld.config import Settings
from recalld.store.postgres import MIGRATION_LOCK, PostgresStore

store = PostgresStore.open(Settings(db=sys.argv[1], embedder="none", graph_extractor="none"))


def step(connection):
    connection.execute("SET LOCAL statement_timeout = 0")
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    connection.execute("SELECT pg_sleep(%s)", (int(sys.argv[2]),))


store.write(step)
"""


def _held_by_another(url: str) -> int | None:
    """The process id of the backend holding the migration lock, if any."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
            " WHERE l.locktype = 'advisory' AND l.granted"
            " AND ((l.classid::bigint << 32) | l.objid::bigint) = %s"
            " AND a.query LIKE %s",
            (MIGRATION_LOCK, "%pg_sleep%"),
        ).fetchone()
    return None if row is None else int(row[0])


def test_postgres_a_killed_process_does_not_leave_its_statement_running_with_its_locks(
    postgres_url: str,
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, postgres_url, str(SLEEP_SECONDS)],
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while (backend := _held_by_another(postgres_url)) is None:
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the child never took the lock"
            time.sleep(0.05)  # bounded polling of another process's state, not sync
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(WAIT_SECONDS)
        if child.stderr is not None:
            child.stderr.close()
    killed_at = time.monotonic()
    # Another process now takes the lock within seconds, as a migration started again does.
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("SET lock_timeout = '20s'")
        connection.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        assert time.monotonic() - killed_at < 20
        gone = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (backend,)
        ).fetchone()
        assert gone == (0,)


def _open(url: str) -> MemoryService:
    return MemoryService.open(Settings(db=url, embedder="none", graph_extractor="none"))


def _check_interval(service: MemoryService) -> object:
    return service.store._database.read("SHOW client_connection_check_interval")  # type: ignore[attr-defined]


def test_postgres_a_client_check_interval_the_url_or_database_sets_is_kept_even_0(
    postgres_url: str,
) -> None:
    # Review of pass c69: one set to 0 (off, on purpose) was replaced by 2 s.
    separator = "&" if "?" in postgres_url else "?"
    with _open(f"{postgres_url}{separator}options=-c%20client_connection_check_interval%3D0") as s:
        assert _check_interval(s) == [("0",)]
    with _open(f"{postgres_url}{separator}options=-c%20client_connection_check_interval%3D7s") as s:
        assert _check_interval(s) == [("7s",)]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        [(database,)] = connection.execute("SELECT current_database()").fetchall()
        connection.execute(f'ALTER DATABASE "{database}" SET client_connection_check_interval = 0')
    with _open(postgres_url) as service:
        assert _check_interval(service) == [("0",)]
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(f'ALTER DATABASE "{database}" RESET client_connection_check_interval')
    with _open(postgres_url) as service:  # none set: recalld's
        assert _check_interval(service) == [("2s",)]


def test_postgres_a_server_refusing_the_client_check_still_opens_and_says_so_once(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Review of pass c69: a server that refuses the setting (one without the kernel events
    # it needs, as on Windows) failed every connection, so recalld could not open at all.
    # An out-of-range value is refused the same way (invalid_parameter_value).
    monkeypatch.setattr(postgres_connection, "CLIENT_CHECK_MILLISECONDS", -1)
    with caplog.at_level(logging.WARNING), _open(postgres_url) as service:
        service.remember("the ferry leaves at nine")
        assert [hit.memory.content for hit in service.search("ferry", mode="keyword")] == [
            "the ferry leaves at nine"
        ]
        assert _check_interval(service) == [("0",)]
    refused = [r.getMessage() for r in caplog.records if "client_connection_check" in r.message]
    assert len(refused) == 1, refused
    assert "refuses client_connection_check_interval" in refused[0]
