"""An upgrade killed (kill -9) in the middle of a migration: the database stays at the
version before it, with nothing half-applied, and the next open finishes it once, every
memory kept (adversarial pass b66; probed by hand at random points on 20,000 memories)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.migrations import MIGRATIONS
from tests.conftest import FakeClock

REPOSITORY = Path(__file__).resolve().parent.parent.parent
KNOWN = len(MIGRATIONS)
WAIT_SECONDS = 60.0
MEMORIES = 30


def _state(path: Path) -> tuple[list[int], list[tuple[str, str]], int]:
    """The recorded versions, each memory's (kind, content) and the full-text rows."""
    connection = apsw.Connection(str(path))
    try:
        versions = [
            int(str(row[0]))
            for row in connection.execute("SELECT version FROM schema_migrations ORDER BY 1")
        ]
        memories = [
            (str(kind), str(content))
            for kind, content in connection.execute(
                "SELECT kind, content FROM memories ORDER BY seq"
            )
        ]
        # The last migration (32) drops the full-text table for the next open to rebuild.
        indexed = (
            connection.execute("SELECT count(*) FROM memories_fts").fetchone()
            if connection.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'"
            ).fetchone()
            else None
        )
        return versions, memories, 0 if indexed is None else int(str(indexed[0]))
    finally:
        connection.close()


def _killed_in_the_last_migration(path: Path, marker: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.migration_child", str(path), str(marker)],
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while not marker.exists():
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the child never reached the migration"
            time.sleep(0.02)  # bounded polling for the child's signal, not synchronisation
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(WAIT_SECONDS)
        if child.stderr is not None:
            child.stderr.close()


@pytest.mark.slow  # a child process importing recalld: 2-4 s on a loaded machine
def test_an_upgrade_killed_mid_migration_is_finished_by_the_next_open(
    db_path: Path, clock: FakeClock
) -> None:
    settings = Settings(db=db_path, embedder="none", graph_extractor="none")
    with MemoryService.open(settings, clock=clock) as opened:
        ids = [opened.remember(f"budget line {index} 北京").id for index in range(MEMORIES)]
    connection = apsw.Connection(str(db_path))  # as the version before the last kept it
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        connection.execute(f"DROP TRIGGER {trigger}")
    connection.execute("DROP TABLE memories_fts")
    connection.execute("ALTER TABLE memories DROP COLUMN fts_grams")
    connection.execute("DELETE FROM schema_migrations WHERE version = ?", (KNOWN,))
    connection.execute(f"PRAGMA user_version = {KNOWN - 1}")
    connection.close()
    before = _state(db_path)

    _killed_in_the_last_migration(db_path, db_path.parent / "migrating")

    assert (db_path.parent / "migrating").read_text() == str(KNOWN)
    assert _state(db_path) == before  # nothing of the killed migration's work is kept
    with MemoryService.open(settings, clock=clock) as opened:
        assert opened.store.schema_version == KNOWN
        assert len(opened.search("budget", limit=100)) == MEMORIES
        found = {hit.memory.id for hit in opened.search("北京", limit=100)}
        assert found == set(ids)
    versions, memories, indexed = _state(db_path)
    assert versions == list(range(1, KNOWN + 1))
    assert sorted(content for _, content in memories) == sorted(content for _, content in before[1])
    assert indexed == MEMORIES
