"""Whole-table reads and idempotent writes on PostgreSQL (``store.tables``, for migrate)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
from pgvector import HalfVector
from psycopg.types.json import Jsonb

from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_scrub import record_drop
from recalld.store.semantic import VECTOR_BYTES, VECTOR_DTYPE
from recalld.store.tables import GRAPH_LEDGERS, ColumnKind, GraphKind, Table

__all__ = ["PostgresLedger", "PostgresTables"]

# (model, dimension) -> make sure that model's HNSW index exists
EnsureIndex = Callable[[str, int], None]
# The session advisory lock one copy into this database holds (hashed to its key).
COPY_LOCK = "recalld migrate --to"
# Columns named differently here than in the neutral description (SQLite's names).
RENAMED = {("vectors", "vector"): "embedding"}


def _name(table: Table, column: str) -> str:
    return RENAMED.get((table.name, column), column)


def _load(kind: ColumnKind, value: Any) -> Any:
    if value is None:
        return None
    if kind == "vector":
        return bytes(value.to_numpy().astype(VECTOR_DTYPE).tobytes())
    if kind == "blob":
        return bytes(value)
    if kind == "boolean":
        return bool(value)
    return value


def _dump(kind: ColumnKind, value: Any) -> Any:
    if value is None:
        return None
    if kind == "json":
        return Jsonb(value)
    if kind == "vector":
        return HalfVector(np.frombuffer(value, dtype=VECTOR_DTYPE))
    if kind == "boolean":
        return bool(value)
    return value


class PostgresTables:
    """Copy access to every table of one PostgreSQL database."""

    def __init__(self, database: PostgresDatabase, ensure_index: EnsureIndex) -> None:
        self._database = database
        self._ensure_index = ensure_index

    @contextmanager
    def copy_lock(self, waiting: Callable[[], None]) -> Iterator[None]:
        """See :meth:`TableAccess.copy_lock`: a session advisory lock, held on a connection
        of its own (not the pool's: a pool of one serves the copy) for the block, and
        released by closing it (the server also releases it if the session drops). The
        session waits and idles as long as the first copy takes: the database's
        ``statement_timeout``, ``lock_timeout``, ``idle_session_timeout`` and
        ``transaction_timeout`` (managed servers set them) are off for it."""
        key = "hashtextextended(%s, 0)"
        with self._database.connect() as connection:
            # pg_settings: transaction_timeout is PostgreSQL 17's (the wait is one).
            connection.execute(
                "SELECT set_config(name, '0', false) FROM pg_settings WHERE name IN"
                " ('statement_timeout', 'lock_timeout', 'idle_session_timeout',"
                " 'transaction_timeout')"
            )
            row = connection.execute(f"SELECT pg_try_advisory_lock({key})", (COPY_LOCK,))
            if not row.fetchone()[0]:  # type: ignore[index]
                waiting()
                connection.execute(f"SELECT pg_advisory_lock({key})", (COPY_LOCK,))
            yield

    def count(self, table: Table) -> int:
        """How many rows the table holds."""
        return int(self._database.read(f"SELECT count(*) FROM {table.name}")[0][0])

    def read(self, table: Table, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Rows in ``table.order`` after ``after``."""
        names = ", ".join(_name(table, column.name) for column in table.columns)
        order = ", ".join(_name(table, name) for name in table.order)
        params: list[Any] = []
        where = ""
        if after is not None:
            where = f" WHERE ({order}) > ({', '.join('%s' for _ in table.order)})"
            params += [
                _dump(table.column(name).kind, value)
                for name, value in zip(table.order, after, strict=True)
            ]
        rows = self._database.read(
            f"SELECT {names} FROM {table.name}{where} ORDER BY {order} LIMIT %s",
            (*params, limit),
        )
        return [
            {
                column.name: _load(column.kind, value)
                for column, value in zip(table.columns, row, strict=True)
            }
            for row in rows
        ]

    def write(self, table: Table, rows: Sequence[dict[str, Any]]) -> int:
        """Insert the rows not present yet (by ``table.identity``), in one transaction."""
        if not rows:
            return 0
        columns = list(table.written)
        extra: list[str] = []
        if table.name == "vectors":
            extra = ["dimension"]
            for model, dimension in sorted(
                {(row["model"], len(row["vector"]) // VECTOR_BYTES) for row in rows}
            ):
                self._ensure_index(model, dimension)
        names = ", ".join([_name(table, column.name) for column in columns] + extra)
        marks = ", ".join("%s" for _ in range(len(columns) + len(extra)))
        match = " AND ".join(f"{_name(table, name)} = %s" for name in table.identity)
        sql = (
            f"INSERT INTO {table.name}({names}) SELECT {marks}"
            f" WHERE NOT EXISTS (SELECT 1 FROM {table.name} WHERE {match})"
        )
        values = []
        for row in rows:
            written = [_dump(column.kind, row[column.name]) for column in columns]
            if extra:
                written.append(len(row["vector"]) // VECTOR_BYTES)
            identity = [_dump(table.column(name).kind, row[name]) for name in table.identity]
            values.append((*written, *identity))

        def step(connection: Connection) -> int:
            inserted = 0
            with connection.cursor() as cursor:
                for value in values:
                    cursor.execute(sql, value)
                    inserted += max(cursor.rowcount, 0)
            return inserted

        return self._database.write(step)

    def overwrite(self, table: Table, rows: Sequence[dict[str, Any]]) -> int:
        """Give the rows whose ``identity`` is present the other columns' values, in one
        transaction; returns how many rows were updated (a row already holding them is
        not written)."""
        if not rows:
            return 0
        changed = [column for column in table.written if column.name not in table.identity]
        assignments = ", ".join(f"{_name(table, column.name)} = %s" for column in changed)
        match = " AND ".join(f"{_name(table, name)} = %s" for name in table.identity)
        same = " AND ".join(
            f"{_name(table, column.name)} IS NOT DISTINCT FROM %s" for column in changed
        )
        sql = f"UPDATE {table.name} SET {assignments} WHERE {match} AND NOT ({same})"
        values = []
        for row in rows:
            written = [_dump(column.kind, row[column.name]) for column in changed]
            identity = [_dump(table.column(name).kind, row[name]) for name in table.identity]
            values.append((*written, *identity, *written))

        def step(connection: Connection) -> int:
            updated = 0
            with connection.cursor() as cursor:
                for value in values:
                    cursor.execute(sql, value)
                    updated += max(cursor.rowcount, 0)
            return updated

        return self._database.write(step)

    def migrated(self, origin: str) -> list[tuple[int, str, str]]:
        """(seq, namespace, id) of each memory a migrate from ``origin`` wrote here."""
        rows = self._database.read(
            "SELECT l.seq, m.namespace, m.id FROM migrated_memories l"
            " JOIN memories m ON m.seq = l.seq WHERE l.origin = %s ORDER BY l.seq",
            (origin,),
        )
        return [(int(seq), str(namespace), str(id)) for seq, namespace, id in rows]

    def migrated_core(self, origin: str) -> set[tuple[str, str]]:
        """(namespace, target) of each core memory row a migrate from ``origin`` wrote here."""
        rows = self._database.read(
            "SELECT namespace, target FROM migrated_core WHERE origin = %s", (origin,)
        )
        return {(str(namespace), str(target)) for namespace, target in rows}

    def mark_core(self, origin: str, rows: Sequence[tuple[str, str]]) -> None:
        """Record that a migrate from ``origin`` wrote these (namespace, target) rows."""
        if not rows:
            return
        values = [(namespace, target, origin) for namespace, target in rows]

        def step(connection: Connection) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO migrated_core(namespace, target, origin) VALUES (%s, %s, %s)"
                    " ON CONFLICT (namespace, target) DO UPDATE SET origin = excluded.origin",
                    values,
                )

        self._database.write(step)

    def migrated_graph(self, origin: str, kind: GraphKind) -> set[int]:
        """See :meth:`TableAccess.migrated_graph`."""
        _, ledger = GRAPH_LEDGERS[kind]
        rows = self._database.read(f"SELECT id FROM {ledger} WHERE origin = %s", (origin,))
        return {int(id) for (id,) in rows}

    def mark_graph(self, origin: str, kind: GraphKind, ids: Sequence[int]) -> None:
        """See :meth:`TableAccess.mark_graph`."""
        if not ids:
            return
        _, ledger = GRAPH_LEDGERS[kind]

        def step(connection: Connection) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {ledger}(id, origin) VALUES (%s, %s)"
                    " ON CONFLICT (id) DO UPDATE SET origin = excluded.origin",
                    [(id, origin) for id in ids],
                )

        self._database.write(step)

    def delete_graph(self, kind: GraphKind, ids: Sequence[int], reason: str, now: datetime) -> int:
        """See :meth:`TableAccess.delete_graph`."""
        if not ids:
            return 0
        table, _ = GRAPH_LEDGERS[kind]

        def step(connection: Connection) -> int:
            with connection.cursor() as cursor:
                cursor.execute(f"DELETE FROM {table} WHERE id = ANY(%s)", (list(ids),))
                deleted = max(cursor.rowcount, 0)
            if deleted:
                record_drop(connection, reason, now)
            return deleted

        return self._database.write(step)

    def drop_orphans(self, reason: str, now: datetime) -> int:
        """See :meth:`TableAccess.drop_orphans`."""

        def step(connection: Connection) -> int:
            deleted = 0
            with connection.cursor() as cursor:
                for sql in ORPHANS:
                    cursor.execute(sql)
                    deleted += max(cursor.rowcount, 0)
            if deleted:
                record_drop(connection, reason, now)
            return deleted

        return self._database.write(step)

    def analyze(self) -> None:
        """``ANALYZE`` the database (outside any transaction)."""
        with self._database.connection() as connection:
            connection.execute("ANALYZE")


# Relations first, then the entities nothing refers to any more (as on SQLite).
ORPHANS = (
    "DELETE FROM graph_relations r WHERE NOT r.declared AND NOT EXISTS"
    " (SELECT 1 FROM graph_relation_sources s WHERE s.relation_id = r.id)",
    "DELETE FROM graph_entities e WHERE NOT e.declared"
    " AND NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM graph_observations o WHERE o.entity_id = e.id)"
    " AND NOT EXISTS (SELECT 1 FROM graph_relations r WHERE r.subject_id = e.id"
    " OR r.object_id = e.id)",
)


class PostgresLedger:
    """The migrate ledger's write inside a memory transaction (the store's transaction
    class mixes it in, so that a copied memory and its ledger row commit together)."""

    _connection: Connection

    def mark_migrated(self, seq: int, origin: str) -> None:
        """Record that a migrate from ``origin`` wrote memory ``seq``."""
        self._connection.execute(
            "INSERT INTO migrated_memories(seq, origin) VALUES (%s, %s)"
            " ON CONFLICT (seq) DO UPDATE SET origin = excluded.origin",
            (seq, origin),
        )
