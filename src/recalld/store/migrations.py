"""Numbered schema migrations for the SQLite store.

Each migration is a function ``migration_<n>(execute)`` applied in its own
transaction; the version reached is recorded in ``schema_migrations`` and in
``PRAGMA user_version``. Numbers are shared with the PostgreSQL store.

The full-text index is not a migration (see :mod:`recalld.store.sqlite_fts`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from recalld._text import content_hash
from recalld.store.migrations_counters import migration_15, migration_16, migration_17
from recalld.store.migrations_entities import migration_30
from recalld.store.migrations_grams import migration_32
from recalld.store.migrations_graph import migration_24
from recalld.store.migrations_ledger import migration_25, migration_26, migration_27
from recalld.store.migrations_spelling import migration_28, migration_29
from recalld.store.migrations_text import (
    migration_18,
    migration_19,
    migration_20,
    migration_21,
    migration_22,
    migration_23,
)
from recalld.store.migrations_trimmed import migration_31
from recalld.store.sqlite_fts import (
    FTS_NAMESPACE_COLUMN,
    FTS_TABLE,
    FTS_TEXT_COLUMNS,
    ensure_fts,
    fts_namespace_token,
    fts_table_exists,
)

Execute = Callable[[str], Any]

__all__ = [
    "FTS_NAMESPACE_COLUMN",
    "FTS_TABLE",
    "FTS_TEXT_COLUMNS",
    "MIGRATIONS",
    "ensure_fts",
    "fts_namespace_token",
    "fts_table_exists",
]


def migration_1(execute: Execute) -> None:
    """Memories, their tags, and the indexes every query path needs."""
    execute(
        """
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            key TEXT,
            title TEXT,
            content TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'note',
            category TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            salience REAL,
            source TEXT,
            at TEXT,
            at_utc TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            expires_at TEXT,
            lat REAL,
            lon REAL,
            geohash TEXT,
            place_name TEXT,
            meta TEXT NOT NULL DEFAULT '{}',
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TEXT,
            index_state TEXT NOT NULL DEFAULT 'queued'
        )
        """
    )
    execute("CREATE UNIQUE INDEX memories_namespace_key ON memories(namespace, key)")
    execute("CREATE INDEX memories_namespace_created ON memories(namespace, created_at, seq)")
    execute("CREATE INDEX memories_namespace_updated ON memories(namespace, updated_at, seq)")
    execute("CREATE INDEX memories_namespace_at ON memories(namespace, at_utc)")
    execute("CREATE INDEX memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL")
    execute("CREATE INDEX memories_geohash ON memories(namespace, geohash)")
    execute(
        """
        CREATE TABLE memory_tags (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (seq, tag)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX memory_tags_tag ON memory_tags(tag, seq)")


def migration_2(execute: Execute) -> None:
    """API tokens: only a SHA-256 of each token is kept, with its namespace scopes."""
    execute(
        """
        CREATE TABLE tokens (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at TEXT NOT NULL,
            last_used_at TEXT,
            revoked_at TEXT
        )
        """
    )
    execute("CREATE INDEX tokens_active ON tokens(revoked_at)")


def migration_3(execute: Execute) -> None:
    """Semantic recall: embedding jobs, vectors (with their model), their change log, workers.

    ``vector_log`` is the change sequence every process's in-memory vector index
    catches up from (so vectors written by another process are seen): triggers
    log each upsert and delete, including the deletes that cascade from
    ``forget``. Jobs and vectors hold no memory text, only the memory's ``seq``.
    """
    execute(
        """
        CREATE TABLE jobs (
            id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            kind TEXT NOT NULL DEFAULT 'embed',
            model TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0,
            run_after TEXT NOT NULL,
            lease_owner TEXT,
            lease_until TEXT,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            completed_at TEXT
        )
        """
    )
    execute("CREATE INDEX jobs_claim ON jobs(state, run_after)")
    execute("CREATE INDEX jobs_seq ON jobs(seq, model, state)")
    execute(
        """
        CREATE TABLE vectors (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dimension INTEGER NOT NULL,
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (seq, model)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX vectors_model ON vectors(model, seq)")
    execute(
        """
        CREATE TABLE vector_log (
            change INTEGER PRIMARY KEY AUTOINCREMENT,
            seq INTEGER NOT NULL,
            model TEXT NOT NULL
        )
        """
    )
    execute("CREATE INDEX vector_log_model ON vector_log(model, change)")
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        execute(
            f"""
            CREATE TRIGGER vectors_log_{event.lower()} AFTER {event} ON vectors BEGIN
                INSERT INTO vector_log(seq, model) VALUES ({row}.seq, {row}.model);
            END
            """
        )
    execute(
        """
        CREATE TABLE workers (
            id TEXT PRIMARY KEY,
            pid INTEGER NOT NULL,
            host TEXT NOT NULL,
            model TEXT NOT NULL,
            state TEXT NOT NULL,
            started_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            processed INTEGER NOT NULL DEFAULT 0,
            failed INTEGER NOT NULL DEFAULT 0
        )
        """
    )


def migration_4(execute: Execute) -> None:
    """Core memory: the ordered entries of each (namespace, target), with a change counter."""
    execute(
        """
        CREATE TABLE core_memory (
            namespace TEXT NOT NULL,
            target TEXT NOT NULL,
            entries TEXT NOT NULL DEFAULT '[]',
            version INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, target)
        ) WITHOUT ROWID
        """
    )


def migration_5(execute: Execute) -> None:
    """Involuntary recall: signal features and biometric readings, triggers, pending queue."""
    execute(
        """
        CREATE TABLE memory_signals (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            channel TEXT NOT NULL,
            features BLOB NOT NULL,
            PRIMARY KEY (seq, channel)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX memory_signals_channel ON memory_signals(channel, seq)")
    execute(
        """
        CREATE TABLE memory_biometrics (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            name TEXT NOT NULL,
            value REAL NOT NULL,
            PRIMARY KEY (seq, name)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX memory_biometrics_name ON memory_biometrics(name, seq)")
    execute(
        """
        CREATE TABLE recollection_triggers (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            fired_at TEXT NOT NULL,
            score REAL NOT NULL
        )
        """
    )
    execute("CREATE INDEX recollection_triggers_seq ON recollection_triggers(seq, fired_at)")
    execute(
        """
        CREATE TABLE pending_recollections (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            score REAL NOT NULL,
            channels TEXT NOT NULL,
            prompt_line TEXT NOT NULL,
            fired_at TEXT NOT NULL
        )
        """
    )
    execute("CREATE INDEX pending_recollections_namespace ON pending_recollections(namespace, id)")
    execute("CREATE INDEX pending_recollections_seq ON pending_recollections(seq)")


def migration_6(execute: Execute) -> None:
    """Prospective memory: intentions, their triggers and signal streaks; reminders queued.

    An intention is a memory of kind ``intention``; its firing state, triggers and
    streaks reference ``memories(seq)`` with ``ON DELETE CASCADE`` (forget removes
    them). Reminders share the pending queue with recollections, told apart by
    ``kind``, with what matched in ``details``.
    """
    execute(
        """
        CREATE TABLE intentions (
            seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
            namespace TEXT NOT NULL,
            state TEXT NOT NULL,
            repeat TEXT NOT NULL,
            min_interval_seconds REAL NOT NULL DEFAULT 0,
            zone TEXT NOT NULL,
            scheduled INTEGER NOT NULL,
            expires_at TEXT,
            next_due TEXT,
            last_fired_at TEXT,
            fire_count INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    execute(
        "CREATE INDEX intentions_due ON intentions(next_due)"
        " WHERE state = 'active' AND next_due IS NOT NULL"
    )
    execute("CREATE INDEX intentions_namespace ON intentions(namespace, state, seq)")
    execute(
        """
        CREATE TABLE intention_triggers (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            namespace TEXT NOT NULL,
            type TEXT NOT NULL,
            term TEXT,
            low_lat REAL,
            high_lat REAL,
            low_lon REAL,
            high_lon REAL,
            spec TEXT NOT NULL,
            PRIMARY KEY (seq, position)
        ) WITHOUT ROWID
        """
    )
    execute(
        "CREATE INDEX intention_triggers_term ON intention_triggers(namespace, type, term)"
        " WHERE term IS NOT NULL"
    )
    # A place trigger is found by the box around its circle that contains the sensed point.
    execute(
        "CREATE INDEX intention_triggers_place ON intention_triggers(namespace, low_lat, high_lat)"
        " WHERE low_lat IS NOT NULL"
    )
    execute(
        """
        CREATE TABLE intention_streaks (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            count INTEGER NOT NULL,
            last_at TEXT NOT NULL,
            PRIMARY KEY (seq, position)
        ) WITHOUT ROWID
        """
    )
    execute(
        "ALTER TABLE pending_recollections ADD COLUMN kind TEXT NOT NULL DEFAULT 'recollection'"
    )
    execute("ALTER TABLE pending_recollections ADD COLUMN details TEXT")


def migration_7(execute: Execute) -> None:
    """Knowledge graph: entities, their mentions and observations, relations and their sources.

    Every row that comes from a memory references ``memories(seq)`` with ``ON
    DELETE CASCADE``, and triggers drop what is left orphaned: an entity that is
    not ``declared`` (created through the knowledge tools) once its last
    mention goes, a relation that is not ``declared`` once its last source
    memory goes. So ``forget`` leaves no entity or relation of its memory
    behind. ``graph_extracted`` records which extractor (and text) produced a
    memory's mentions, for background re-extraction when the extractor changes.
    """
    execute(
        """
        CREATE TABLE graph_entities (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            declared INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )
        """
    )
    execute("CREATE UNIQUE INDEX graph_entities_key ON graph_entities(namespace, key)")
    execute("CREATE INDEX graph_entities_type ON graph_entities(namespace, type, key)")
    execute(
        """
        CREATE TABLE graph_mentions (
            entity_id INTEGER NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            surface TEXT NOT NULL,
            count INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (entity_id, seq)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX graph_mentions_seq ON graph_mentions(seq, entity_id)")
    execute(
        """
        CREATE TABLE graph_observations (
            entity_id INTEGER NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, seq)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX graph_observations_seq ON graph_observations(seq, entity_id)")
    execute(
        """
        CREATE TABLE graph_relations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            namespace TEXT NOT NULL,
            subject_id INTEGER NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            predicate TEXT NOT NULL,
            object_id INTEGER NOT NULL REFERENCES graph_entities(id) ON DELETE CASCADE,
            declared INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        )
        """
    )
    execute(
        "CREATE UNIQUE INDEX graph_relations_triple"
        " ON graph_relations(subject_id, predicate, object_id)"
    )
    execute("CREATE INDEX graph_relations_object ON graph_relations(object_id, predicate)")
    execute("CREATE INDEX graph_relations_namespace ON graph_relations(namespace, predicate)")
    execute(
        """
        CREATE TABLE graph_relation_sources (
            relation_id INTEGER NOT NULL REFERENCES graph_relations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            at TEXT,
            PRIMARY KEY (relation_id, seq)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX graph_relation_sources_seq ON graph_relation_sources(seq, relation_id)")
    execute(
        """
        CREATE TABLE graph_extracted (
            seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            extracted_at TEXT NOT NULL
        )
        """
    )
    execute("CREATE INDEX graph_extracted_model ON graph_extracted(model, seq)")
    # Claims read due jobs of one kind and model in run_after order straight off this index.
    execute("CREATE INDEX jobs_kind ON jobs(kind, model, state, run_after, id)")
    # Orphans go as soon as their last mention or source goes (forget cascades fire these).
    execute(
        """
        CREATE TRIGGER graph_mentions_orphan AFTER DELETE ON graph_mentions BEGIN
            DELETE FROM graph_entities WHERE id = old.entity_id AND declared = 0
                AND NOT EXISTS (SELECT 1 FROM graph_mentions WHERE entity_id = old.entity_id);
        END
        """
    )
    execute(
        """
        CREATE TRIGGER graph_sources_orphan AFTER DELETE ON graph_relation_sources BEGIN
            DELETE FROM graph_relations WHERE id = old.relation_id AND declared = 0
                AND NOT EXISTS
                (SELECT 1 FROM graph_relation_sources WHERE relation_id = old.relation_id);
        END
        """
    )


def _float16_literal(blob: bytes) -> str:
    """A float32 vector blob as the SQL literal of its float16 bytes (X'...')."""
    import numpy as np

    if len(blob) % 4:
        return "X'" + bytes(blob).hex() + "'"  # not float32: kept as it was
    half = np.frombuffer(bytes(blob), dtype="<f4").astype("<f2").tobytes()
    return "X'" + half.hex() + "'"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def migration_8(execute: Execute) -> None:
    """Compact vectors (issue 13): float16 rows that fit in their b-tree page.

    The float32 rows of ``vectors`` (~1.6 KB with a 384-dimension model) were
    too large for a ``WITHOUT ROWID`` page cell, so each spilled into its own
    overflow page (4.7 KB on disk per vector). The table is rebuilt with
    float16 vectors (768 bytes: four rows to a page), without the
    ``dimension`` and ``created_at`` columns nobody read and without the
    ``(model, seq)`` index (loading scans the table in seq order). Its change-log
    triggers are recreated unchanged. Done embedding jobs, which status now
    counts from the vectors, are deleted.

    A migration runs plain SQL, so each vector is converted in Python and
    written back as a blob literal, a thousand rows at a time.
    """
    execute(
        """
        CREATE TABLE vectors_compact (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (seq, model)
        ) WITHOUT ROWID
        """
    )
    last: tuple[int, str] = (-1, "")
    while True:
        rows = list(
            execute(
                "SELECT seq, model, text_hash, vector FROM vectors"
                f" WHERE (seq, model) > ({last[0]}, {_quoted(last[1])})"
                " ORDER BY seq, model LIMIT 1000"
            )
        )
        if not rows:
            break
        values = ", ".join(
            f"({int(seq)}, {_quoted(model)}, {_quoted(digest)}, {_float16_literal(blob)})"
            for seq, model, digest, blob in rows
        )
        execute(f"INSERT INTO vectors_compact(seq, model, text_hash, vector) VALUES {values}")
        last = (int(rows[-1][0]), str(rows[-1][1]))
    execute("DROP TABLE vectors")
    execute("ALTER TABLE vectors_compact RENAME TO vectors")
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        execute(
            f"""
            CREATE TRIGGER vectors_log_{event.lower()} AFTER {event} ON vectors BEGIN
                INSERT INTO vector_log(seq, model) VALUES ({row}.seq, {row}.model);
            END
            """
        )
    execute("DELETE FROM jobs WHERE state = 'done' AND kind = 'embed'")
    # Biometric recall looks readings up by value range (it scanned every one).
    execute("DROP INDEX IF EXISTS memory_biometrics_name")
    execute("CREATE INDEX memory_biometrics_value ON memory_biometrics(name, value, seq)")


def migration_9(execute: Execute) -> None:
    """Ids are unique per namespace, no longer across the whole file (issue 10).

    With one global id space, writing an id that another namespace holds was
    refused, which told the caller that the id exists there. SQLite cannot drop
    a column's UNIQUE constraint in place, so the table is rebuilt (the runner
    turns foreign-key enforcement off around migrations, so the dependent rows
    are kept, and checks them before committing). The rebuild copies whatever
    columns the table has and re-creates its indexes and triggers from their
    stored SQL, so it does not depend on the exact column list. ``seq`` values
    and the AUTOINCREMENT high-water mark are kept: a seq is never reused.
    """
    (table_sql,) = next(
        iter(execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'memories'"))
    )
    rebuilt_sql, replaced = re.subn(r"\bid TEXT NOT NULL UNIQUE\b", "id TEXT NOT NULL", table_sql)
    if replaced != 1:
        raise RuntimeError("migration 9: the memories table does not have the expected id column")
    rebuilt_sql = re.sub(
        r"^CREATE TABLE\s+\"?memories\"?", "CREATE TABLE memories_rebuilt", rebuilt_sql, count=1
    )
    dependents = [
        sql
        for (sql,) in execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = 'memories'"
            " AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name"
        )
    ]
    high_water = list(execute("SELECT seq FROM sqlite_sequence WHERE name = 'memories'"))
    execute(rebuilt_sql)
    execute("INSERT INTO memories_rebuilt SELECT * FROM memories")
    execute("DROP TABLE memories")
    execute("ALTER TABLE memories_rebuilt RENAME TO memories")
    for sql in dependents:
        execute(sql)
    execute("CREATE UNIQUE INDEX memories_namespace_id ON memories(namespace, id)")
    if high_water:
        execute(
            "UPDATE sqlite_sequence SET seq = max(seq, "
            f"{int(high_water[0][0])}) WHERE name = 'memories'"
        )
        if not list(execute("SELECT 1 FROM sqlite_sequence WHERE name = 'memories'")):
            execute(
                "INSERT INTO sqlite_sequence(name, seq) VALUES"
                f" ('memories', {int(high_water[0][0])})"
            )


def migration_10(execute: Execute) -> None:
    """Pending scrubs: content-dropping writes whose old bytes may still be in the files.

    A forget, an overwrite or a purge records a row in its own transaction; the
    row is deleted once a checkpoint has folded the write-ahead log into the
    database and truncated it (see :mod:`recalld.scrubbing`). A row holds only
    why and when, never anything of the memory, so its existence leaks nothing.
    """
    execute(
        """
        CREATE TABLE pending_scrubs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            reason TEXT NOT NULL,
            recorded_at TEXT NOT NULL
        )
        """
    )


def migration_11(execute: Execute) -> None:
    """Speaker as a field, and the index that finds a memory's neighbours in its source.

    ``speaker`` is who said or wrote a memory (a conversation turn's speaker).
    ``memories_source_order`` serves the neighbour lookup of recall's reranker:
    the previous and next memory of the same source in a namespace, by
    (``at_utc``, ``seq``). The full-text table of the old layout (title,
    content, tags) is dropped with its triggers, so :func:`ensure_fts` rebuilds
    it with the speaker column when the store opens (it is derived data).
    """
    execute("ALTER TABLE memories ADD COLUMN speaker TEXT")
    execute(
        "CREATE INDEX memories_source_order ON memories(namespace, source, at_utc, seq)"
        " WHERE source IS NOT NULL"
    )
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        execute(f"DROP TRIGGER IF EXISTS {trigger}")
    execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


def migration_12(execute: Execute) -> None:
    """No silent duplicates (issue 14).

    ``content_hash`` is the SHA-256 of a memory's content with its white space
    normalised (:func:`recalld._text.content_hash`), indexed per namespace, so
    a write of the same text again finds the memory it repeats without a scan.
    Existing rows are hashed here. (A conversation's turns in order come from
    the previous migration's ``memories_source_order`` index.)
    """
    execute("ALTER TABLE memories ADD COLUMN content_hash TEXT")
    for seq, content in list(execute("SELECT seq, content FROM memories")):
        # The digest is hexadecimal and the seq an integer: nothing to quote.
        execute(f"UPDATE memories SET content_hash = '{content_hash(content)}' WHERE seq = {seq}")
    execute("CREATE INDEX memories_content_hash ON memories(namespace, content_hash)")


def migration_13(execute: Execute) -> None:
    """A namespace term in the full-text index (issue 13: recall in a small namespace).

    Counting how many memories *of a namespace* hold a word (the per-namespace
    document frequencies BM25F needs) joined every matching row of the whole
    file to ``memories`` to read its namespace: 33 ms per query in a namespace
    holding 1% of 100,000 memories. ``fts_namespace`` is a virtual generated
    column (nothing stored in ``memories``) whose single term names the
    namespace (:func:`fts_namespace_token`); indexed as one more FTS5 column, it
    lets the index answer ``word AND namespace`` without a row lookup. The
    full-text table is dropped with its triggers so :func:`ensure_fts` rebuilds
    it with the new column when the store opens (it is derived data).
    """
    execute(
        f"ALTER TABLE memories ADD COLUMN {FTS_NAMESPACE_COLUMN} TEXT"
        " GENERATED ALWAYS AS ('ns' || lower(hex(namespace)) || '0') VIRTUAL"
    )
    for trigger in ("memories_fts_insert", "memories_fts_delete", "memories_fts_update"):
        execute(f"DROP TRIGGER IF EXISTS {trigger}")
    execute(f"DROP TABLE IF EXISTS {FTS_TABLE}")


def migration_14(execute: Execute) -> None:
    """Vectors name their model by a small id (issue 13: disk per memory).

    Each row of ``vectors`` repeated its model's name (26 bytes for the default
    model), which left four rows to a 4 KiB page and a fifth of every page empty.
    ``vector_rows`` holds the model's id from ``vector_models`` instead: five rows
    to a page, 1,041 -> 819 bytes per memory. ``vectors`` stays as a view with the
    old columns (what copies a store and the benchmarks read and write); the
    store's own queries use ``vector_rows``. The change log's triggers move to
    the new table and still log the model's name.
    """
    execute("CREATE TABLE vector_models (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
    execute("INSERT INTO vector_models(name) SELECT DISTINCT model FROM vectors ORDER BY model")
    execute(
        """
        CREATE TABLE vector_rows (
            seq INTEGER NOT NULL REFERENCES memories(seq) ON DELETE CASCADE,
            model_id INTEGER NOT NULL REFERENCES vector_models(id),
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (seq, model_id)
        ) WITHOUT ROWID
        """
    )
    execute(
        "INSERT INTO vector_rows(seq, model_id, text_hash, vector)"
        " SELECT v.seq, m.id, v.text_hash, v.vector FROM vectors v"
        " JOIN vector_models m ON m.name = v.model ORDER BY v.seq, m.id"
    )
    execute("DROP TABLE vectors")
    execute(
        "CREATE VIEW vectors(seq, model, text_hash, vector) AS"
        " SELECT r.seq, m.name, r.text_hash, r.vector FROM vector_rows r"
        " JOIN vector_models m ON m.id = r.model_id"
    )
    execute(
        """
        CREATE TRIGGER vectors_insert INSTEAD OF INSERT ON vectors BEGIN
            INSERT OR IGNORE INTO vector_models(name) VALUES (new.model);
            INSERT INTO vector_rows(seq, model_id, text_hash, vector) VALUES (new.seq,
                (SELECT id FROM vector_models WHERE name = new.model), new.text_hash, new.vector);
        END
        """
    )
    execute(
        """
        CREATE TRIGGER vectors_delete INSTEAD OF DELETE ON vectors BEGIN
            DELETE FROM vector_rows WHERE seq = old.seq
                AND model_id = (SELECT id FROM vector_models WHERE name = old.model);
        END
        """
    )
    for event, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
        execute(
            f"""
            CREATE TRIGGER vector_rows_log_{event.lower()} AFTER {event} ON vector_rows BEGIN
                INSERT INTO vector_log(seq, model)
                VALUES ({row}.seq, (SELECT name FROM vector_models WHERE id = {row}.model_id));
            END
            """
        )


MIGRATIONS: list[Callable[[Execute], None]] = [
    migration_1,
    migration_2,
    migration_3,
    migration_4,
    migration_5,
    migration_6,
    migration_7,
    migration_8,
    migration_9,
    migration_10,
    migration_11,
    migration_12,
    migration_13,
    migration_14,
    migration_15,
    migration_16,
    migration_17,
    migration_18,
    migration_19,
    migration_20,
    migration_21,
    migration_22,
    migration_23,
    migration_24,
    migration_25,
    migration_26,
    migration_27,
    migration_28,
    migration_29,
    migration_30,
    migration_31,
    migration_32,
]
