"""SQLite migrations 18-23: what recall reads of a memory's text, and its times.

The full-text columns (a place's name, 18; a key, 21), the text a memory's vectors
are made from (both again, 19 and 22: those memories are queued for embedding
again) and the years before 1000 an older version wrote unpadded (20); 23 is
PostgreSQL's alone (accents folded, as SQLite's index always did). Listed in
:data:`recalld.store.migrations.MIGRATIONS` with the others.
"""

from __future__ import annotations

from recalld._time import to_storage, utc_now
from recalld.store.sqlite_fts import FTS_TABLE, Execute

__all__ = [
    "MEMORY_TIMES",
    "migration_18",
    "migration_19",
    "migration_20",
    "migration_21",
    "migration_22",
    "migration_23",
]


def _drop_fts(execute: Execute) -> None:
    """Drop the full-text table and its triggers: :func:`recalld.store.sqlite_fts.ensure_fts`
    rebuilds them, with the columns of today, when the store opens (it is derived data)."""
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        execute(f"DROP TRIGGER IF EXISTS {trigger}")
    execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


def migration_18(execute: Execute) -> None:
    """An experience's place name is searchable, as one more full-text column.

    A memory stored with ``place={"name": "Blue Bottle Cafe", ...}`` was not found by
    a question naming the place (and the name counted as one the store never met).
    The full-text table is dropped with its triggers so :func:`ensure_fts` rebuilds
    it with the ``place_name`` column when the store opens (it is derived data).
    """
    _drop_fts(execute)


def migration_19(execute: Execute) -> None:
    """An experience's place name is part of the text it is embedded from
    (:func:`recalld.store.semantic.embedding_text`), so "what happened at Café Marly?"
    and a sense cue naming the place find it by meaning too. The vectors of memories
    with a place name were made without it: they are queued again (:func:`_queue_again`).
    """
    _queue_again(execute, "SELECT seq FROM memories WHERE coalesce(place_name, '') != ''")


def migration_20(execute: Execute) -> None:
    """Times before the year 1000 written with four digits, as :func:`to_storage` now
    writes them: an older version wrote the year 800 as ``800-12-25T…``, which sorts
    after ``2026-…`` (a ``since``/``until`` filter misplaced it)."""
    columns = [
        *(("memories", column) for column in MEMORY_TIMES),
        ("graph_relation_sources", "at"),  # a memory's at_utc, copied by the extraction
    ]
    for table, column in columns:
        year = f"substr({column}, 1, instr({column}, '-') - 1)"
        execute(
            f"UPDATE {table} SET {column} = printf('%04d', CAST({year} AS INTEGER))"
            f" || substr({column}, instr({column}, '-')) WHERE instr({column}, '-') BETWEEN 2 AND 4"
        )


# The time columns of memories a user's data sets (migration 20).
MEMORY_TIMES = ("at_utc", "created_at", "updated_at", "expires_at", "last_accessed_at")


def migration_21(execute: Execute) -> None:
    """A key's words are searched: "staging region" finds the note kept under
    ``staging.region`` (its value, "Melbourne (australiaeast)", says neither word). The
    full-text table is dropped with its triggers so :func:`ensure_fts` rebuilds it with
    the ``key`` column when the store opens (FTS5's tokenizer splits a key at ``.``,
    ``_``, ``-`` and ``/``)."""
    _drop_fts(execute)


def migration_22(execute: Execute) -> None:
    """A key's words are part of the text a memory is embedded from
    (:func:`recalld.store.semantic.embedding_text`): a key/value note says what it is
    about in its key (``user.favourite_colour`` → "blue"), which its vector did not
    know. Memories with a key are queued again, as in migration 19."""
    _queue_again(execute, "SELECT seq FROM memories WHERE key IS NOT NULL")


def migration_23(execute: Execute) -> None:
    """Nothing to do here: PostgreSQL's migration 23 folds accents in keyword search, which
    SQLite's FTS5 index does already (``remove_diacritics``). The step exists so both
    stores' numbers stay equal."""
    del execute


def _queue_again(execute: Execute, named: str) -> None:
    """Each model that has a vector of a memory ``named`` selects queues it again (a job
    like any other, which a worker or a recall's catch-up embeds), and the old vectors go
    now (``vector_log`` records it, so every process's vector index drops them)."""
    stamp = to_storage(utc_now())
    execute(
        "INSERT INTO jobs(id, seq, kind, model, state, attempts, run_after, created_at,"
        " updated_at)"
        f" SELECT lower(hex(randomblob(13))), r.seq, 'embed', v.name, 'queued', 0, '{stamp}',"
        f" '{stamp}', '{stamp}' FROM vector_rows r JOIN vector_models v ON v.id = r.model_id"
        f" WHERE r.seq IN ({named}) AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = r.seq"
        " AND j.kind = 'embed' AND j.model = v.name AND j.state IN ('queued', 'running'))"
    )
    execute(f"DELETE FROM vector_rows WHERE seq IN ({named})")
    execute(
        f"UPDATE memories SET index_state = 'queued' WHERE seq IN ({named}) AND EXISTS"
        " (SELECT 1 FROM jobs j WHERE j.seq = memories.seq AND j.kind = 'embed'"
        " AND j.state IN ('queued', 'running'))"
    )
