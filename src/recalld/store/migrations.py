"""Numbered schema migrations for the SQLite store.

Each migration is a function ``migration_<n>(execute)`` applied in its own
transaction; the version reached is recorded in ``schema_migrations`` and in
``PRAGMA user_version``. Numbers are shared with the PostgreSQL store.

The full-text index is not a migration: whether FTS5 can be used is a property
of the running SQLite library, so :func:`ensure_fts` creates it (and its sync
triggers) on open when available.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Execute = Callable[[str], Any]

__all__ = ["FTS_TABLE", "MIGRATIONS", "ensure_fts", "fts_table_exists"]

FTS_TABLE = "memories_fts"


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


MIGRATIONS: list[Callable[[Execute], None]] = [
    migration_1,
    migration_2,
    migration_3,
    migration_4,
    migration_5,
    migration_6,
]


def fts_table_exists(execute: Execute) -> bool:
    """Whether the full-text table was created in this database."""
    rows = list(
        execute(f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{FTS_TABLE}'")
    )
    return bool(rows)


def ensure_fts(execute: Execute) -> None:
    """Create the FTS5 index over title, content, tags and speaker, its triggers, and fill it.

    External content (the text lives once, in ``memories``); Porter stemming on
    top of unicode61 with diacritics folded; ``secure-delete`` so a deleted
    memory's terms leave the index at once instead of at the next merge.
    """
    execute(
        f"""
        CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
            title, content, tags, speaker,
            content='memories', content_rowid='seq',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('secure-delete', 1)")
    execute(
        f"""
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO {FTS_TABLE}(rowid, title, content, tags, speaker)
            VALUES (new.seq, new.title, new.content, new.tags, new.speaker);
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content, tags, speaker)
            VALUES ('delete', old.seq, old.title, old.content, old.tags, old.speaker);
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, tags, speaker
        ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content, tags, speaker)
            VALUES ('delete', old.seq, old.title, old.content, old.tags, old.speaker);
            INSERT INTO {FTS_TABLE}(rowid, title, content, tags, speaker)
            VALUES (new.seq, new.title, new.content, new.tags, new.speaker);
        END
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")
