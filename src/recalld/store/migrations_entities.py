"""SQLite migration 30: deleted entities stay deleted, and the graph's version reads the
newest entity off an index (listed in :data:`recalld.store.migrations.MIGRATIONS`;
PostgreSQL's migration 30, :mod:`recalld.store.postgres_migrations_entities`, builds the
same)."""

from __future__ import annotations

from recalld.store.sqlite_fts import Execute

__all__ = ["migration_30"]


def migration_30(execute: Execute) -> None:
    """``graph_entity_tombstones``: an entity the knowledge tools deleted, by namespace and
    the SHA-256 of its key (never its name: the memories naming it may be forgotten), with
    the last memory written before the deletion; extraction of that memory or an earlier one
    does not bring it back. And ``graph_entities_updated``: the graph's version read the
    namespace's newest ``updated_at`` off every entity of it (6 ms at 50,000)."""
    execute(
        """
        CREATE TABLE graph_entity_tombstones (
            namespace TEXT NOT NULL,
            key_hash TEXT NOT NULL,
            up_to_seq INTEGER NOT NULL,
            PRIMARY KEY (namespace, key_hash)
        ) WITHOUT ROWID
        """
    )
    execute("CREATE INDEX graph_entities_updated ON graph_entities(namespace, updated_at)")
