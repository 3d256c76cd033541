"""SQLite migrations 15-17: a counter of changes to what recall reads, and two indexes
(moved out of :mod:`recalld.store.migrations`, which grew to its size limit; listed in
its :data:`~recalld.store.migrations.MIGRATIONS` with the others)."""

from __future__ import annotations

from recalld.store.sqlite_fts import Execute

__all__ = ["RECALLED_COLUMNS", "migration_15", "migration_16", "migration_17"]


# What recall reads of a memory (its candidate row, its namespace and expiry): an update of
# any of these moves the change counter; recall's access counts do not.
RECALLED_COLUMNS = (
    "namespace", "title", "content", "tags", "speaker", "source", "at_utc", "expires_at",
    "index_state",
)  # fmt: skip


def migration_15(execute: Execute) -> None:
    """A counter of changes to what recall reads of memories (``memory_changes``).

    Every insert and delete of a memory, and every update of one of
    :data:`RECALLED_COLUMNS`, adds one: any connection, of any process, can tell
    whether rows it kept are still what the file holds
    (:mod:`recalld.store.sqlite_row_cache`).
    """
    execute(
        "CREATE TABLE memory_changes (id INTEGER PRIMARY KEY CHECK (id = 1),"
        " counter INTEGER NOT NULL)"
    )
    execute("INSERT INTO memory_changes (id, counter) VALUES (1, 0)")
    bump = "UPDATE memory_changes SET counter = counter + 1 WHERE id = 1;"
    for name, event in (
        ("insert", "INSERT"),
        ("delete", "DELETE"),
        ("update", f"UPDATE OF {', '.join(RECALLED_COLUMNS)}"),
    ):
        execute(f"CREATE TRIGGER memory_changes_{name} AFTER {event} ON memories BEGIN {bump} END")


def migration_16(execute: Execute) -> None:
    """The place index covers what a place cue reads, and only memories with a place.

    A cue's place scans the geohash cells around it (a few thousand memories at 100k
    in a city) for seq, coordinates, time and expiry; with ``(namespace, geohash)``
    alone each one was a lookup in the table (7.7 of a 17.9 ms place-and-time cue
    at 100k, against 1.7 from the index). Memories without a place (NULL geohash)
    are no longer indexed at all, so a store of plain notes gets smaller.
    """
    execute("DROP INDEX memories_geohash")
    execute(
        "CREATE INDEX memories_geohash ON memories(namespace, geohash, lat, lon, at, expires_at)"
        " WHERE geohash IS NOT NULL"
    )


def migration_17(execute: Execute) -> None:
    """The memories still waiting for their vector, by namespace.

    A recall embeds its own namespaces' few waiting memories before it searches;
    finding them through the job queue walked another namespace's bulk load. The
    index holds only queued memories, so it stays near empty.
    """
    execute("CREATE INDEX memories_queued ON memories(namespace, seq) WHERE index_state = 'queued'")
