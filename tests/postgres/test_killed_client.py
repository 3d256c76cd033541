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

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

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
