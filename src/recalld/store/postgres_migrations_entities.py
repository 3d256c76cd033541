"""PostgreSQL migration 30 (as SQLite's, :mod:`recalld.store.migrations_entities`): deleted
entities stay deleted, and the graph's version reads the newest entity off an index.
Listed in :data:`recalld.store.postgres_migrations.MIGRATIONS`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["migration_30"]

Execute = Callable[[str], Any]


def migration_30(execute: Execute) -> None:
    """As SQLite's migration 30: ``graph_entity_tombstones`` and ``graph_entities_updated``."""
    execute(
        """
        CREATE TABLE graph_entity_tombstones (
            namespace TEXT NOT NULL,
            key_hash TEXT NOT NULL,
            up_to_seq BIGINT NOT NULL,
            PRIMARY KEY (namespace, key_hash)
        )
        """
    )
    execute("CREATE INDEX graph_entities_updated ON graph_entities(namespace, updated_at)")
