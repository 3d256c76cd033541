"""Whole-table reads and idempotent writes on SQLite (``store.tables``, for migrate)."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import apsw

from recalld._time import from_storage, to_storage
from recalld.errors import StorageError
from recalld.store.file_modes import mode_beside
from recalld.store.sql import json_text
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_scrub import record_drop
from recalld.store.tables import GRAPH_LEDGERS, ColumnKind, GraphKind, Table

__all__ = ["SQLiteLedger", "SQLiteTables"]


def _load(kind: ColumnKind, value: Any) -> Any:
    if value is None:
        return None
    if kind == "instant":
        return from_storage(str(value))
    if kind == "json":
        return json.loads(value)
    if kind == "boolean":
        return bool(value)
    if kind in ("blob", "vector"):
        return bytes(value)
    return value


def _dump(kind: ColumnKind, value: Any) -> Any:
    if value is None:
        return None
    if kind == "instant":
        return to_storage(value)
    if kind == "json":
        return json_text(value)
    if kind == "boolean":
        return int(bool(value))
    return value


class SQLiteTables:
    """Copy access to every table of one SQLite database."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database

    @contextmanager
    def copy_lock(self, waiting: Callable[[], None]) -> Iterator[None]:
        """See :meth:`TableAccess.copy_lock`: ``flock`` on ``<db>-migrate.lock`` beside the
        database (left there: removing a lock file races with its next holder). Not on
        the database file itself: NFS emulates ``flock`` with ``fcntl`` locks, which are
        SQLite's own. A private database (``:memory:``) has no other writer."""
        if self._database.private:
            yield
            return
        # By the file's real path: a symlink to the database is the same database.
        path = f"{os.path.realpath(self._database.path)}-migrate.lock"
        try:
            descriptor = os.open(
                path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, mode_beside(self._database.path)
            )
        except PermissionError:
            try:  # flock works on a file opened for reading (another user's lock file)
                descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as error:
                raise StorageError(
                    f"cannot open the copy lock {path}: {error} (migrate creates it beside"
                    " the target database: its directory must be writable)"
                ) from error
        except OSError as error:
            raise StorageError(f"cannot open the copy lock {path}: {error}") from error
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                waiting()
                fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # which releases the lock

    def count(self, table: Table) -> int:
        """How many rows the table holds."""
        return int(self._database.read(f"SELECT count(*) FROM {table.name}")[0][0])

    def read(self, table: Table, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Rows in ``table.order`` after ``after``."""
        names = ", ".join(column.name for column in table.columns)
        order = ", ".join(table.order)
        params: list[Any] = []
        where = ""
        if after is not None:
            where = f" WHERE ({order}) > ({', '.join('?' for _ in table.order)})"
            params += [
                _dump(table.column(name).kind, value)
                for name, value in zip(table.order, after, strict=True)
            ]
        rows = self._database.read(
            f"SELECT {names} FROM {table.name}{where} ORDER BY {order} LIMIT ?",
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
        columns = table.written
        names = ", ".join(column.name for column in columns)
        marks = ", ".join("?" for _ in columns)
        match = " AND ".join(f"{name} = ?" for name in table.identity)
        present = f"SELECT 1 FROM {table.name} WHERE {match} LIMIT 1"
        insert = f"INSERT INTO {table.name}({names}) VALUES ({marks})"
        values = [
            (
                tuple(_dump(column.kind, row[column.name]) for column in columns),
                tuple(_dump(table.column(name).kind, row[name]) for name in table.identity),
            )
            for row in rows
        ]

        def step(connection: apsw.Connection) -> int:
            # Counted row by row: the statement's own change count is 0 for a view (vectors
            # is one, written by its INSTEAD OF trigger), and total_changes() also counts
            # what triggers write (the vector change log).
            inserted = 0
            for written, identity in values:
                if connection.execute(present, identity).fetchone() is None:
                    connection.execute(insert, written)
                    inserted += 1
            return inserted

        return self._database.write(step)

    def overwrite(self, table: Table, rows: Sequence[dict[str, Any]]) -> int:
        """Give the rows whose ``identity`` is present the other columns' values, in one
        transaction; returns how many rows were updated (a row already holding them is
        not written)."""
        if not rows:
            return 0
        changed = [column for column in table.written if column.name not in table.identity]
        assignments = ", ".join(f"{column.name} = ?" for column in changed)
        match = " AND ".join(f"{name} = ?" for name in table.identity)
        same = " AND ".join(f"{column.name} IS ?" for column in changed)
        sql = f"UPDATE {table.name} SET {assignments} WHERE {match} AND NOT ({same})"
        values = []
        for row in rows:
            written = [_dump(column.kind, row[column.name]) for column in changed]
            identity = [_dump(table.column(name).kind, row[name]) for name in table.identity]
            values.append((*written, *identity, *written))

        def step(connection: apsw.Connection) -> int:
            updated = 0
            for value in values:
                connection.execute(sql, value)
                updated += connection.changes()
            return updated

        return self._database.write(step)

    def migrated(self, origin: str) -> list[tuple[int, str, str]]:
        """(seq, namespace, id) of each memory a migrate from ``origin`` wrote here."""
        rows = self._database.read(
            "SELECT l.seq, m.namespace, m.id FROM migrated_memories l"
            " JOIN memories m ON m.seq = l.seq WHERE l.origin = ? ORDER BY l.seq",
            (origin,),
        )
        return [(int(seq), str(namespace), str(id)) for seq, namespace, id in rows]

    def migrated_core(self, origin: str) -> set[tuple[str, str]]:
        """(namespace, target) of each core memory row a migrate from ``origin`` wrote here."""
        rows = self._database.read(
            "SELECT namespace, target FROM migrated_core WHERE origin = ?", (origin,)
        )
        return {(str(namespace), str(target)) for namespace, target in rows}

    def mark_core(self, origin: str, rows: Sequence[tuple[str, str]]) -> None:
        """Record that a migrate from ``origin`` wrote these (namespace, target) rows."""
        if not rows:
            return
        values = [(namespace, target, origin) for namespace, target in rows]

        def step(connection: apsw.Connection) -> None:
            connection.executemany(
                "INSERT INTO migrated_core(namespace, target, origin) VALUES (?, ?, ?)"
                " ON CONFLICT(namespace, target) DO UPDATE SET origin = excluded.origin",
                values,
            )

        self._database.write(step)

    def migrated_graph(self, origin: str, kind: GraphKind) -> set[int]:
        """See :meth:`TableAccess.migrated_graph`."""
        _, ledger = GRAPH_LEDGERS[kind]
        rows = self._database.read(f"SELECT id FROM {ledger} WHERE origin = ?", (origin,))
        return {int(id) for (id,) in rows}

    def mark_graph(self, origin: str, kind: GraphKind, ids: Sequence[int]) -> None:
        """See :meth:`TableAccess.mark_graph`."""
        if not ids:
            return
        _, ledger = GRAPH_LEDGERS[kind]

        def step(connection: apsw.Connection) -> None:
            connection.executemany(
                f"INSERT INTO {ledger}(id, origin) VALUES (?, ?)"
                " ON CONFLICT(id) DO UPDATE SET origin = excluded.origin",
                [(id, origin) for id in ids],
            )

        self._database.write(step)

    def delete_graph(self, kind: GraphKind, ids: Sequence[int], reason: str, now: datetime) -> int:
        """See :meth:`TableAccess.delete_graph`."""
        if not ids:
            return 0
        table, _ = GRAPH_LEDGERS[kind]

        def step(connection: apsw.Connection) -> int:
            deleted = 0
            for id in ids:
                connection.execute(f"DELETE FROM {table} WHERE id = ?", (id,))
                deleted += connection.changes()
            if deleted:
                record_drop(connection, reason, now)
            return deleted

        return self._database.write(step)

    def drop_orphans(self, reason: str, now: datetime) -> int:
        """See :meth:`TableAccess.drop_orphans`."""

        def step(connection: apsw.Connection) -> int:
            deleted = 0
            for sql in ORPHANS:
                deleted += len(connection.execute(sql).fetchall())
            if deleted:
                record_drop(connection, reason, now)
            return deleted

        return self._database.write(step)

    def analyze(self) -> None:
        """``ANALYZE`` every table (SQLite's planner statistics)."""
        self._database.run(lambda connection: connection.execute("ANALYZE"))


# Relations first, then the entities nothing refers to any more: no mention, no
# observation, no relation (a declared relation or observation keeps its entity, as
# cascades would not).
ORPHANS = (
    "DELETE FROM graph_relations WHERE declared = 0 AND NOT EXISTS (SELECT 1 FROM"
    " graph_relation_sources s WHERE s.relation_id = graph_relations.id) RETURNING id",
    "DELETE FROM graph_entities WHERE declared = 0"
    " AND NOT EXISTS (SELECT 1 FROM graph_mentions m WHERE m.entity_id = graph_entities.id)"
    " AND NOT EXISTS (SELECT 1 FROM graph_observations o WHERE o.entity_id = graph_entities.id)"
    " AND NOT EXISTS (SELECT 1 FROM graph_relations r WHERE r.subject_id = graph_entities.id"
    " OR r.object_id = graph_entities.id) RETURNING id",
)


class SQLiteLedger:
    """The migrate ledger's write inside a memory transaction (the store's transaction
    class mixes it in, so that a copied memory and its ledger row commit together)."""

    _connection: apsw.Connection

    def mark_migrated(self, seq: int, origin: str) -> None:
        """Record that a migrate from ``origin`` wrote memory ``seq``."""
        self._connection.execute(
            "INSERT INTO migrated_memories(seq, origin) VALUES (?, ?)"
            " ON CONFLICT(seq) DO UPDATE SET origin = excluded.origin",
            (seq, origin),
        )
