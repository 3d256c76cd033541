"""The SQLite side of prospective memory: intentions, triggers, streaks, queued reminders.

Every table references ``memories(seq)`` with ``ON DELETE CASCADE``, so
``forget`` removes an intention's state, triggers, streaks and queued reminders
with its memory (and ``secure_delete`` zeroes the freed pages).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import apsw

from recalld._time import from_storage, to_storage
from recalld.store.intentions import (
    IntentionRecord,
    IntentionRow,
    IntentionSession,
    Lookup,
    ReminderDraft,
    Streak,
    TriggerRecord,
)
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_rows import SELECT_COLUMNS, optional_time, row_to_memory, stamp

__all__ = ["SQLiteIntentions", "save_intention"]

T = TypeVar("T")
STATE_COLUMNS = (
    "i.repeat, i.min_interval_seconds, i.zone, i.scheduled, i.created_at,"
    " i.expires_at, i.next_due, i.last_fired_at, i.fire_count"
)
# The state as of :now: an active intention whose expiry has come is expired, whether or
# not a sense or the scheduler has moved its row yet (times are UTC text that sorts).
STATE_AT_NOW = (
    "CASE WHEN i.state = 'active' AND i.expires_at IS NOT NULL AND i.expires_at <= :now"
    " THEN 'expired' ELSE i.state END"
)
# Rows as stored: the firing transactions, which check the expiry themselves.
ROW_SELECT = (
    f"SELECT i.state, {STATE_COLUMNS}, {SELECT_COLUMNS}"
    " FROM intentions i JOIN memories m ON m.seq = i.seq"
)
# Whether the intention's memory is live at :now: one whose TTL has passed is gone
# for every read (as the memory is), until the purge deletes both.
LIVE_MEMORY = "(m.expires_at IS NULL OR m.expires_at > :now)"
# Rows as read (listings, get, cancel): their state as of :now.
READ_SELECT = (
    f"SELECT {STATE_AT_NOW}, {STATE_COLUMNS}, {SELECT_COLUMNS}"
    " FROM intentions i JOIN memories m ON m.seq = i.seq"
)


_time = optional_time
_stamp = stamp


def _now(now: datetime | None) -> str:
    """``now`` (default: this machine's clock) as stored, for :data:`STATE_AT_NOW`."""
    return to_storage(datetime.now(UTC) if now is None else now)


def _rows(connection: apsw.Connection, sql: str, params: Any) -> list[IntentionRow]:
    """Intention rows for ``sql`` (a :data:`ROW_SELECT` or :data:`READ_SELECT`), with their
    triggers and streaks."""
    found = [tuple(row) for row in connection.execute(sql, params).fetchall()]
    if not found:
        return []
    heads: list[tuple[Any, ...]] = found
    seqs = json.dumps([int(row[10]) for row in heads])
    triggers: dict[int, list[TriggerRecord]] = {}
    trigger_rows: list[tuple[Any, ...]] = connection.execute(
        "SELECT seq, type, term, spec FROM intention_triggers"
        " WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq, position",
        (seqs,),
    ).fetchall()
    for seq, kind, term, spec in trigger_rows:
        triggers.setdefault(int(seq), []).append(
            TriggerRecord(type=str(kind), spec=json.loads(spec), term=term)
        )
    streaks: dict[int, dict[int, Streak]] = {}
    streak_rows: list[tuple[Any, ...]] = connection.execute(
        "SELECT seq, position, count, last_at FROM intention_streaks"
        " WHERE seq IN (SELECT value FROM json_each(?))",
        (seqs,),
    ).fetchall()
    for seq, position, count, last_at in streak_rows:
        streaks.setdefault(int(seq), {})[int(position)] = Streak(
            count=int(count), last_at=from_storage(str(last_at))
        )
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
                created_at=from_storage(str(row[5])),
                expires_at=_time(row[6]),
                next_due=_time(row[7]),
                last_fired_at=_time(row[8]),
                fire_count=int(row[9]),
                triggers=triggers.get(memory.seq, []),
                streaks=streaks.get(memory.seq, {}),
            )
        )
    return rows


