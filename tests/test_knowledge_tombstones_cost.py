"""Dropping a namespace's stale tombstones reads its oldest memory once (review of pass
e66): the cleanup a memory's deletion runs tested each tombstone with a NOT EXISTS of its
own, which scanned the namespace's memories for one old enough, so forgetting an old
memory beside 10,000 tombstones and 20,000 memories held the write lock for 2 to 26 s."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store import postgres as postgres_store
from recalld.store import sqlite as sqlite_store
from recalld.store.postgres_graph_writes import drop_stale_tombstones as drop_on_postgres
from recalld.store.sqlite_graph_tombstones import drop_stale_tombstones as drop_on_sqlite
from tests.conftest import FakeClock

TOMBSTONES = 600


def _fill(database: Path | str) -> tuple[int, int]:
    """``TOMBSTONES`` memories of another namespace, two old memories, then ``TOMBSTONES``
    later ones (so a search for an old one is long by seq as by namespace, whichever the
    planner takes); the seqs of the old ones come back."""
    settings = Settings(db=database, synchronous="NORMAL", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember_many(
            [{"content": f"elsewhere {index}"} for index in range(TOMBSTONES)], namespace="other"
        )
        old = [service.remember(f"old memory {index}").id for index in range(2)]
        service.remember_many([{"content": f"later memory {index}"} for index in range(TOMBSTONES)])
        first, second = (service.get(memory_id).seq for memory_id in old)
    return first, second


def _tombstones(second: int) -> list[tuple[str, str, int]]:
    return [
        ("default", hashlib.sha256(str(index).encode()).hexdigest(), second)
        for index in range(TOMBSTONES)
    ]


def test_forgetting_an_old_memory_beside_many_tombstones_reads_the_namespace_once(
    db_path: Path,
) -> None:
    first, second = _fill(db_path)
    connection = apsw.Connection(str(db_path))
    with connection:
        connection.executemany(
            "INSERT INTO graph_entity_tombstones VALUES (?, ?, ?)", _tombstones(second)
        )
        connection.execute("DELETE FROM memories WHERE seq = ?", (first,))
    steps = [0]

    def count() -> bool:
        steps[0] += 1
        return False  # go on

    connection.set_progress_handler(count, 1000)
    drop_on_sqlite(connection, "default", first)
    # Each tombstone's NOT EXISTS scanned hundreds of memories: some thousand thousand
    # steps. Read once, the namespace and the tombstones are a few thousand each.
    assert steps[0] < 100, steps
    connection.set_progress_handler(None)
    count_sql = "SELECT count(*) FROM graph_entity_tombstones"
    assert connection.execute(count_sql).fetchone() == (TOMBSTONES,)  # the second is left
    connection.execute("DELETE FROM memories WHERE seq = ?", (second,))
    drop_on_sqlite(connection, "default", second)
    assert connection.execute(count_sql).fetchone() == (0,)
    connection.close()


class _Recording:
    """A connection recording the statements given to it, then running them."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self.statements: list[tuple[str, dict[str, Any]]] = []

    def execute(self, sql: str, params: dict[str, Any]) -> psycopg.Cursor[Any]:
        self.statements.append((sql, params))
        return self.connection.execute(sql, params)


@pytest.mark.postgres
def test_postgres_reads_the_namespace_once_for_its_tombstones(postgres_url: str) -> None:
    first, second = _fill(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO graph_entity_tombstones VALUES (%s, %s, %s)", _tombstones(second)
            )
        connection.execute("DELETE FROM memories WHERE seq = %s", (first,))
        recording = _Recording(connection)
        drop_on_postgres(recording, "default", first)  # type: ignore[arg-type]
        (sql, params), *_ = recording.statements
        plan = "\n".join(
            str(row[0]) for row in connection.execute("EXPLAIN " + sql, params).fetchall()
        )
        # Once (an InitPlan), not per tombstone (a SubPlan, or a join testing each).
        assert "SubPlan" not in plan, plan
        assert "Join" not in plan, plan
        count_sql = "SELECT count(*) FROM graph_entity_tombstones"
        assert connection.execute(count_sql).fetchone() == (TOMBSTONES,)
        connection.execute("DELETE FROM memories WHERE seq = %s", (second,))
        drop_on_postgres(recording, "default", second)  # type: ignore[arg-type]
        assert connection.execute(count_sql).fetchone() == (0,)


def test_a_purge_looks_at_the_tombstones_of_the_namespaces_it_purged_only(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every namespace with a tombstone was read at each purge (one runs when a database is
    # opened), where only those the purge deleted memories of can have stale ones now.
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("short lived", ttl_seconds=60, namespace="brief")
        service.remember("kept", namespace="other")
        store_module = sqlite_store if isinstance(any_database, Path) else postgres_store
        looked_at: list[str | None] = []
        original = store_module.drop_stale_tombstones

        def recording(connection: Any, namespace: str | None = None, seq: int = 0) -> None:
            looked_at.append(namespace)
            original(connection, namespace, seq)

        monkeypatch.setattr(store_module, "drop_stale_tombstones", recording)
        clock.advance(300)
        assert service.store.purge_expired(clock()) == 1
        assert looked_at == ["brief"]
