"""Whole-table reads and idempotent writes on SQLite (``store.tables``, for migrate)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from recalld._time import from_storage, to_storage
from recalld.store.sql import json_text
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.tables import ColumnKind, Table

__all__ = ["SQLiteTables"]


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
        sql = (
            f"INSERT INTO {table.name}({names}) SELECT {marks}"
            f" WHERE NOT EXISTS (SELECT 1 FROM {table.name} WHERE {match})"
        )
        values = [
            (
                *(_dump(column.kind, row[column.name]) for column in columns),
                *(_dump(table.column(name).kind, row[name]) for name in table.identity),
            )
            for row in rows
        ]

        def step(connection: apsw.Connection) -> int:
            before = connection.total_changes()
            connection.executemany(sql, values)
            return int(connection.total_changes() - before)

        return self._database.write(step)

    def analyze(self) -> None:
        """``ANALYZE`` every table (SQLite's planner statistics)."""
        self._database.run(lambda connection: connection.execute("ANALYZE"))