class _Session:
    """:class:`~recalld.store.intentions.IntentionSession` on one transaction's connection."""

    def __init__(self, connection: apsw.Connection) -> None:
        self._connection = connection

    def load(self, seqs: Sequence[int]) -> list[IntentionRow]:
        if not seqs:
            return []
        return _rows(
            self._connection,
            f"{ROW_SELECT} WHERE i.state = 'active'"
            " AND i.seq IN (SELECT value FROM json_each(?)) ORDER BY i.seq",
            (json.dumps([int(seq) for seq in seqs]),),
        )

    def due(self, now: datetime, limit: int, skip: Sequence[int] = ()) -> list[IntentionRow]:
        return _rows(
            self._connection,
            f"{ROW_SELECT} WHERE i.state = 'active' AND i.next_due IS NOT NULL"
            " AND i.next_due <= ? AND i.seq NOT IN (SELECT value FROM json_each(?))"
            " ORDER BY i.next_due, i.seq LIMIT ?",
            (to_storage(now), json.dumps([int(seq) for seq in skip]), limit),
        )

    def set_streak(self, seq: int, position: int, streak: Streak | None) -> None:
        if streak is None:
            self._connection.execute(
                "DELETE FROM intention_streaks WHERE seq = ? AND position = ?", (seq, position)
            )
            return
        self._connection.execute(
            "INSERT INTO intention_streaks(seq, position, count, last_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(seq, position) DO UPDATE SET count = excluded.count,"
            " last_at = excluded.last_at",
            (seq, position, streak.count, to_storage(streak.last_at)),
        )

    def record_firing(self, seq: int, now: datetime, state: str, next_due: datetime | None) -> None:
        self._connection.execute(
            "UPDATE intentions SET state = ?, next_due = ?, last_fired_at = ?,"
            " fire_count = fire_count + 1, updated_at = ? WHERE seq = ?",
            (state, _stamp(next_due), to_storage(now), to_storage(now), seq),
        )

    def set_state(self, seq: int, state: str, now: datetime) -> None:
        self._connection.execute(
            "UPDATE intentions SET state = ?, updated_at = ? WHERE seq = ?",
            (state, to_storage(now), seq),
        )

    def queue(self, reminder: ReminderDraft, now: datetime) -> None:
        queue_reminder(self._connection, reminder, now)


def queue_reminder(connection: apsw.Connection, reminder: ReminderDraft, now: datetime) -> None:
    """Put a reminder in its namespace's pending queue inside the caller's transaction."""
    connection.execute(
        "INSERT INTO pending_recollections"
        "(namespace, seq, score, channels, prompt_line, fired_at, kind, details)"
        " VALUES (?, ?, ?, ?, ?, ?, 'reminder', ?)",
        (
            reminder.namespace,
            reminder.seq,
            reminder.score,
            json.dumps(reminder.channels),
            reminder.prompt_line,
            to_storage(now),
            json.dumps(reminder.details, ensure_ascii=False),
        ),
    )


def save_intention(connection: apsw.Connection, seq: int, record: IntentionRecord) -> None:
    """Write a new intention's state and triggers inside the caller's transaction."""
    created = to_storage(record.created_at)
    connection.execute(
        "INSERT INTO intentions(seq, namespace, state, repeat, min_interval_seconds, zone,"
        " scheduled, expires_at, next_due, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            record.namespace,
            record.state,
            record.repeat,
            record.min_interval_seconds,
            record.zone,
            int(record.scheduled),
            _stamp(record.expires_at),
            _stamp(record.next_due),
            created,
            created,
        ),
    )
    connection.executemany(
        "INSERT INTO intention_triggers(seq, position, namespace, type, term,"
        " low_lat, high_lat, low_lon, high_lon, spec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                seq,
                position,
                record.namespace,
                trigger.type,
                trigger.term,
                *(trigger.box or (None, None, None, None)),
                json.dumps(trigger.spec, ensure_ascii=False),
            )
            for position, trigger in enumerate(record.triggers)
        ],
    )


