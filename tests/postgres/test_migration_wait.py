"""A recalld process that finds another one migrating the database (or a worker that
finds another one queueing every memory's job) says that it waits for it, and for whom,
instead of hanging without a word (adversarial pass c69: three `recalld serve` started at
once on a database of schema 30 and 400,000 memories, two of them printed nothing and
answered nothing for the two minutes the first one migrated).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
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


class _Said(logging.Handler):
    """Sets ``event`` once a record holding ``text`` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.WARNING)
        self.text = text
        self.event = threading.Event()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if self.text in record.getMessage():
            self.event.set()


def test_postgres_a_worker_waiting_for_another_ones_backfill_says_so(postgres_url: str) -> None:
    settings = Settings(
        db=postgres_url, embedder="hashing", graph_extractor="none", postgres_pool_min=0
    )
    said = _Said("another worker is queueing")
    logger = logging.getLogger("recalld.store.postgres_connection")
    logger.addHandler(said)
    try:
        with MemoryService.open(settings) as service:
            service.remember("The ferry leaves at nine")
            assert service.embedder is not None
            model = service.embedder.name
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute(
                    "SELECT pg_advisory_lock(hashtextextended(%s, 0))", (f"backfill:embed:{model}",)
                )
                working = threading.Thread(target=service.new_worker().run_until_idle)
                working.start()
                assert said.event.wait(WAIT_SECONDS), said.messages
                assert working.is_alive()  # it waits, as it says
                other.execute(
                    "SELECT pg_advisory_unlock(hashtextextended(%s, 0))",
                    (f"backfill:embed:{model}",),
                )
                working.join(WAIT_SECONDS)
            assert not working.is_alive()
        with psycopg.connect(postgres_url, autocommit=True) as check:
            assert check.execute("SELECT count(*) FROM vectors").fetchone() == (1,)
    finally:
        logger.removeHandler(said)
