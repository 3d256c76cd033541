"""The PostgreSQL side of prospective memory: intentions, triggers, streaks, queued reminders.

Firing claims lock the intention rows they read (``FOR UPDATE``; the scheduler's
due scan with ``SKIP LOCKED``), so two servers evaluating the same intention
serialise on its row and the second sees the first's firing (READ COMMITTED
re-checks a locked row's state before returning it). They share-lock the
intention's memory too (``FOR SHARE``), before the intention as forget takes them:
an edit of its action in flight is waited for (or, by the scheduler, skipped until
the next step), so a reminder is never queued with the text the edit replaces after
the edit rewrote the queue. Every table references ``memories(seq)`` with
``ON DELETE CASCADE``, so ``forget`` removes it all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from psycopg.types.json import Jsonb

from recalld.store.intentions import (
    IntentionRecord,
    IntentionRow,
    IntentionSession,
    Lookup,
    ReminderDraft,
    Streak,
    TriggerRecord,
)
from recalld.store.postgres_connection import Connection, PostgresDatabase
from recalld.store.postgres_rows import SELECT_COLUMNS, row_to_memory

__all__ = ["PostgresIntentions", "save_intention"]

T = TypeVar("T")
STATE_COLUMNS = (
    "i.repeat, i.min_interval_seconds, i.zone, i.scheduled, i.created_at,"
    " i.expires_at, i.next_due, i.last_fired_at, i.fire_count"
)
# The state as of %(now)s: an active intention whose expiry has come is expired, whether
# or not a sense or the scheduler has moved its row yet.
STATE_AT_NOW = (
    "CASE WHEN i.state = 'active' AND i.expires_at <= %(now)s THEN 'expired' ELSE i.state END"
)
# Rows as stored: the firing transactions, which check the expiry themselves.
ROW_SELECT = (
    f"SELECT i.state, {STATE_COLUMNS}, {SELECT_COLUMNS}"
    " FROM intentions i JOIN memories m ON m.seq = i.seq"
)
# Whether the intention's memory is live at :now: one whose TTL has passed is gone
# for every read (as the memory is), until the purge deletes both.
LIVE_MEMORY = "(m.expires_at IS NULL OR m.expires_at > %(now)s)"
# Rows as read (listings, get, cancel): their state as of %(now)s.
READ_SELECT = (
    f"SELECT {STATE_AT_NOW}, {STATE_COLUMNS}, {SELECT_COLUMNS}"
    " FROM intentions i JOIN memories m ON m.seq = i.seq"
)


def _now(now: datetime | None) -> datetime:
    """``now``, by default this machine's clock."""
    return datetime.now(UTC) if now is None else now


def _rows(connection: Connection, sql: str, params: Any) -> list[IntentionRow]:
    """Intention rows for ``sql`` (a :data:`ROW_SELECT` or :data:`READ_SELECT`), with their
    triggers and streaks."""
    heads = connection.execute(sql, params).fetchall()
    if not heads:
        return []
    seqs = [int(row[10]) for row in heads]
    triggers: dict[int, list[TriggerRecord]] = {}
    for seq, kind, term, spec in connection.execute(
        "SELECT seq, type, term, spec FROM intention_triggers WHERE seq = ANY(%s)"
        " ORDER BY seq, position",
        (seqs,),
    ).fetchall():
        triggers.setdefault(int(seq), []).append(
            TriggerRecord(type=str(kind), spec=dict(spec), term=term)
        )
    streaks: dict[int, dict[int, Streak]] = {}
    for seq, position, count, last_at in connection.execute(
        "SELECT seq, position, count, last_at FROM intention_streaks WHERE seq = ANY(%s)",
        (seqs,),
    ).fetchall():
        streaks.setdefault(int(seq), {})[int(position)] = Streak(count=int(count), last_at=last_at)
    rows = []
    for row in heads:
        memory = row_to_memory(row[10:])
        rows.append(
            IntentionRow(
                memory=memory,
                state=str(row[0]),
                repeat=str(row[1]),
                min_interval_seconds=float(row[2]),
                zone=str(row[3]),
                scheduled=bool(row[4]),
                created_at=row[5],
                expires_at=row[6],
                next_due=row[7],
                last_fired_at=row[8],
                fire_count=int(row[9]),
                triggers=triggers.get(memory.seq, []),
                streaks=streaks.get(memory.seq, {}),
            )
        )
    return rows


