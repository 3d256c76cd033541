"""A recalld process that finds another one migrating the database says that it waits
for it, and for whom, instead of hanging without a word (adversarial pass c69: three
`recalld serve` started at once on a database of schema 30 and 400,000 memories, two of
them printed nothing and answered nothing for the two minutes the first one migrated).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import psycopg
import pytest

from recalld.store.postgres import MIGRATION_LOCK
from recalld.store.postgres_migrations import MIGRATIONS

pytestmark = pytest.mark.postgres

REPOSITORY = Path(__file__).resolve().parent.parent.parent
WAIT_SECONDS = 60.0


def _read_until(stream: IO[bytes], text: str) -> str:
    """What the child wrote to ``stream`` (its stderr) up to a line holding ``text``, read
    by a thread so that a child saying nothing fails the test after WAIT_SECONDS."""
    lines: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    seen = ""
    while text not in seen:
        try:
            seen += lines.get(timeout=WAIT_SECONDS).decode()
        except queue.Empty:
            raise AssertionError(f"not said in {WAIT_SECONDS:g} s: {seen!r}") from None
    return seen


def test_postgres_a_process_waiting_for_another_ones_migration_says_so(
    postgres_url: str,
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        # The last migration pending again (it finds nothing to do: it trims what an older
        # version stored), and held by "another process", this connection.
        connection.execute("DELETE FROM schema_migrations WHERE version = %s", (len(MIGRATIONS),))
        [(holder,)] = connection.execute("SELECT pg_backend_pid()").fetchall()
        connection.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        environment = {
            **os.environ,
            "RECALLD_DB": postgres_url,
            "RECALLD_EMBEDDER": "none",
            "RECALLD_GRAPH_EXTRACTOR": "none",
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "recalld", "stats", "--json"],
            cwd=REPOSITORY,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert child.stderr is not None
            said = _read_until(child.stderr, "waiting")
            assert "another process is migrating" in said
            assert f"PostgreSQL backend {holder}" in said
            assert child.poll() is None  # it waits, as it says
            connection.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
            out, _ = child.communicate(timeout=WAIT_SECONDS)
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert child.returncode == 0
    assert json.loads(out)["schema_version"] == len(MIGRATIONS)
