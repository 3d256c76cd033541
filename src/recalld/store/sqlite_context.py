"""The SQLite side of involuntary recall: signal features, trigger history, the pending queue.

Only derived features are stored (``memory_signals``); every table references
``memories(seq)`` with ``ON DELETE CASCADE``, so ``forget`` removes a memory's
features, trigger history and queued recollections with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import apsw

from recalld._text import prompt_line
from recalld._time import from_storage, to_storage
from recalld.model import Memory
from recalld.store.context import PendingRow
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_rows import (
    OTHER_NAMESPACES,
    SELECT_COLUMNS,
    id_list,
    optional_time,
    row_to_memory,
)

__all__ = ["PendingRow", "SQLiteContext", "save_signals"]

T = TypeVar("T")
ALIVE = "(m.expires_at IS NULL OR m.expires_at > :now)"


def save_signals(
    connection: apsw.Connection,
    seq: int,
    features: dict[str, bytes],
    biometrics: dict[str, float],
) -> None:
    """Store a memory's derived features and readings inside the caller's transaction."""
    connection.execute("DELETE FROM memory_signals WHERE seq = ?", (seq,))
    connection.execute("DELETE FROM memory_biometrics WHERE seq = ?", (seq,))
    connection.executemany(
        "INSERT INTO memory_signals(seq, channel, features) VALUES (?, ?, ?)",
        [(seq, channel, data) for channel, data in features.items()],
    )
    connection.executemany(
        "INSERT INTO memory_biometrics(seq, name, value) VALUES (?, ?, ?)",
        [(seq, name, value) for name, value in biometrics.items()],
    )


class SQLiteContext:
    """Context-recall persistence on the store's connections."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database

    def _transact(self, operation: Callable[[apsw.Connection], T]) -> T:
        return self._database.write(operation)

    # -- features ----------------------------------------------------------

    def biometrics(self, seqs: Sequence[int]) -> dict[int, dict[str, float]]:
        """The stored readings of the given memories, by seq and name."""
        if not seqs:
            return {}
        rows = self._database.read(
            "SELECT seq, name, value FROM memory_biometrics"
            " WHERE seq IN (SELECT value FROM json_each(?))",
            (id_list(seqs),),
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
            " CROSS JOIN memories m ON m.seq = b.seq"
            " WHERE b.name IN (SELECT value FROM json_each(:names))"
            f" AND m.namespace = :ns AND {ALIVE}",
            {"names": json.dumps(list(names)), "ns": namespace, "now": to_storage(now)},
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
            "now": to_storage(now),
            "limit": limit,
        }
        found: list[int] = []
        for bounds, order in (
            ("b.value >= :value AND b.value <= :high", "ASC"),
            ("b.value < :value AND b.value >= :low", "DESC"),
        ):
            rows = self._database.read(
                "SELECT b.seq FROM memory_biometrics b"
                " CROSS JOIN memories m NOT INDEXED ON m.seq = b.seq"
                f" WHERE b.name = :name AND {bounds} AND m.namespace = :ns AND {ALIVE}"
                f" ORDER BY b.value {order} LIMIT :limit",
                params,
            )
            found.extend(int(row[0]) for row in rows)
        return found

    def signals(self, seqs: Sequence[int]) -> dict[int, dict[str, bytes]]:
        """The stored features of the given memories, by seq and channel."""
        if not seqs:
            return {}
        rows = self._database.read(
            "SELECT seq, channel, features FROM memory_signals"
            " WHERE seq IN (SELECT value FROM json_each(?))",
            (id_list(seqs),),
        )
        found: dict[int, dict[str, bytes]] = {}
        for seq, channel, data in rows:
            found.setdefault(int(seq), {})[str(channel)] = bytes(data)
        return found

    def with_channel(self, namespace: str, channel: str, now: datetime) -> list[tuple[int, bytes]]:
        """(seq, features) of every live memory in the namespace that has this channel.

        CROSS JOIN keeps SQLite scanning the (small) feature table first, rather
        than every memory of the namespace. When the file holds this namespace
        alone, each memory's row is not read at all: the features are those of
        the channel, less the expired memories (from the expiry index). Reading
        the rows of the 3,000 memories with an image of 100,000 took 5.8 of 7.4 ms.
        """
        params = {"channel": channel, "ns": namespace, "now": to_storage(now)}
        joined = (
            "SELECT s.seq, s.features FROM memory_signals s CROSS JOIN memories m ON m.seq = s.seq"
            f" WHERE s.channel = :channel AND m.namespace = :ns AND {ALIVE}"
        )
        unjoined = (
            "SELECT s.seq, s.features FROM memory_signals s WHERE s.channel = :channel"
            " AND s.seq NOT IN (SELECT seq FROM memories"
            " WHERE expires_at IS NOT NULL AND expires_at <= :now)"
        )

        def read(connection: apsw.Connection) -> list[tuple[Any, ...]]:
            # One snapshot: another namespace written between the check and the read
            # must not slip in (a caller's transaction is one already).
            own = connection.get_autocommit()
            try:  # BEGIN inside: an interrupt just after it still ends the snapshot
                if own:
                    connection.execute("BEGIN")
                others = connection.execute(f"SELECT {OTHER_NAMESPACES}", params).fetchall()[0][0]
                sql = joined if others else unjoined
                found: list[tuple[Any, ...]] = connection.execute(sql, params).fetchall()
                return found
            finally:
                if own and not connection.get_autocommit():
                    connection.execute("COMMIT")

        rows = self._database.run(read)
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
        """(seq, lat, lon, at, geohash) of live memories under ``prefixes``, without loading rows.

        One index range scan per prefix (the same statement each time, so it is
        prepared once), instead of an OR that SQLite may answer with a scan.
        """
        sql = (
            "SELECT m.seq, m.lat, m.lon, m.at, m.geohash FROM memories m"
            " WHERE m.namespace = :ns AND m.geohash >= :low AND m.geohash < :high"
            f" AND {ALIVE} LIMIT :limit"
        )
        points: list[tuple[int, float, float, datetime | None, str]] = []
        stamp = to_storage(now)
        if cells:
            rows = self._database.read(
                "SELECT m.seq, m.lat, m.lon, m.at, m.geohash FROM memories m"
                " WHERE m.namespace = :ns"
                f" AND m.geohash IN (SELECT value FROM json_each(:cells)) AND {ALIVE}"
                " LIMIT :limit",
                {"ns": namespace, "cells": json.dumps(list(cells)), "now": stamp, "limit": limit},
            )
            points.extend(
                (int(seq), float(lat), float(lon), optional_time(at), geohash)
                for seq, lat, lon, at, geohash in rows
            )
        for prefix in prefixes:
            rows = self._database.read(
                sql,
                {
                    "ns": namespace,
                    "low": prefix,
                    "high": prefix + "~",
                    "now": stamp,
                    "limit": limit,
                },
            )
            points.extend(
                (int(seq), float(lat), float(lon), optional_time(at), geohash)
                for seq, lat, lon, at, geohash in rows
            )
            if len(points) >= limit:
                break
        return points[:limit]

    def by_seqs(self, namespace: str, seqs: Sequence[int], now: datetime) -> list[Memory]:
        """Live memories of the namespace among ``seqs``."""
        if not seqs:
            return []
        # NOT INDEXED: primary-key lookups, not a walk of a (namespace, ...) index.
        rows = self._database.read(
            f"SELECT {SELECT_COLUMNS} FROM memories m NOT INDEXED"
            f" WHERE m.namespace = :ns AND {ALIVE}"
            " AND m.seq IN (SELECT value FROM json_each(:seqs))",
            {"ns": namespace, "now": to_storage(now), "seqs": json.dumps([int(s) for s in seqs])},
        )
        return [row_to_memory(row) for row in rows]

    def dated_points(
        self, namespace: str, now: datetime, limit: int
    ) -> list[tuple[int, datetime, float | None]]:
        """(seq, at, salience) of live memories with a time, newest first (for time-only
        cues)."""
        rows = self._database.read(
            f"SELECT m.seq, m.at, m.salience FROM memories m WHERE m.namespace = :ns AND {ALIVE}"
            " AND m.at IS NOT NULL ORDER BY m.at_utc DESC LIMIT :limit",
            {"ns": namespace, "now": to_storage(now), "limit": limit},
        )
        points: list[tuple[int, datetime, float | None]] = []
        for seq, at, salience in rows:
            local = optional_time(at)
            assert local is not None
            points.append((int(seq), local, salience))
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

        One transaction: the habituation check and the queueing cannot race with
        another process's sense. Returns the memories that fired, as they read in it.
        """
        stamp, since = to_storage(now), to_storage(habituated_since)

        def step(connection: apsw.Connection) -> list[Memory]:
            fired: list[Memory] = []
            for seq, score, channels in candidates:
                if limit is not None and len(fired) >= limit:
                    break  # the strongest fired: a habituated one made room for the next
                # Read again under the write lock: a forget or an edit committed since the
                # sense ranked its candidates must neither fail the sense (a forgotten seq
                # breaks the history's foreign key) nor queue the text the edit replaced.
                row = connection.execute(
                    f"SELECT {SELECT_COLUMNS} FROM memories m NOT INDEXED"
                    f" WHERE m.seq = :seq AND m.namespace = :ns AND {ALIVE}",
                    {"seq": seq, "ns": namespace, "now": stamp},
                ).fetchone()
                if row is None:
                    continue
                recent = connection.execute(
                    "SELECT 1 FROM recollection_triggers WHERE seq = ? AND fired_at > ? LIMIT 1",
                    (seq, since),
                ).fetchone()
                if recent is not None:
                    continue
                memory = row_to_memory(tuple(row))
                connection.execute(
                    "INSERT INTO recollection_triggers(seq, fired_at, score) VALUES (?, ?, ?)",
                    (seq, stamp, score),
                )
                connection.execute(
                    "INSERT INTO pending_recollections"
                    "(namespace, seq, score, channels, prompt_line, fired_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (namespace, seq, score, json.dumps(channels), prompt_line(memory), stamp),
                )
                fired.append(memory)
            return fired

        return self._transact(step)

    def take_pending(
        self, namespace: str, limit: int, drain: bool, now: datetime
    ) -> list[PendingRow]:
        """The oldest queued recollections; with ``drain`` they are removed in the same
        transaction, so two consumers never receive the same item."""
        return self._pending(namespace, now, limit=limit, drain=drain)

    def queued_reminders(self, namespace: str, now: datetime) -> list[PendingRow]:
        """Every reminder still queued, oldest first, left in the queue."""
        return self._pending(namespace, now, limit=-1, drain=False, kind="reminder")

    def _pending(
        self, namespace: str, now: datetime, *, limit: int, drain: bool, kind: str | None = None
    ) -> list[PendingRow]:
        """The oldest queued items (of ``kind`` only, when given; every one for a ``limit``
        of -1), removed with ``drain``."""

        def read(connection: apsw.Connection) -> list[PendingRow]:
            rows = connection.execute(
                "SELECT p.id, p.score, p.channels, p.prompt_line, p.fired_at, p.kind, p.details,"
                f" {SELECT_COLUMNS}"
                " FROM pending_recollections p JOIN memories m ON m.seq = p.seq"
                " WHERE p.namespace = ? AND (m.expires_at IS NULL OR m.expires_at > ?)"
                " AND (? IS NULL OR p.kind = ?)"
                " ORDER BY p.id LIMIT ?",
                (namespace, to_storage(now), kind, kind, limit),
            ).fetchall()
            rows_any: list[tuple[Any, ...]] = [tuple(row) for row in rows]
            items = [
                PendingRow(
                    id=int(row[0]),
                    score=float(row[1]),
                    channels=json.loads(row[2]),
                    prompt_line=str(row[3]),
                    fired_at=from_storage(str(row[4])),
                    kind=str(row[5]),
                    details=None if row[6] is None else json.loads(row[6]),
                    memory=row_to_memory(row[7:]),
                )
                for row in rows_any
            ]
            if drain and items:
                marks = ", ".join("?" for _ in items)
                connection.execute(
                    f"DELETE FROM pending_recollections WHERE id IN ({marks})",
                    tuple(item.id for item in items),
                )
            return items

        if drain:
            return self._transact(read)
        return self._database.run(read)

    def pending_version(self, namespace: str) -> int:
        """Changes whenever the namespace's pending queue gains or loses an item."""
        rows = self._database.read(
            "SELECT coalesce(max(id), 0), count(*) FROM pending_recollections WHERE namespace = ?",
            (namespace,),
        )
        newest, count = rows[0]
        return int(newest) * 1_000_003 + int(count)

    def counts(self, namespace: str) -> tuple[int, int]:
        """(trigger history rows, pending items) of a namespace, for tests and status."""
        rows = self._database.read(
            "SELECT (SELECT count(*) FROM recollection_triggers t JOIN memories m"
            " ON m.seq = t.seq WHERE m.namespace = :ns),"
            " (SELECT count(*) FROM pending_recollections WHERE namespace = :ns)",
            {"ns": namespace},
        )
        return int(rows[0][0]), int(rows[0][1])
