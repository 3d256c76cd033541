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


MIGRATIONS: list[Callable[[Execute], None]] = [migration_1]


def fts_table_exists(execute: Execute) -> bool:
    """Whether the full-text table was created in this database."""
    rows = list(
        execute(f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{FTS_TABLE}'")
    )
    return bool(rows)


def ensure_fts(execute: Execute) -> None:
    """Create the FTS5 index over title, content and tags, its triggers, and fill it.

    External content (the text lives once, in ``memories``); Porter stemming on
    top of unicode61 with diacritics folded; ``secure-delete`` so a deleted
    memory's terms leave the index at once instead of at the next merge.
    """
    execute(
        f"""
        CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
            title, content, tags,
            content='memories', content_rowid='seq',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES('secure-delete', 1)")
    execute(
        f"""
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO {FTS_TABLE}(rowid, title, content, tags)
            VALUES (new.seq, new.title, new.content, new.tags);
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content, tags)
            VALUES ('delete', old.seq, old.title, old.content, old.tags);
        END
        """
    )
    execute(
        f"""
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, tags ON memories BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, title, content, tags)
            VALUES ('delete', old.seq, old.title, old.content, old.tags);
            INSERT INTO {FTS_TABLE}(rowid, title, content, tags)
            VALUES (new.seq, new.title, new.content, new.tags);
        END
        """
    )
    execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES('rebuild')")
