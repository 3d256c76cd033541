"""SQLite migrations 25 and 27: what ``recalld migrate`` copied into this database, and from
where; and 26, PostgreSQL's alone.

Listed in :data:`recalld.store.migrations.MIGRATIONS` with the others; PostgreSQL's
migrations 25 and 27 build the same tables (:mod:`recalld.store.postgres_migrations_ledger`).
"""

from __future__ import annotations

from recalld.store.sqlite_fts import Execute

__all__ = ["migration_25", "migration_26", "migration_27"]


def migration_25(execute: Execute) -> None:
    """The migrate ledger (:mod:`recalld.moving`): which memories and which core memory
    rows a copy from ``origin`` wrote here, so that a later run of the same copy brings
    them up to date, or removes a memory the source has forgotten since, without
    touching what the database held before. A memory's row references it with
    ``ON DELETE CASCADE``: forgetting it here leaves no ledger row (not even its seq)."""
    execute(
        """
        CREATE TABLE migrated_memories (
            seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE,
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


def migration_26(execute: Execute) -> None:
    """PostgreSQL's alone (:mod:`recalld.store.postgres_migrations_words`: its search column
    splits words at punctuation, as FTS5's ``unicode61`` tokenizer always has here);
    numbered on both stores so their schema versions stay the same."""
    del execute


def migration_27(execute: Execute) -> None:
    """The migrate ledger of the graph: which entities and relations a copy from
    ``origin`` wrote here, so that a later run removes the ones the source deleted
    since (as it removes a forgotten memory), and never one the database held before.
    Each row references its entity or relation with ``ON DELETE CASCADE``."""
    for kind, table in (("entity", "graph_entities"), ("relation", "graph_relations")):
        execute(
            f"""
            CREATE TABLE migrated_{kind}_rows (
                id INTEGER PRIMARY KEY REFERENCES {table}(id) ON DELETE CASCADE,
                origin TEXT NOT NULL
            )
            """
        )
        execute(f"CREATE INDEX migrated_{kind}_rows_origin ON migrated_{kind}_rows(origin, id)")
