"""PostgreSQL migrations 15-17 (as SQLite's, :mod:`recalld.store.migrations_counters`;
moved out of :mod:`recalld.store.postgres_migrations`, which grew to its size limit;
listed in its :data:`~recalld.store.postgres_migrations.MIGRATIONS` with the others)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["migration_15", "migration_16", "migration_17"]

Execute = Callable[[str], Any]


def migration_15(execute: Execute) -> None:
    """Nothing to do here: SQLite's migration 15 counts changes to memories so a process
    can keep candidate rows between recalls; PostgreSQL keeps none. The step exists so
    both stores' numbers stay equal.
    """
    del execute


def migration_16(execute: Execute) -> None:
    """As SQLite's migration 16: the place index carries what a place cue reads
    (coordinates, time, expiry) and holds only memories with a place."""
    execute("DROP INDEX memories_geohash")
    execute(
        "CREATE INDEX memories_geohash ON memories(namespace, geohash text_pattern_ops)"
        " INCLUDE (lat, lon, at_utc, at_offset, expires_at) WHERE geohash IS NOT NULL"
    )


def migration_17(execute: Execute) -> None:
    """As SQLite's migration 17: the memories still waiting for their vector, by namespace."""
    execute("CREATE INDEX memories_queued ON memories(namespace, seq) WHERE index_state = 'queued'")
