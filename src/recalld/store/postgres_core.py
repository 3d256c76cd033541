"""The PostgreSQL side of core memory: one row per (namespace, target), edited under a row lock.

A batch inserts the target's row if it is missing, locks it ``FOR UPDATE``,
lets the caller compute the new entries from what it read, and writes them
back, all in one transaction: concurrent batches from any number of servers
wait for each other on that row, so each is validated against the state it
replaces (the guarantee SQLite gets from ``BEGIN IMMEDIATE``). A trigger
(migration 4) notifies listeners of every change.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from psycopg.types.json import Jsonb

from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_scrub import record_drop

__all__ = ["PostgresCore"]

T = TypeVar("T")


class PostgresCore:
    """Core-memory persistence on the store's connection pool."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database

    def entries(self, namespace: str, target: str) -> list[str]:
        """The current entries of a target, in order."""
        rows = self._database.read(
            "SELECT entries FROM core_memory WHERE namespace = %s AND target = %s",
            (namespace, target),
        )
        return [] if not rows else [str(entry) for entry in rows[0][0]]

    def version(self, namespace: str) -> int:
        """A number that changes whenever any target of the namespace changes."""
        rows = self._database.read(
            "SELECT coalesce(sum(version), 0) FROM core_memory WHERE namespace = %s", (namespace,)
        )
        return int(rows[0][0])

    def edit(
        self,
        namespace: str,
        target: str,
        change: Callable[[list[str]], T],
        now: datetime,
    ) -> T:
        """Run ``change`` on the current entries under the target's row lock; store the result.

        ``change`` mutates the list it is given (or raises, which rolls back);
        its return value is passed through. An edit that drops text (remove,
        patch) records a pending scrub in the same transaction. It may run again if the database
        asks for a retry (a serialization failure), always on freshly read entries.
        """

        def step(connection: Connection) -> T:
            connection.execute(
                "INSERT INTO core_memory(namespace, target, entries, version, updated_at)"
                " VALUES (%s, %s, '[]', 0, %s) ON CONFLICT (namespace, target) DO NOTHING",
                (namespace, target, now),
            )
            row = connection.execute(
                "SELECT entries FROM core_memory WHERE namespace = %s AND target = %s FOR UPDATE",
                (namespace, target),
            ).fetchone()
            entries = [] if row is None else [str(entry) for entry in row[0]]
            before = list(entries)
            result = change(entries)
            if entries != before:
                connection.execute(
                    "UPDATE core_memory SET entries = %s, version = version + 1, updated_at = %s"
                    " WHERE namespace = %s AND target = %s",
                    (Jsonb(entries), now, namespace, target),
                )
                if set(before) - set(entries):
                    # Text left core memory: its old row version waits for VACUUM.
                    record_drop(connection, "core memory", now)
            return result

        return self._database.write(step)
