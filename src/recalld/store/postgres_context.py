"""The PostgreSQL side of involuntary recall: signal features, trigger history, the pending queue.

As on SQLite, every table references ``memories(seq)`` with ``ON DELETE
CASCADE``. Firing takes a transaction-scoped advisory lock per candidate memory
(in seq order) before its habituation check, so two servers sensing at once
cannot both fire the same memory; draining deletes the oldest queued items
``FOR UPDATE SKIP LOCKED`` and returns what it deleted, so two consumers on any
servers never receive the same item. A trigger (migration 5) notifies listeners
whenever a queue gains or loses an item.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from recalld._text import prompt_line
from recalld.model import Memory
from recalld.store.context import PendingRow
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_rows import SELECT_COLUMNS, local_instant, row_to_memory

__all__ = ["PostgresContext", "save_signals"]

ALIVE = "(m.expires_at IS NULL OR m.expires_at > %(now)s)"
PENDING_COLUMNS = "p.id, p.score, p.channels, p.prompt_line, p.fired_at, p.kind, p.details"


def save_signals(
    connection: Connection,
    seq: int,
    features: dict[str, bytes],
    biometrics: dict[str, float],
) -> None:
    """Store a memory's derived features and readings inside the caller's transaction."""
    connection.execute("DELETE FROM memory_signals WHERE seq = %s", (seq,))
    connection.execute("DELETE FROM memory_biometrics WHERE seq = %s", (seq,))
    with connection.cursor() as cursor:
        if features:
            cursor.executemany(
                "INSERT INTO memory_signals(seq, channel, features) VALUES (%s, %s, %s)",
                [(seq, channel, data) for channel, data in features.items()],
            )
        if biometrics:
            cursor.executemany(
                "INSERT INTO memory_biometrics(seq, name, value) VALUES (%s, %s, %s)",
                [(seq, name, value) for name, value in biometrics.items()],
            )


def _pending(row: Sequence[Any], memory: Memory) -> PendingRow:
    return PendingRow(
        id=int(row[0]),
        score=float(row[1]),
        channels=dict(row[2]),
        prompt_line=str(row[3]),
        fired_at=row[4],
        kind=str(row[5]),
        details=None if row[6] is None else dict(row[6]),
        memory=memory,
    )


class PostgresContext:
    """Context-recall persistence on the store's connection pool."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database

    # -- features ----------------------------------------------------------

    def biometrics(self, seqs: Sequence[int]) -> dict[int, dict[str, float]]:
        """The stored readings of the given memories, by seq and name."""
        if not seqs:
            return {}
        rows = self._database.read(
            "SELECT seq, name, value FROM memory_biometrics WHERE seq = ANY(%s)",
            ([int(seq) for seq in seqs],),
        )
        found: dict[int, dict[str, float]] = {}
        for seq, name, value in rows:
            found.setdefault(int(seq), {})[str(name)] = float(value)
        return found

    def biometric_rows(
        self, namespace: str, names: Sequence[str], now: datetime
    ) -> list[tuple[int, str, float]]:
        """(seq, name, value) of every live memory's reading among ``names``."""
        rows = self._database.read(
            "SELECT b.seq, b.name, b.value FROM memory_biometrics b"
            " JOIN memories m ON m.seq = b.seq"
            f" WHERE b.name = ANY(%(names)s) AND m.namespace = %(ns)s AND {ALIVE}",
            {"names": list(names), "ns": namespace, "now": now},
        )
        return [(int(seq), str(name), float(value)) for seq, name, value in rows]

    def nearest_readings(
        self,
        namespace: str,
        name: str,
        low: float,
        value: float,
        high: float,
        now: datetime,
        limit: int,
    ) -> list[int]:
        """Two range scans of the ``(name, value)`` index outward from ``value``."""
        params = {
            "name": name,
            "low": low,
            "value": value,
            "high": high,
            "ns": namespace,
            "now": now,
            "limit": limit,
        }
        found: list[int] = []
        for bounds, order in (
            ("b.value >= %(value)s AND b.value <= %(high)s", "ASC"),
            ("b.value < %(value)s AND b.value >= %(low)s", "DESC"),
        ):
            rows = self._database.read(
                "SELECT b.seq FROM memory_biometrics b JOIN memories m ON m.seq = b.seq"
                f" WHERE b.name = %(name)s AND {bounds} AND m.namespace = %(ns)s AND {ALIVE}"
                f" ORDER BY b.value {order} LIMIT %(limit)s",
                params,
            )
            found.extend(int(row[0]) for row in rows)
        return found

    def signals(self, seqs: Sequence[int]) -> dict[int, dict[str, bytes]]:
        """The stored features of the given memories, by seq and channel."""
        if not seqs:
            return {}
        rows = self._database.read(
            "SELECT seq, channel, features FROM memory_signals WHERE seq = ANY(%s)",
            ([int(seq) for seq in seqs],),
        )
        found: dict[int, dict[str, bytes]] = {}
        for seq, channel, data in rows:
            found.setdefault(int(seq), {})[str(channel)] = bytes(data)
        return found

    def with_channel(self, namespace: str, channel: str, now: datetime) -> list[tuple[int, bytes]]:
        """(seq, features) of every live memory in the namespace that has this channel."""
        rows = self._database.read(
            "SELECT s.seq, s.features FROM memory_signals s JOIN memories m ON m.seq = s.seq"
            f" WHERE s.channel = %(channel)s AND m.namespace = %(ns)s AND {ALIVE}",
            {"channel": channel, "ns": namespace, "now": now},
        )
        return [(int(seq), bytes(data)) for seq, data in rows]

    # -- candidates ----------------------------------------------------------

    def near_points(
        self,
        namespace: str,
        prefixes: Sequence[str],
        now: datetime,
        limit: int,
        cells: Sequence[str] = (),
    ) -> list[tuple[int, float, float, datetime | None, str]]:
        """(seq, lat, lon, at, geohash) of live memories in ``cells`` or under ``prefixes``:
        one prefix range scan each of the ``(namespace, geohash text_pattern_ops)`` index."""
        points: list[tuple[int, float, float, datetime | None, str]] = []
        if cells:
            rows = self._database.read(
                "SELECT m.seq, m.lat, m.lon, m.at_utc, m.at_offset, m.geohash FROM memories m"
                " WHERE m.namespace = %(ns)s AND m.geohash = ANY(%(cells)s)"
                f" AND {ALIVE} LIMIT %(limit)s",
                {"ns": namespace, "cells": list(cells), "now": now, "limit": limit},
            )
            points.extend(
                (int(seq), float(lat), float(lon), local_instant(at, offset), geohash)
                for seq, lat, lon, at, offset, geohash in rows
            )
        for prefix in prefixes:
            rows = self._database.read(
                "SELECT m.seq, m.lat, m.lon, m.at_utc, m.at_offset, m.geohash FROM memories m"
                " WHERE m.namespace = %(ns)s AND m.geohash LIKE %(prefix)s"
                f" AND {ALIVE} LIMIT %(limit)s",
                {
                    "ns": namespace,
                    # Geohash letters hold no LIKE wildcard; anything else never matches.
                    "prefix": "".join(c for c in prefix if c.isalnum()) + "%",
                    "now": now,
                    "limit": limit,
                },
            )
            points.extend(
                (int(seq), float(lat), float(lon), local_instant(at, offset), geohash)
                for seq, lat, lon, at, offset, geohash in rows
            )
            if len(points) >= limit:
                break
        return points[:limit]

    def by_seqs(self, namespace: str, seqs: Sequence[int], now: datetime) -> list[Memory]:
        """Live memories of the namespace among ``seqs``."""
        if not seqs:
            return []
        rows = self._database.read(
            f"SELECT {SELECT_COLUMNS} FROM memories m"
            f" WHERE m.seq = ANY(%(seqs)s) AND m.namespace = %(ns)s AND {ALIVE}",
            {"ns": namespace, "now": now, "seqs": [int(seq) for seq in seqs]},
        )
        return [row_to_memory(row) for row in rows]

    def dated_points(
        self, namespace: str, now: datetime, limit: int
    ) -> list[tuple[int, datetime, float | None]]:
        """(seq, at, salience) of live memories with a time, newest first (for time-only
        cues)."""
        rows = self._database.read(
            "SELECT m.seq, m.at_utc, m.at_offset, m.salience FROM memories m"
            f" WHERE m.namespace = %(ns)s AND {ALIVE}"
            " AND m.at_utc IS NOT NULL ORDER BY m.at_utc DESC LIMIT %(limit)s",
            {"ns": namespace, "now": now, "limit": limit},
        )
        points: list[tuple[int, datetime, float | None]] = []
        for seq, instant, offset, salience in rows:
            local = local_instant(instant, offset)
            assert local is not None
            points.append((int(seq), local, None if salience is None else float(salience)))
        return points

    # -- firing and the pending queue ---------------------------------------

    def fire(
        self,
        namespace: str,
        candidates: Sequence[tuple[int, float, dict[str, float]]],
        now: datetime,
        habituated_since: datetime,
        limit: int | None = None,
    ) -> list[Memory]:
        """Record the firing of every candidate not fired since ``habituated_since``, in
        the order given, until ``limit`` have fired.

        One transaction; each candidate's habituation check runs under an
        advisory lock on its memory, taken in seq order, so a concurrent sense
        on another server waits and then sees this firing; the memories are then
        share-locked in seq order too. Returns the memories that fired, as they
        read in it.
        """

        def step(connection: Connection) -> list[Memory]:
            for seq in sorted({candidate[0] for candidate in candidates}):
                connection.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"fire:{seq}",)
                )
            # Read again, waiting for a forget or an edit still in flight (FOR SHARE): one
            # committed since the sense ranked its candidates must neither fail the sense
            # (a forgotten seq breaks the history's foreign key) nor queue the text the edit
            # replaced. In seq order, the order the purge and a recall's touch take several
            # memories in: in ranking order, a sense held a later one while it waited for
            # an earlier one such a writer held, and that writer waited for it (a deadlock).
            live = {
                memory.seq: memory
                for memory in map(
                    row_to_memory,
                    connection.execute(
                        f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.seq = ANY(%(seqs)s)"
                        f" AND m.namespace = %(ns)s AND {ALIVE} ORDER BY m.seq FOR SHARE",
                        {"seqs": [seq for seq, _, _ in candidates], "ns": namespace, "now": now},
                    ).fetchall(),
                )
            }
            fired: list[Memory] = []
            for seq, score, channels in candidates:
                if limit is not None and len(fired) >= limit:
                    break  # the strongest fired: a habituated one made room for the next
                memory = live.get(seq)
                if memory is None:
                    continue
                recent = connection.execute(
                    "SELECT 1 FROM recollection_triggers WHERE seq = %s AND fired_at > %s LIMIT 1",
                    (seq, habituated_since),
                ).fetchone()
                if recent is not None:
                    continue
                connection.execute(
                    "INSERT INTO recollection_triggers(seq, fired_at, score) VALUES (%s, %s, %s)",
                    (seq, now, score),
                )
                connection.execute(
                    "INSERT INTO pending_recollections"
                    "(namespace, seq, score, channels, prompt_line, fired_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    (namespace, seq, score, Jsonb(channels), prompt_line(memory), now),
                )
                fired.append(memory)
            return fired

        return self._database.write(step)

    def take_pending(
        self, namespace: str, limit: int, drain: bool, now: datetime
    ) -> list[PendingRow]:
        """The oldest queued recollections; with ``drain`` they are deleted as they are read
        (``FOR UPDATE SKIP LOCKED``), so two consumers never receive the same item."""
        if not drain:
            rows = self._database.read(
                f"SELECT {PENDING_COLUMNS}, {SELECT_COLUMNS}"
                " FROM pending_recollections p JOIN memories m ON m.seq = p.seq"
                " WHERE p.namespace = %s AND (m.expires_at IS NULL OR m.expires_at > %s)"
                " ORDER BY p.id LIMIT %s",
                (namespace, now, limit),
            )
            return [_pending(row, row_to_memory(row[7:])) for row in rows]

        def step(connection: Connection) -> list[PendingRow]:
            # Items of memories expired since they were queued are neither taken nor
            # counted against the limit (the purge deletes them with their memory).
            taken = connection.execute(
                "DELETE FROM pending_recollections p WHERE p.id IN (SELECT q.id FROM"
                " pending_recollections q JOIN memories m ON m.seq = q.seq"
                " WHERE q.namespace = %s AND (m.expires_at IS NULL OR m.expires_at > %s)"
                f" ORDER BY q.id LIMIT %s FOR UPDATE OF q SKIP LOCKED)"
                f" RETURNING {PENDING_COLUMNS}, p.seq",
                (namespace, now, limit),
            ).fetchall()
            if not taken:
                return []
            memories = {
                memory.seq: memory
                for memory in map(
                    row_to_memory,
                    connection.execute(
                        f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.seq = ANY(%s)",
                        ([int(row[7]) for row in taken],),
                    ).fetchall(),
                )
            }
            items = [
                _pending(row, memories[int(row[7])]) for row in taken if int(row[7]) in memories
            ]
            return sorted(items, key=lambda item: item.id)

        return self._database.write(step)

    def queued_reminders(self, namespace: str, now: datetime) -> list[PendingRow]:
        """Every reminder still queued, oldest first, left in the queue."""
        rows = self._database.read(
            f"SELECT {PENDING_COLUMNS}, {SELECT_COLUMNS}"
            " FROM pending_recollections p JOIN memories m ON m.seq = p.seq"
            " WHERE p.namespace = %s AND (m.expires_at IS NULL OR m.expires_at > %s)"
            " AND p.kind = 'reminder' ORDER BY p.id",
            (namespace, now),
        )
        return [_pending(row, row_to_memory(row[7:])) for row in rows]

    def pending_version(self, namespace: str) -> int:
        """Changes whenever the namespace's pending queue gains or loses an item."""
        rows = self._database.read(
            "SELECT coalesce(max(id), 0), count(*) FROM pending_recollections WHERE namespace = %s",
            (namespace,),
        )
        newest, count = rows[0]
        return int(newest) * 1_000_003 + int(count)

    def counts(self, namespace: str) -> tuple[int, int]:
        """(trigger history rows, pending items) of a namespace, for tests and status."""
        rows = self._database.read(
            "SELECT (SELECT count(*) FROM recollection_triggers t JOIN memories m"
            " ON m.seq = t.seq WHERE m.namespace = %(ns)s),"
            " (SELECT count(*) FROM pending_recollections WHERE namespace = %(ns)s)",
            {"ns": namespace},
        )
        return int(rows[0][0]), int(rows[0][1])
