"""PostgreSQL migrations 25 and 27: what ``recalld migrate`` copied into this database, and from
where (as SQLite's, :mod:`recalld.store.migrations_ledger`). Listed in
:data:`recalld.store.postgres_migrations.MIGRATIONS` with the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["migration_25", "migration_27"]

Execute = Callable[[str], Any]


def migration_25(execute: Execute) -> None:
    """The migrate ledger (SQLite's migration 25, :mod:`recalld.store.migrations_ledger`):
    the memories and core memory rows a ``recalld migrate`` from ``origin`` wrote here."""
    execute(
        """
        CREATE TABLE migrated_memories (
            seq BIGINT PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
            origin TEXT NOT NULL
        )
        """
    )
    execute("CREATE INDEX migrated_memories_origin ON migrated_memories(origin, seq)")
    execute(
        """
        CREATE TABLE migrated_core (
            namespace TEXT NOT NULL,
            target TEXT NOT NULL,
            origin TEXT NOT NULL,
            PRIMARY KEY (namespace, target)
        )
        """
    )


def migration_27(execute: Execute) -> None:
    """The migrate ledger of the graph (SQLite's migration 27,
    :mod:`recalld.store.migrations_ledger`): the entities and relations a ``recalld
    migrate`` from ``origin`` wrote here."""
    for kind, table in (("entity", "graph_entities"), ("relation", "graph_relations")):
        execute(
            f"""
            CREATE TABLE migrated_{kind}_rows (
                id BIGINT PRIMARY KEY REFERENCES {table}(id) ON DELETE CASCADE,
                origin TEXT NOT NULL
            )
            """
        )
        execute(f"CREATE INDEX migrated_{kind}_rows_origin ON migrated_{kind}_rows(origin, id)")
