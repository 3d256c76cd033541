"""The PostgreSQL graph writes inside a memory write transaction: the knowledge tools'
entities, observations and relations, and dropping what a memory's old text said.

The row shapes and the "shown" rule come from :mod:`recalld.store.postgres_graph`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from recalld.graph.names import entity_key
from recalld.store.graph import (
    STALE_TOMBSTONES,
    EntityRecord,
    entity_key_hash,
)
from recalld.store.postgres_connection import Connection
from recalld.store.postgres_graph import (
    EXPIRED,
    LIVE_ENTITY_COLUMNS,
    _entity,
    _shown,
)
from recalld.store.postgres_graph_extraction import GENERIC, lock_extraction_rows

__all__ = [
    "PostgresGraphTransaction",
    "TombstoneWork",
    "drop_lone_tombstone",
    "drop_stale_tombstones",
    "lock_tombstones",
]


def drop_stale_tombstones(connection: Connection, namespace: str, seq: int = 0) -> None:
    """As SQLite's (:func:`recalld.store.sqlite_graph_tombstones.drop_stale_tombstones`):
    drop the tombstones that deleting memory ``seq`` of ``namespace`` (``seq`` 0: any of
    it, as a purge deletes) left protecting nothing, so no hash outlives every memory it
    protected against. The caller holds :func:`lock_tombstones` of ``namespace``."""
    connection.execute(
        STALE_TOMBSTONES.replace(":namespace", "%(namespace)s::text").replace(
            ":seq", "%(seq)s::bigint"
        ),
        {"namespace": namespace, "seq": seq},
    )


# As LONE_TOMBSTONE, but "no memory left for it" is no memory at or before its up_to_seq:
# the deletion read the newest memory when it deleted the entity, and by its end (where
# the tombstone is written) another client may have forgotten those and written later
# ones, which the tombstone does not cover; kept for them, it protected nothing, and no
# forget drops a tombstone before its memory (review of pass b67).
UNCOVERING_TOMBSTONE = (
    "DELETE FROM graph_entity_tombstones WHERE namespace = %(namespace)s::text"
    " AND key_hash = %(key_hash)s::text AND up_to_seq < coalesce((SELECT min(seq)"
    " FROM memories WHERE namespace = %(namespace)s::text), 9223372036854775807)"
)


def drop_lone_tombstone(connection: Connection, namespace: str, key_hash: str) -> None:
    """Drop the tombstone of ``key_hash`` an entity's deletion just wrote if no memory of
    ``namespace`` at or before its ``up_to_seq`` is left for it to protect
    (:data:`recalld.store.graph.LONE_TOMBSTONE` on SQLite, whose single writer lets no
    memory come or go between the two). The caller holds :func:`lock_tombstones` of
    ``namespace``."""
    connection.execute(UNCOVERING_TOMBSTONE, {"namespace": namespace, "key_hash": key_hash})


def lock_tombstones(connection: Connection, namespace: str) -> None:
    """Serialise the tombstone writes of ``namespace`` until the transaction ends.

    Whether a tombstone is stale depends on the memories other transactions are deleting
    at the same time: under READ COMMITTED each saw the other's memory not yet deleted, so
    two forgets of a namespace's last memories (or a forget beside an entity's deletion)
    each kept the tombstone for the other's, and it outlived both (adversarial pass b67).
    The second to take this lock waits for the first to commit, and its next statement
    sees what the first deleted. Taken only at the end of a transaction
    (:class:`TombstoneWork`), after every row lock it takes, so it waits for no one who
    waits for it."""
    connection.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"tombstones:{namespace}",)
    )


class TombstoneWork:
    """The tombstone writes of one transaction, done together at its end (:meth:`finish`),
    namespace by namespace in order, under :func:`lock_tombstones`."""

    def __init__(self) -> None:
        # namespace -> the smallest seq deleted of it in this transaction
        self._deleted: dict[str, int] = {}
        # namespace -> key hash -> the newest memory's seq when the entity was deleted
        self._entities: dict[str, dict[str, int]] = {}

    def memory_deleted(self, namespace: str, seq: int) -> None:
        """Memory ``seq`` of ``namespace`` was deleted: its stale tombstones go at the end."""
        self._deleted[namespace] = min(seq, self._deleted.get(namespace, seq))

    def entity_deleted(self, namespace: str, key_hash: str, up_to_seq: int) -> None:
        """An entity was deleted: its tombstone is written at the end."""
        self._entities.setdefault(namespace, {})[key_hash] = up_to_seq

    def finish(self, connection: Connection) -> None:
        """Write the tombstones and drop the stale ones, the last work of the transaction."""
        for namespace in sorted(self._deleted.keys() | self._entities.keys()):
            lock_tombstones(connection, namespace)
            written = self._entities.get(namespace, {})
            for key_hash in sorted(written):
                # The memories written so far stay: their extraction must not bring it back.
                connection.execute(
                    "INSERT INTO graph_entity_tombstones(namespace, key_hash, up_to_seq)"
                    " VALUES (%s, %s, %s) ON CONFLICT (namespace, key_hash)"
                    " DO UPDATE SET up_to_seq = excluded.up_to_seq",
                    (namespace, key_hash, written[key_hash]),
                )
                # Unless none is left (its observations were its only memories, forgotten
                # with it): the hash would outlive every memory it protects against.
                drop_lone_tombstone(connection, namespace, key_hash)
            if namespace in self._deleted:
                drop_stale_tombstones(connection, namespace, self._deleted[namespace])
        self._deleted.clear()
        self._entities.clear()


class PostgresGraphTransaction:
    """:class:`recalld.store.graph.GraphTransaction` on a connection inside a transaction."""

    def __init__(self, connection: Connection, tombstones: TombstoneWork) -> None:
        self._connection = connection
        self._tombstones = tombstones
        # id -> (namespace, key) of each entity this transaction found: its deletion's
        # tombstone when another client deleted the row meanwhile (see delete_entity).
        self._found: dict[int, tuple[str, str]] = {}

    def lock_entities(self, namespace: str, keys: Iterable[str]) -> None:
        for key in sorted(set(keys)):
            # declare_entity's lock: a session may take it again, and it ends with the
            # transaction.
            self._lock(namespace, key)

    def _lock(self, namespace: str, key: str) -> None:
        self._connection.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"entity:{namespace}\x1f{key}",),
        )

    def find_entity(self, namespace: str, key: str, now: datetime) -> EntityRecord | None:
        row = self._connection.execute(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e"
            f" WHERE e.namespace = %(namespace)s AND e.key = %(key)s AND {_shown('e')}",
            {"namespace": namespace, "key": key, "now": now},
        ).fetchone()
        if row is None:
            return None
        found = _entity(row)
        self._found[found.id] = (found.namespace, found.key)
        return found

    def declare_entity(
        self, namespace: str, name: str, type: str | None, now: datetime
    ) -> tuple[EntityRecord, bool]:
        key = entity_key(name)
        # Two servers declaring the same entity: the second waits, then sees the first's.
        self._lock(namespace, key)
        shown = self.find_entity(namespace, key, now)
        if shown is not None and shown.declared:
            return shown, False
        if shown is not None:
            # Known only from memories: a forget of the last of them (which takes no entity
            # lock) may be deleting it now, its orphan trigger too. Its row lock (the one
            # the update below takes) is waited for, then the entity looked at again: gone,
            # it is declared anew, as never seen (adversarial pass b67: the update changed
            # no row and the declare failed an assert).
            locked = self._connection.execute(
                "SELECT 1 FROM graph_entities WHERE id = %s FOR UPDATE", (shown.id,)
            ).fetchone()
            shown = None if locked is None else self.find_entity(namespace, key, now)
        if shown is None:
            # Never seen, or known only from expired memories (hidden from every read and
            # gone at the purge): declared as given, as a new entity.
            self._connection.execute(
                "INSERT INTO graph_entities(namespace, key, name, type, declared, created_at,"
                " updated_at) VALUES (%s, %s, %s, %s, TRUE, %s, %s) ON CONFLICT (namespace, key)"
                " DO UPDATE SET declared = TRUE, name = excluded.name, type = excluded.type,"
                " created_at = excluded.created_at, updated_at = excluded.updated_at",
                (namespace, key, name, type or "unknown", now, now),
            )
            # Declared anew after a delete: what the memories say of it counts again. Not
            # when a memory written after the delete brought it back (adding observations
            # or relations to it, declaring it): the ones before stay out (pass e66).
            self._connection.execute(
                "DELETE FROM graph_entity_tombstones WHERE namespace = %s AND key_hash = %s",
                (namespace, entity_key_hash(key)),
            )
        else:
            self._connection.execute(
                "UPDATE graph_entities SET declared = TRUE, name = %s, type = %s,"
                " updated_at = %s WHERE id = %s",
                (
                    # Declared under the caller's spelling, never a memory's (forgetting
                    # that memory would leave its words as a declared name).
                    name,
                    type if type is not None else self._live_spelling(shown, now)[1],
                    now,
                    shown.id,
                ),
            )
        declared = self.find_entity(namespace, key, now)
        assert declared is not None
        return declared, True

    def _live_spelling(self, entity: EntityRecord, now: datetime) -> tuple[str, str]:
        """The name and type an extracted entity keeps when it is declared at ``now``: its
        own while a live memory still gives them, else those the purge will leave it (the
        rule of migration 24's trigger, over the live mentions only), so declaring never
        keeps what only an expired memory said."""
        live = f"FROM graph_mentions m WHERE m.entity_id = %(id)s AND m.seq NOT IN {EXPIRED}"
        row = self._connection.execute(
            f"SELECT CASE WHEN EXISTS (SELECT 1 {live} AND m.surface = %(name)s)"
            " THEN %(name)s::text"
            f" ELSE (SELECT m.surface {live} ORDER BY m.seq LIMIT 1) END,"
            f" CASE WHEN EXISTS (SELECT 1 {live} AND m.type = %(type)s) THEN %(type)s::text"
            f" ELSE coalesce((SELECT m.type {live} AND NOT (m.type = ANY(%(generic)s))"
            " ORDER BY m.seq LIMIT 1),"
            f" (SELECT m.type {live} ORDER BY m.seq LIMIT 1)) END",
            {
                "id": entity.id,
                "name": entity.name,
                "type": entity.type,
                "now": now,
                "generic": GENERIC,
            },
        ).fetchone()
        # Shown and not declared: a live memory mentions it.
        assert row is not None
        assert row[0] is not None
        assert row[1] is not None
        return str(row[0]), str(row[1])

    def link_observation(self, entity_id: int, seq: int) -> None:
        self._connection.execute(
            "INSERT INTO graph_observations(entity_id, seq) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (entity_id, seq),
        )

    def observations(
        self, entity_id: int, now: datetime | None, among: Sequence[str] | None = None
    ) -> list[tuple[int, str]]:
        rows = self._connection.execute(
            "SELECT m.seq, m.content FROM graph_observations o JOIN memories m ON m.seq = o.seq"
            " WHERE o.entity_id = %(id)s AND (%(now)s::timestamptz IS NULL"
            " OR m.expires_at IS NULL OR m.expires_at > %(now)s::timestamptz)"
            " AND (%(among)s::text[] IS NULL OR m.content = ANY(%(among)s::text[]))"
            " ORDER BY m.seq",
            {"id": entity_id, "now": now, "among": None if among is None else list(among)},
        ).fetchall()
        return [(int(seq), str(content)) for seq, content in rows]

    def observation_characters(self, entity_id: int) -> int:
        row = self._connection.execute(
            "SELECT coalesce(sum(length(m.content)), 0) FROM graph_observations o"
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = %s",
            (entity_id,),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def observed_by(self, seq: int) -> list[tuple[int, str]]:
        rows = self._connection.execute(
            "SELECT e.id, e.name FROM graph_observations o"
            " JOIN graph_entities e ON e.id = o.entity_id WHERE o.seq = %s ORDER BY e.id",
            (seq,),
        ).fetchall()
        return [(int(entity_id), str(name)) for entity_id, name in rows]

    def declare_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int, now: datetime
    ) -> bool:
        row = self._connection.execute(
            "SELECT id, declared FROM graph_relations"
            " WHERE subject_id = %s AND predicate = %s AND object_id = %s FOR UPDATE",
            (subject_id, predicate, object_id),
        ).fetchone()
        if row is not None:
            if row[1]:
                return False
            self._connection.execute(
                "UPDATE graph_relations SET declared = TRUE WHERE id = %s", (int(row[0]),)
            )
            return True
        created = self._connection.execute(
            "INSERT INTO graph_relations(namespace, subject_id, predicate, object_id, declared,"
            " created_at) VALUES (%s, %s, %s, %s, TRUE, %s)"
            " ON CONFLICT (subject_id, predicate, object_id) DO UPDATE SET declared = TRUE"
            " RETURNING (xmax = 0)",
            (namespace, subject_id, predicate, object_id, now),
        ).fetchone()
        return bool(created is not None)

    def delete_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int
    ) -> bool:
        cursor = self._connection.execute(
            "DELETE FROM graph_relations WHERE namespace = %s AND subject_id = %s"
            " AND predicate = %s AND object_id = %s",
            (namespace, subject_id, predicate, object_id),
        )
        return bool(cursor.rowcount)

    def delete_entity(self, entity_id: int) -> None:
        row = self._connection.execute(
            "DELETE FROM graph_entities WHERE id = %s RETURNING namespace, key,"
            " (SELECT coalesce(max(seq), 0) FROM memories)",
            (entity_id,),
        ).fetchone()
        if row is None and entity_id in self._found:
            # Found by this transaction, then deleted by another client's (the forget of
            # its last mention, whose orphan trigger removed it) before this DELETE: the
            # caller reports it deleted, so it is tombstoned all the same, or a memory
            # naming it whose extraction is still queued brought it back (adversarial
            # pass a68). A tombstone no memory needs is dropped at the end as ever.
            namespace, key = self._found[entity_id]
            [(newest,)] = self._connection.execute(
                "SELECT coalesce(max(seq), 0) FROM memories"
            ).fetchall()
            row = (namespace, key, newest)
        if row is not None:
            # Its tombstone, up to the memories written so far, at the transaction's end.
            self._tombstones.entity_deleted(str(row[0]), entity_key_hash(str(row[1])), int(row[2]))

    def retime_sources(self, seq: int) -> None:
        # The extraction writes the same value (complete_jobs reads at_utc at completion).
        self._connection.execute(
            "UPDATE graph_relation_sources SET at = (SELECT at_utc FROM memories WHERE seq = %s)"
            " WHERE seq = %s",
            (seq, seq),
        )

    def drop_extraction(self, seq: int) -> None:
        # The orphan triggers delete what is left with no mention or source: those rows
        # are taken first, in the order the extraction workers take them.
        lock_extraction_rows(self._connection, [seq])
        for table in ("graph_mentions", "graph_relation_sources", "graph_extracted"):
            self._connection.execute(f"DELETE FROM {table} WHERE seq = %s", (seq,))