def save_intention(connection: Connection, seq: int, record: IntentionRecord) -> None:
    """Write a new intention's state and triggers inside the caller's transaction."""
    connection.execute(
        "INSERT INTO intentions(seq, namespace, state, repeat, min_interval_seconds, zone,"
        " scheduled, expires_at, next_due, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            seq,
            record.namespace,
            record.state,
            record.repeat,
            record.min_interval_seconds,
            record.zone,
            record.scheduled,
            record.expires_at,
            record.next_due,
            record.created_at,
            record.created_at,
        ),
    )
    if record.triggers:
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO intention_triggers(seq, position, namespace, type, term,"
                " low_lat, high_lat, low_lon, high_lon, spec)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        seq,
                        position,
                        record.namespace,
                        trigger.type,
                        trigger.term,
                        *(trigger.box or (None, None, None, None)),
                        Jsonb(trigger.spec),
                    )
                    for position, trigger in enumerate(record.triggers)
                ],
            )


class _Session:
    """:class:`~recalld.store.intentions.IntentionSession` on one transaction's connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def load(self, seqs: Sequence[int]) -> list[IntentionRow]:
        if not seqs:
            return []
        wanted = sorted({int(seq) for seq in seqs})
        # The memories first, in seq order, then their intentions: the order forget and the
        # purge take them in (the memory, then the intention its delete cascades to).
        # Holding an intention while it waited for its memory, a claim deadlocked with them.
        self._connection.execute(
            "SELECT 1 FROM memories WHERE seq = ANY(%s) ORDER BY seq FOR SHARE", (wanted,)
        )
        return _rows(
            self._connection,
            f"{ROW_SELECT} WHERE i.state = 'active' AND i.seq = ANY(%s)"
            " ORDER BY i.seq FOR UPDATE OF i",
            (wanted,),
        )

    def due(self, now: datetime, limit: int, skip: Sequence[int] = ()) -> list[IntentionRow]:
        return _rows(
            self._connection,
            f"{ROW_SELECT} WHERE i.state = 'active' AND i.next_due IS NOT NULL"
            " AND i.next_due <= %s AND NOT (i.seq = ANY(%s)) ORDER BY i.next_due, i.seq"
            " LIMIT %s FOR UPDATE OF i SKIP LOCKED FOR SHARE OF m SKIP LOCKED",
            (now, [int(seq) for seq in skip], limit),
        )

    def set_streak(self, seq: int, position: int, streak: Streak | None) -> None:
        if streak is None:
            self._connection.execute(
                "DELETE FROM intention_streaks WHERE seq = %s AND position = %s", (seq, position)
            )
            return
        self._connection.execute(
            "INSERT INTO intention_streaks(seq, position, count, last_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (seq, position) DO UPDATE SET count = excluded.count,"
            " last_at = excluded.last_at",
            (seq, position, streak.count, streak.last_at),
        )

    def record_firing(self, seq: int, now: datetime, state: str, next_due: datetime | None) -> None:
        self._connection.execute(
            "UPDATE intentions SET state = %s, next_due = %s, last_fired_at = %s,"
            " fire_count = fire_count + 1, updated_at = %s WHERE seq = %s",
            (state, next_due, now, now, seq),
        )

    def set_state(self, seq: int, state: str, now: datetime) -> None:
        self._connection.execute(
            "UPDATE intentions SET state = %s, updated_at = %s WHERE seq = %s", (state, now, seq)
        )

    def queue(self, reminder: ReminderDraft, now: datetime) -> None:
        queue_reminder(self._connection, reminder, now)


def queue_reminder(connection: Connection, reminder: ReminderDraft, now: datetime) -> None:
    """Put a reminder in its namespace's pending queue inside the caller's transaction."""
    connection.execute(
        "INSERT INTO pending_recollections"
        "(namespace, seq, score, channels, prompt_line, fired_at, kind, details)"
        " VALUES (%s, %s, %s, %s, %s, %s, 'reminder', %s)",
        (
            reminder.namespace,
            reminder.seq,
            reminder.score,
            Jsonb(reminder.channels),
            reminder.prompt_line,
            now,
            Jsonb(reminder.details),
        ),
    )


class PostgresIntentions:
    """Intention persistence on the store's connection pool."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database

    def _read_rows(self, sql: str, params: Any) -> list[IntentionRow]:
        with self._database.connection() as connection:
            return _rows(connection, sql, params)

    def select(
        self, namespace: str, states: Sequence[str] | None, *, now: datetime | None = None
    ) -> list[IntentionRow]:
        """Intentions of the namespace in these states as of ``now`` (all when None),
        newest first."""
        params: dict[str, Any] = {"ns": namespace, "now": _now(now)}
        if states is None:
            return self._read_rows(
                f"{READ_SELECT} WHERE i.namespace = %(ns)s AND {LIVE_MEMORY} ORDER BY i.seq DESC",
                params,
            )
        # The stored state narrows by the index; an expired one may still be stored active.
        params["stored"] = sorted(set(states) | ({"active"} if "expired" in states else set()))
        params["states"] = list(states)
        return self._read_rows(
            f"{READ_SELECT} WHERE i.namespace = %(ns)s AND {LIVE_MEMORY}"
            " AND i.state = ANY(%(stored)s)"
            f" AND ({STATE_AT_NOW}) = ANY(%(states)s) ORDER BY i.seq DESC",
            params,
        )

    def get(
        self, namespace: str, memory_id: str, *, now: datetime | None = None
    ) -> IntentionRow | None:
        """One intention by its memory id, in any state (as of ``now``)."""
        rows = self._read_rows(
            f"{READ_SELECT} WHERE i.namespace = %(ns)s AND m.id = %(id)s AND {LIVE_MEMORY}",
            {"ns": namespace, "id": memory_id, "now": _now(now)},
        )
        return rows[0] if rows else None

    def cancel(self, namespace: str, memory_id: str, now: datetime) -> IntentionRow | None:
        """Cancel it (when still active at ``now``) and drop its queued reminders and
        streaks, in one transaction."""

        def step(connection: Connection) -> IntentionRow | None:
            rows = _rows(
                connection,
                f"{READ_SELECT} WHERE i.namespace = %(ns)s AND m.id = %(id)s AND {LIVE_MEMORY}"
                " FOR UPDATE OF i",
                {"ns": namespace, "id": memory_id, "now": now},
            )
            if not rows:
                return None
            seq = rows[0].seq
            if rows[0].state == "active":
                connection.execute(
                    "UPDATE intentions SET state = 'cancelled', updated_at = %s WHERE seq = %s",
                    (now, seq),
                )
            connection.execute("DELETE FROM intention_streaks WHERE seq = %s", (seq,))
            connection.execute(
                "DELETE FROM pending_recollections WHERE seq = %s AND kind = 'reminder'", (seq,)
            )
            return _rows(
                connection, f"{READ_SELECT} WHERE i.seq = %(seq)s", {"seq": seq, "now": now}
            )[0]

        return self._database.write(step)

    def candidates(self, namespace: str, lookup: Lookup) -> list[int]:
        """Seqs of active intentions with a trigger the lookup could satisfy (by the term
        index, and by the box around each place trigger's circle)."""
        parts: list[str] = []
        params: dict[str, Any] = {"ns": namespace}
        for index, (kind, terms) in enumerate(sorted(lookup.terms.items())):
            if not terms:
                continue
            params[f"type{index}"] = kind
            params[f"terms{index}"] = list(terms)
            parts.append(
                "SELECT t.seq FROM intention_triggers t WHERE t.namespace = %(ns)s"
                f" AND t.type = %(type{index})s AND t.term IS NOT NULL"
                f" AND t.term = ANY(%(terms{index})s)"
            )
        if lookup.place is not None:
            params["lat"], params["lon"] = lookup.place
            parts.append(
                "SELECT t.seq FROM intention_triggers t WHERE t.namespace = %(ns)s"
                " AND t.low_lat IS NOT NULL AND t.low_lat <= %(lat)s AND t.high_lat >= %(lat)s"
                " AND t.low_lon <= %(lon)s AND t.high_lon >= %(lon)s"
            )
        if not parts:
            return []
        sql = (
            "SELECT i.seq FROM intentions i WHERE i.state = 'active' AND NOT i.scheduled"
            f" AND i.seq IN ({' UNION '.join(parts)}) ORDER BY i.seq"
        )
        return [int(row[0]) for row in self._database.read(sql, params)]

    def next_due(self, skip: Sequence[int] = ()) -> datetime | None:
        """The earliest due time of any active scheduled intention (every namespace) but
        the seqs in ``skip``."""
        rows = self._database.read(
            "SELECT min(next_due) FROM intentions WHERE state = 'active' AND next_due IS NOT NULL"
            " AND NOT (seq = ANY(%s))",
            ([int(seq) for seq in skip],),
        )
        value = rows[0][0] if rows else None
        return value if isinstance(value, datetime) else None

    def session(self, step: Callable[[IntentionSession], T]) -> T:
        """Run ``step`` in one transaction (re-run from the start if the database asks)."""
        return self._database.write(lambda connection: step(_Session(connection)))

    def counts(self, namespace: str, *, now: datetime | None = None) -> dict[str, int]:
        """Intentions of the namespace by state as of ``now``."""
        rows = self._database.read(
            f"SELECT {STATE_AT_NOW} AS state, count(*) FROM intentions i"
            " JOIN memories m ON m.seq = i.seq"
            f" WHERE i.namespace = %(ns)s AND {LIVE_MEMORY} GROUP BY 1",
            {"ns": namespace, "now": _now(now)},
        )
        return {str(state): int(count) for state, count in rows}
