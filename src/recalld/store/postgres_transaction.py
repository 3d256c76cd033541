"""A write transaction on PostgreSQL: the primitive operations :meth:`PostgresStore.transaction`
yields, on one connection (split from :mod:`.postgres`, which had grown past the house limit).

A write transaction takes a transaction-scoped advisory lock on each key and client id
it looks up (:meth:`PostgresTransaction.find`; ids are unique per namespace) and row
locks on what it rewrites, so two servers writing the same key serialise exactly as two
processes do on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from recalld._text import content_hash, normalized_content
from recalld.errors import ConflictError, StorageError, ValidationError
from recalld.model import Memory
from recalld.store.base import MemoryRecord
from recalld.store.context import rewritten_pending
from recalld.store.grams import GRAMS_COLUMN, record_grams
from recalld.store.intentions import IntentionRecord, ReminderDraft
from recalld.store.postgres_connection import Connection
from recalld.store.postgres_context import save_signals
from recalld.store.postgres_graph import enqueue_graph
from recalld.store.postgres_graph_extraction import lock_extraction_rows
from recalld.store.postgres_graph_writes import PostgresGraphTransaction, TombstoneWork
from recalld.store.postgres_intentions import queue_reminder, save_intention
from recalld.store.postgres_job_rows import queue_again
from recalld.store.postgres_rows import SELECT_COLUMNS, WRITE_COLUMNS, record_values, row_to_memory
from recalld.store.postgres_scrub import record_drop
from recalld.store.postgres_semantic import enqueue_embedding
from recalld.store.postgres_tables import PostgresLedger

__all__ = ["PostgresTransaction"]


def _lock_key(kind: str, *parts: str) -> str:
    return kind + ":" + "\x1f".join(parts)


def _holds_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character in any key or string."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    return False


def _refuse_nul(record: MemoryRecord) -> None:
    """Refuse, naming the field, what PostgreSQL's text and jsonb cannot hold (a NUL), before
    the statement: a failed statement would abort the caller's transaction (an import goes
    on with its other lines). The service refuses it in content, title and meta on every
    store; this catches what reaches the store another way (a migrate of older data)."""
    fields = {
        "id": record.id,
        "key": record.key,
        "title": record.title,
        "content": record.content,
        "kind": record.kind,
        "category": record.category,
        "tags": record.tags,
        "source": record.source,
        "speaker": record.speaker,
        "meta": record.meta,
        "place.name": None if record.place is None else record.place.name,
    }
    for name, value in fields.items():
        if _holds_nul(value):
            raise ValidationError(
                name, "holds a NUL character (U+0000), which PostgreSQL cannot store; remove it"
            )


class PostgresTransaction(PostgresLedger):
    """Primitive operations on one connection inside a transaction."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._tombstones = TombstoneWork()
        # One for the transaction: it remembers the entities it found (see delete_entity).
        self._graph = PostgresGraphTransaction(connection, self._tombstones)

    def finish(self) -> None:
        """The transaction's last writes, before it commits: its tombstones (see
        :class:`.postgres_graph_writes.TombstoneWork`)."""
        self._tombstones.finish(self._connection)

    def _one(self, sql: str, params: dict[str, Any]) -> Memory | None:
        row = self._connection.execute(sql, params).fetchone()
        return None if row is None else row_to_memory(row)

    def _lock(self, key: str) -> None:
        # Held until commit: a concurrent writer of the same key or id waits, then
        # sees the committed row (READ COMMITTED re-reads on its next statement).
        self._connection.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def serialise(self, *name: str) -> None:
        self._lock(_lock_key("serialise", *name))

    def find(
        self, namespace: str, *, id: str | None = None, key: str | None = None
    ) -> Memory | None:
        if id is not None:
            self._lock(_lock_key("id", namespace, id))
            return self._one(
                f"SELECT {SELECT_COLUMNS} FROM memories m"
                " WHERE m.namespace = %(ns)s AND m.id = %(id)s FOR UPDATE",
                {"ns": namespace, "id": id},
            )
        assert key is not None
        self._lock(_lock_key("key", namespace, key))
        return self._one(
            f"SELECT {SELECT_COLUMNS} FROM memories m"
            " WHERE m.namespace = %(ns)s AND m.key = %(key)s FOR UPDATE",
            {"ns": namespace, "key": key},
        )

    def _write_tags(self, seq: int, tags: Sequence[str]) -> None:
        self._connection.execute("DELETE FROM memory_tags WHERE seq = %s", (seq,))
        if tags:
            with self._connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memory_tags(seq, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    [(seq, tag) for tag in tags],
                )

    def _read(self, seq: int) -> Memory:
        memory = self._one(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.seq = %(seq)s", {"seq": seq}
        )
        if memory is None:  # pragma: no cover - the row was written in this transaction
            raise StorageError(f"row {seq} vanished inside its own transaction")
        return memory

    def insert(self, record: MemoryRecord) -> Memory:
        _refuse_nul(record)
        placeholders = ", ".join("%s" for _ in WRITE_COLUMNS)
        # ON CONFLICT DO NOTHING keeps the transaction usable (an import goes on
        # with its other lines), where a raised unique violation would abort it.
        row = self._connection.execute(
            f"INSERT INTO memories({', '.join(WRITE_COLUMNS)}, content_hash, {GRAMS_COLUMN})"
            f" VALUES ({placeholders}, %s, %s) ON CONFLICT DO NOTHING RETURNING seq",
            (*record_values(record), content_hash(record.content), record_grams(record)),
        ).fetchone()
        if row is None:
            if self.find(record.namespace, id=record.id) is not None:
                raise ConflictError(
                    "id", f"a memory with id {record.id!r} already exists in {record.namespace!r}"
                )
            raise ConflictError(
                "key", f"key {record.key!r} already names a memory in {record.namespace!r}"
            )
        seq = int(row[0])
        self._write_tags(seq, record.tags)
        return self._read(seq)

    def replace(self, seq: int, record: MemoryRecord) -> Memory:
        _refuse_nul(record)
        assignments = ", ".join(f"{name} = %s" for name in WRITE_COLUMNS)
        self._connection.execute(
            f"UPDATE memories SET {assignments}, content_hash = %s, {GRAMS_COLUMN} = %s"
            f" WHERE seq = %s",
            (*record_values(record), content_hash(record.content), record_grams(record), seq),
        )
        self._write_tags(seq, record.tags)
        memory = self._read(seq)
        queued = self._connection.execute(
            "SELECT id, kind, details FROM pending_recollections WHERE seq = %s", (seq,)
        ).fetchall()
        for item, kind, details in queued:
            line, rewritten = rewritten_pending(memory, str(kind), details)
            self._connection.execute(
                "UPDATE pending_recollections SET prompt_line = %s, details = %s WHERE id = %s",
                (line, None if rewritten is None else Jsonb(rewritten), item),
            )
        return memory

    def delete(self, seq: int) -> None:
        lock_extraction_rows(self._connection, [seq])  # the order the workers take them in
        deleted = self._connection.execute(
            "DELETE FROM memories WHERE seq = %s RETURNING namespace", (seq,)
        ).fetchall()
        if deleted:
            self._tombstones.memory_deleted(str(deleted[0][0]), seq)

    def find_duplicate(
        self,
        namespace: str,
        content: str,
        now: datetime,
        at: datetime | None = None,
        speaker: str | None = None,
        accept: Callable[[Memory], bool] | None = None,
    ) -> Memory | None:
        digest = content_hash(content)
        # Two servers writing the same text at once serialise here, as two processes do on
        # SQLite's single writer: the second sees the first's committed row (READ COMMITTED).
        self._lock(_lock_key("content", namespace, digest))
        same_at = "" if at is None else " AND m.at_utc = %(at)s"
        same_speaker = "" if speaker is None else " AND m.speaker = %(speaker)s"
        rows = self._connection.execute(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.namespace = %(ns)s"
            " AND m.content_hash = %(hash)s AND m.key IS NULL"
            f" AND (m.expires_at IS NULL OR m.expires_at > %(now)s){same_at}{same_speaker}"
            " ORDER BY m.seq",
            {"ns": namespace, "hash": digest, "now": now, "at": at, "speaker": speaker},
        ).fetchall()
        wanted = normalized_content(content)
        for row in rows:
            memory = row_to_memory(row)
            if normalized_content(memory.content) == wanted and (accept is None or accept(memory)):
                return memory
        return None

    def dropped_content(self, reason: str, now: datetime) -> None:
        record_drop(self._connection, reason, now)

    def extend_expiry(self, seq: int, expires_at: datetime | None, now: datetime) -> bool:
        # One statement on the row's two columns: a concurrent edit waits or is waited
        # for, and is never written back over.
        changed = self._connection.execute(
            "UPDATE memories SET expires_at = %(expires)s, updated_at = %(now)s"
            " WHERE seq = %(seq)s AND expires_at IS NOT NULL"
            " AND (%(expires)s::timestamptz IS NULL OR expires_at < %(expires)s)",
            {"seq": seq, "expires": expires_at, "now": now},
        ).rowcount
        return changed > 0

    def touch(self, seqs: Sequence[int], now: datetime) -> None:
        # In seq order, so two recalls touching the same rows cannot deadlock.
        with self._connection.cursor() as cursor:
            cursor.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s"
                " WHERE seq = %s",
                [(now, seq) for seq in sorted(set(seqs))],
            )

    def enqueue_embedding(self, seq: int, model: str, now: datetime) -> str:
        waiting = queue_again(self._connection, "embed", seq, model, now)
        return waiting or enqueue_embedding(self._connection, seq, model, now)

    def save_signals(
        self, seq: int, features: dict[str, bytes], biometrics: dict[str, float]
    ) -> None:
        save_signals(self._connection, seq, features, biometrics)

    def save_intention(self, seq: int, record: IntentionRecord) -> None:
        save_intention(self._connection, seq, record)

    def queue_reminder(self, reminder: ReminderDraft, fired_at: datetime) -> None:
        queue_reminder(self._connection, reminder, fired_at)

    def enqueue_graph(self, seq: int, model: str, now: datetime) -> str:
        waiting = queue_again(self._connection, "graph", seq, model, now)
        return waiting or enqueue_graph(self._connection, seq, model, now)

    def drop_vectors(self, seq: int, now: datetime, own_model: str | None) -> None:
        had = self._connection.execute(
            "DELETE FROM vectors WHERE seq = %s RETURNING model", (seq,)
        ).fetchall()
        others = [str(name) for (name,) in had if name != own_model]
        for model in others:
            enqueue_embedding(self._connection, seq, model, now)
        if others:
            self._connection.execute(
                "UPDATE memories SET index_state = 'queued' WHERE seq = %s", (seq,)
            )

    @property
    def graph(self) -> PostgresGraphTransaction:
        """The knowledge graph's writes inside this transaction."""
        return self._graph
