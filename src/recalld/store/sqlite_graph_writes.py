"""The SQLite graph writes inside a memory write transaction: the knowledge tools'
entities, observations and relations, and dropping what a memory's old text said.

The row shapes and the "shown" rule come from :mod:`recalld.store.sqlite_graph`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import apsw

from recalld._time import to_storage
from recalld.graph.names import entity_key
from recalld.store.graph import LONE_TOMBSTONE, EntityRecord, entity_key_hash
from recalld.store.sqlite_graph import (
    EXPIRED,
    GENERIC_SQL,
    LIVE_ENTITY_COLUMNS,
    _entity,
    _shown,
)

__all__ = ["SQLiteGraphTransaction"]


class SQLiteGraphTransaction:
    """:class:`recalld.store.graph.GraphTransaction` on a connection inside ``BEGIN IMMEDIATE``."""

    def __init__(self, connection: apsw.Connection) -> None:
        self._connection = connection

    def lock_entities(self, namespace: str, keys: Iterable[str]) -> None:
        pass  # the write transaction holds off every other writer of the database already

    def find_entity(self, namespace: str, key: str, now: datetime) -> EntityRecord | None:
        row = self._connection.execute(
            f"SELECT {LIVE_ENTITY_COLUMNS} FROM graph_entities e"
            f" WHERE e.namespace = :namespace AND e.key = :key AND {_shown('e')}",
            {"namespace": namespace, "key": key, "now": to_storage(now)},
        ).fetchone()
        return None if row is None else _entity(row)

    def declare_entity(
        self, namespace: str, name: str, type: str | None, now: datetime
    ) -> tuple[EntityRecord, bool]:
        stamp = to_storage(now)
        key = entity_key(name)
        shown = self.find_entity(namespace, key, now)
        if shown is not None and shown.declared:
            return shown, False
        if shown is None:
            # Never seen, or known only from expired memories (hidden from every read and
            # gone at the purge): declared as given, as a new entity.
            self._connection.execute(
                "INSERT INTO graph_entities(namespace, key, name, type, declared, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, 1, ?, ?) ON CONFLICT(namespace, key)"
                " DO UPDATE SET declared = 1, name = excluded.name, type = excluded.type,"
                " created_at = excluded.created_at, updated_at = excluded.updated_at",
                (namespace, key, name, type or "unknown", stamp, stamp),
            )
            # Declared anew after a delete: what the memories say of it counts again. Not
            # when a memory written after the delete brought it back (adding observations
            # or relations to it, declaring it): the ones before stay out (pass e66).
            self._connection.execute(
                "DELETE FROM graph_entity_tombstones WHERE namespace = ? AND key_hash = ?",
                (namespace, entity_key_hash(key)),
            )
        else:
            self._connection.execute(
                "UPDATE graph_entities SET declared = 1, name = ?, type = ?, updated_at = ?"
                " WHERE id = ?",
                (
                    # Declared under the caller's spelling, never a memory's (forgetting
                    # that memory would leave its words as a declared name).
                    name,
                    type if type is not None else self._live_spelling(shown, now)[1],
                    stamp,
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
        live = f"FROM graph_mentions m WHERE m.entity_id = :id AND m.seq NOT IN {EXPIRED}"
        row = self._connection.execute(
            f"SELECT CASE WHEN EXISTS (SELECT 1 {live} AND m.surface = :name) THEN :name"
            f" ELSE (SELECT m.surface {live} ORDER BY m.seq LIMIT 1) END,"
            f" CASE WHEN EXISTS (SELECT 1 {live} AND m.type = :type) THEN :type"
            f" ELSE coalesce((SELECT m.type {live} AND m.type NOT IN {GENERIC_SQL}"
            " ORDER BY m.seq LIMIT 1),"
            f" (SELECT m.type {live} ORDER BY m.seq LIMIT 1)) END",
            {"id": entity.id, "name": entity.name, "type": entity.type, "now": to_storage(now)},
        ).fetchone()
        # Shown and not declared: a live memory mentions it.
        assert row is not None
        assert row[0] is not None
        assert row[1] is not None
        return str(row[0]), str(row[1])

    def link_observation(self, entity_id: int, seq: int) -> None:
        self._connection.execute(
            "INSERT OR IGNORE INTO graph_observations(entity_id, seq) VALUES (?, ?)",
            (entity_id, seq),
        )

    def observations(
        self, entity_id: int, now: datetime | None, among: Sequence[str] | None = None
    ) -> list[tuple[int, str]]:
        rows: list[tuple[Any, ...]] = self._connection.execute(
            "SELECT m.seq, m.content FROM graph_observations o JOIN memories m ON m.seq = o.seq"
            " WHERE o.entity_id = :id AND (:now IS NULL OR m.expires_at IS NULL"
            " OR m.expires_at > :now) AND (:among IS NULL"
            " OR m.content IN (SELECT value FROM json_each(:among))) ORDER BY m.seq",
            {
                "id": entity_id,
                "now": None if now is None else to_storage(now),
                "among": None if among is None else json.dumps(list(among)),
            },
        ).fetchall()
        return [(int(seq), str(content)) for seq, content in rows]

    def observation_characters(self, entity_id: int) -> int:
        row = self._connection.execute(
            "SELECT coalesce(sum(length(m.content)), 0) FROM graph_observations o"
            " JOIN memories m ON m.seq = o.seq WHERE o.entity_id = ?",
            (entity_id,),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def observed_by(self, seq: int) -> list[tuple[int, str]]:
        rows: list[tuple[Any, ...]] = self._connection.execute(
            "SELECT e.id, e.name FROM graph_observations o"
            " JOIN graph_entities e ON e.id = o.entity_id WHERE o.seq = ? ORDER BY e.id",
            (seq,),
        ).fetchall()
        return [(int(entity_id), str(name)) for entity_id, name in rows]

    def declare_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int, now: datetime
    ) -> bool:
        row = self._connection.execute(
            "SELECT id, declared FROM graph_relations"
            " WHERE subject_id = ? AND predicate = ? AND object_id = ?",
            (subject_id, predicate, object_id),
        ).fetchone()
        if row is not None:
            if row[1]:
                return False
            self._connection.execute(
                "UPDATE graph_relations SET declared = 1 WHERE id = ?", (int(row[0]),)
            )
            return True
        self._connection.execute(
            "INSERT INTO graph_relations(namespace, subject_id, predicate, object_id, declared,"
            " created_at) VALUES (?, ?, ?, ?, 1, ?)",
            (namespace, subject_id, predicate, object_id, to_storage(now)),
        )
        return True

    def delete_relation(
        self, namespace: str, subject_id: int, predicate: str, object_id: int
    ) -> bool:
        self._connection.execute(
            "DELETE FROM graph_relations WHERE namespace = ? AND subject_id = ? AND predicate = ?"
            " AND object_id = ?",
            (namespace, subject_id, predicate, object_id),
        )
        return bool(self._connection.changes())

    def delete_entity(self, entity_id: int) -> None:
        row = self._connection.execute(
            "SELECT namespace, key FROM graph_entities WHERE id = ?", (entity_id,)
        ).fetchone()
        if row is not None:
            # The memories written so far stay: their extraction must not bring it back.
            self._connection.execute(
                "INSERT INTO graph_entity_tombstones(namespace, key_hash, up_to_seq)"
                " VALUES (?, ?, (SELECT coalesce(max(seq), 0) FROM memories))"
                " ON CONFLICT(namespace, key_hash) DO UPDATE SET up_to_seq = excluded.up_to_seq",
                (row[0], entity_key_hash(str(row[1]))),
            )
            # Unless none is left (its observations were its only memories, forgotten
            # with it): the hash would outlive every memory it protects against.
            self._connection.execute(
                LONE_TOMBSTONE,
                {"namespace": str(row[0]), "key_hash": entity_key_hash(str(row[1]))},
            )
        self._connection.execute("DELETE FROM graph_entities WHERE id = ?", (entity_id,))

    def retime_sources(self, seq: int) -> None:
        # The extraction writes the same value (complete_jobs reads at_utc at completion).
        self._connection.execute(
            "UPDATE graph_relation_sources SET at = (SELECT at_utc FROM memories WHERE seq = ?)"
            " WHERE seq = ?",
            (seq, seq),
        )

    def drop_extraction(self, seq: int) -> None:
        # The orphan triggers (migration 12) delete what is left with no mention or source.
        for table in ("graph_mentions", "graph_relation_sources", "graph_extracted"):
            self._connection.execute(f"DELETE FROM {table} WHERE seq = ?", (seq,))
