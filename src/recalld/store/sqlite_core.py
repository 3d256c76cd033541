"""The SQLite side of core memory: one row per (namespace, target) with its ordered entries.

Every batch runs inside one ``BEGIN IMMEDIATE`` transaction that reads the
current entries, lets the caller compute the new list, and writes it back, so
concurrent batches from any number of processes are serialised and each is
validated against the state it actually replaces.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

import apsw

from recalld._time import to_storage
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_scrub import record_drop

__all__ = ["SQLiteCore"]

T = TypeVar("T")


def _entries(connection: apsw.Connection, namespace: str, target: str) -> list[str]:
    row = connection.execute(
        "SELECT entries FROM core_memory WHERE namespace = ? AND target = ?", (namespace, target)
    ).fetchone()
    return [] if row is None else list(json.loads(row[0]))


class SQLiteCore:
    """Core-memory persistence on the store's connections."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database

    def entries(self, namespace: str, target: str) -> list[str]:
        """The current entries of a target, in order."""
        rows = self._database.read(
            "SELECT entries FROM core_memory WHERE namespace = ? AND target = ?",
            (namespace, target),
        )
        return [] if not rows else list(json.loads(rows[0][0]))

    def version(self, namespace: str) -> int:
        """A number that changes whenever any target of the namespace changes."""
        rows = self._database.read(
            "SELECT coalesce(sum(version), 0) FROM core_memory WHERE namespace = ?", (namespace,)
        )
        return int(rows[0][0])

    def edit(
        self,
        namespace: str,
        target: str,
        change: Callable[[list[str]], T],
        now: datetime,
    ) -> T:
        """Run ``change`` on the current entries under the write lock and store what it leaves.

        ``change`` mutates the list it is given (or raises, which rolls back);
        its return value is passed through. An edit that drops text (remove,
        patch) records a pending scrub in the same transaction.
        """

        def step(connection: apsw.Connection) -> T:
            entries = _entries(connection, namespace, target)
            before = list(entries)
            result = change(entries)
            if entries != before:
                connection.execute(
                    "INSERT INTO core_memory(namespace, target, entries, version, updated_at)"
                    " VALUES (?, ?, ?, 1, ?) ON CONFLICT(namespace, target) DO UPDATE SET"
                    " entries = excluded.entries, version = version + 1,"
                    " updated_at = excluded.updated_at",
                    (
                        namespace,
                        target,
                        json.dumps(entries, ensure_ascii=False),
                        to_storage(now),
                    ),
                )
                if set(before) - set(entries):
                    record_drop(connection, "core memory", now)
            return result

        return self._database.write(step)
