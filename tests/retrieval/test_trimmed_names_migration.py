"""Migration 31: a kind or a category an older version stored with white space at its
ends is trimmed, so the filters (trimmed since stop 65) find it again, on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

# As a version before stop 65 stored them: ends kept, one of them a no-break space.
STORED = [(" work ", " home"), ("note\t", "café\u00a0"), ("plain", None)]
TRIMMED = [("work", "home"), ("note", "café"), ("plain", None)]


def test_migration_31_trims_a_kind_and_category_an_older_version_stored(
    db_path: Path, clock: FakeClock
) -> None:
    # Review of pass a65: such a memory was found by neither "work" nor " work " (the
    # filter is trimmed too) until someone edited it.
    import apsw

    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        ids = [opened.remember(f"budget {index}").id for index in range(len(STORED))]
        before = [opened.get(memory_id).updated_at for memory_id in ids]
    connection = apsw.Connection(str(db_path))  # as a version before migration 31 kept it
    for memory_id, (kind, category) in zip(ids, STORED, strict=True):
        connection.execute(
            "UPDATE memories SET kind = ?, category = ? WHERE id = ?", (kind, category, memory_id)
        )
    connection.execute("DELETE FROM schema_migrations WHERE version = 31")
    connection.execute("PRAGMA user_version = 30")
    connection.close()
    with MemoryService.open(settings, clock=clock) as opened:
        memories = [opened.get(memory_id) for memory_id in ids]
        assert [(memory.kind, memory.category) for memory in memories] == TRIMMED
        assert [memory.updated_at for memory in memories] == before
        listed = opened.list_memories(filters={"category": "work"}).memories
        assert listed == []
        listed = opened.list_memories(filters={"kind": "work", "category": "home"}).memories
        assert [memory.id for memory in listed] == [ids[0]]
        assert opened.stats().by_kind == {"work": 1, "note": 1, "plain": 1}


@pytest.mark.postgres
def test_postgres_migration_31_trims_a_kind_and_category_an_older_version_stored(
    postgres_url: str, clock: FakeClock
) -> None:
    import psycopg

    from recalld.store.migrations_trimmed import postgres_migration_31

    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        ids = [opened.remember(f"budget {index}").id for index in range(len(STORED))]
        before = [opened.get(memory_id).updated_at for memory_id in ids]
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            for memory_id, (kind, category) in zip(ids, STORED, strict=True):
                connection.execute(
                    "UPDATE memories SET kind = %s, category = %s WHERE id = %s",
                    (kind, category, memory_id),
                )
            postgres_migration_31(connection.execute)
        memories = [opened.get(memory_id) for memory_id in ids]
        assert [(memory.kind, memory.category) for memory in memories] == TRIMMED
        assert [memory.updated_at for memory in memories] == before
        listed = opened.list_memories(filters={"kind": "note", "category": "café"}).memories
        assert [memory.id for memory in listed] == [ids[1]]


def test_migration_31_does_not_make_a_plain_memory_a_reminders(
    db_path: Path, clock: FakeClock
) -> None:
    # Integration read, stop 65: an older version stored the kind " intention" as any
    # other (only "intention" itself was kept for reminders). Trimmed, it became a
    # reminder's memory without a reminder: its kind could not be edited ("cancel the
    # reminder", of which there is none), and the import of its export refused it.
    import apsw

    settings = Settings(db=db_path, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        memory_id = opened.remember("call the plumber").id
    connection = apsw.Connection(str(db_path))  # as a version before migration 31 kept it
    connection.execute("UPDATE memories SET kind = ' intention' WHERE id = ?", (memory_id,))
    connection.execute("DELETE FROM schema_migrations WHERE version = 31")
    connection.execute("PRAGMA user_version = 30")
    connection.close()
    with MemoryService.open(settings, clock=clock) as opened:
        assert opened.get(memory_id).kind == " intention"
        assert opened.update(memory_id, kind="todo").kind == "todo"


@pytest.mark.postgres
def test_postgres_migration_31_does_not_make_a_plain_memory_a_reminders(
    postgres_url: str, clock: FakeClock
) -> None:
    import psycopg

    from recalld.store.migrations_trimmed import postgres_migration_31

    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        memory_id = opened.remember("call the plumber").id
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            connection.execute(
                "UPDATE memories SET kind = ' intention' WHERE id = %s", (memory_id,)
            )
            postgres_migration_31(connection.execute)
        assert opened.get(memory_id).kind == " intention"
        assert opened.update(memory_id, kind="todo").kind == "todo"