class SQLiteIntentions:
    """Intention persistence on the store's connections."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database

    def _read_rows(self, sql: str, params: Any) -> list[IntentionRow]:
        return self._database.run(lambda connection: _rows(connection, sql, params))

    def select(
        self, namespace: str, states: Sequence[str] | None, *, now: datetime | None = None
    ) -> list[IntentionRow]:
        """Intentions of the namespace in these states as of ``now`` (all when None),
        newest first."""
        params: dict[str, Any] = {"ns": namespace, "now": _now(now)}
        if states is None:
            return self._read_rows(
                f"{READ_SELECT} WHERE i.namespace = :ns AND {LIVE_MEMORY} ORDER BY i.seq DESC",
                params,
            )
        # The stored state narrows by the index; an expired one may still be stored active.
        stored = set(states) | ({"active"} if "expired" in states else set())
        params["stored"] = json.dumps(sorted(stored))
        params["states"] = json.dumps(list(states))
        return self._read_rows(
            f"{READ_SELECT} WHERE i.namespace = :ns AND {LIVE_MEMORY}"
            " AND i.state IN (SELECT value FROM json_each(:stored))"
            f" AND ({STATE_AT_NOW}) IN (SELECT value FROM json_each(:states))"
            " ORDER BY i.seq DESC",
            params,
        )

    def get(
        self, namespace: str, memory_id: str, *, now: datetime | None = None
    ) -> IntentionRow | None:
        """One intention by its memory id, in any state (as of ``now``)."""
        rows = self._read_rows(
            f"{READ_SELECT} WHERE i.namespace = :ns AND m.id = :id AND {LIVE_MEMORY}",
            {"ns": namespace, "id": memory_id, "now": _now(now)},
        )
        return rows[0] if rows else None

    def cancel(self, namespace: str, memory_id: str, now: datetime) -> IntentionRow | None:
        """Cancel it (when still active at ``now``) and drop its queued reminders and
        streaks, in one transaction."""

        def step(connection: apsw.Connection) -> IntentionRow | None:
            rows = _rows(
                connection,
                f"{READ_SELECT} WHERE i.namespace = :ns AND m.id = :id AND {LIVE_MEMORY}",
                {"ns": namespace, "id": memory_id, "now": to_storage(now)},
            )
            if not rows:
                return None
            seq = rows[0].seq
            if rows[0].state == "active":
                connection.execute(
                    "UPDATE intentions SET state = 'cancelled', updated_at = ? WHERE seq = ?",
                    (to_storage(now), seq),
                )
            connection.execute("DELETE FROM intention_streaks WHERE seq = ?", (seq,))
            connection.execute(
                "DELETE FROM pending_recollections WHERE seq = ? AND kind = 'reminder'", (seq,)
            )
            return _rows(
                connection,
                f"{READ_SELECT} WHERE i.seq = :seq",
                {"seq": seq, "now": to_storage(now)},
            )[0]

        return self._database.write(step)

    def candidates(self, namespace: str, lookup: Lookup) -> list[int]:
        """Seqs of active intentions with a trigger the lookup could satisfy.

        Mentions, tags and signals are found by their term index; places by the
        box around each trigger's circle that contains the sensed point. Only
        these are loaded and evaluated in full.
        """
        parts: list[str] = []
        params: dict[str, Any] = {"ns": namespace}
        for index, (kind, terms) in enumerate(sorted(lookup.terms.items())):
            if not terms:
                continue
            params[f"type{index}"] = kind
            params[f"terms{index}"] = json.dumps(list(terms))
            parts.append(
                "SELECT t.seq FROM intention_triggers t WHERE t.namespace = :ns"
                f" AND t.type = :type{index} AND t.term IS NOT NULL"
                f" AND t.term IN (SELECT value FROM json_each(:terms{index}))"
            )
        if lookup.place is not None:
            params["lat"], params["lon"] = lookup.place
            parts.append(
                "SELECT t.seq FROM intention_triggers t WHERE t.namespace = :ns"
                " AND t.low_lat IS NOT NULL AND t.low_lat <= :lat AND t.high_lat >= :lat"
                " AND t.low_lon <= :lon AND t.high_lon >= :lon"
            )
        if not parts:
            return []
        sql = (
            "SELECT i.seq FROM intentions i WHERE i.state = 'active' AND i.scheduled = 0"
            f" AND i.seq IN ({' UNION '.join(parts)}) ORDER BY i.seq"
        )
        return [int(row[0]) for row in self._database.read(sql, params)]

    def next_due(self, skip: Sequence[int] = ()) -> datetime | None:
        """The earliest due time of any active scheduled intention (every namespace) but
        the seqs in ``skip``."""
        rows = self._database.read(
            "SELECT min(next_due) FROM intentions WHERE state = 'active' AND next_due IS NOT NULL"
            " AND seq NOT IN (SELECT value FROM json_each(?))",
            (json.dumps([int(seq) for seq in skip]),),
        )
        return _time(rows[0][0]) if rows else None

    def session(self, step: Callable[[IntentionSession], T]) -> T:
        """Run ``step`` in one ``BEGIN IMMEDIATE`` transaction (lock waits retried)."""
        return self._database.write(lambda connection: step(_Session(connection)))

    def counts(self, namespace: str, *, now: datetime | None = None) -> dict[str, int]:
        """Intentions of the namespace by state as of ``now``."""
        rows = self._database.read(
            f"SELECT {STATE_AT_NOW} AS state, count(*) FROM intentions i"
            f" JOIN memories m ON m.seq = i.seq WHERE i.namespace = :ns AND {LIVE_MEMORY}"
            " GROUP BY 1",
            {"ns": namespace, "now": _now(now)},
        )
        return {str(state): int(count) for state, count in rows}
