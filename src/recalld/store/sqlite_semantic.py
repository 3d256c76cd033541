"""The SQLite side of semantic recall: the job queue, vectors, their change log, heartbeats.

Claims are atomic because each runs inside ``BEGIN IMMEDIATE`` (one writer at a
time across every process); a job is leased to one worker until
``lease_until`` and completing it checks the lease is still held, so a worker
whose lease was taken over cannot complete the job a second time (one that held its
vector through an outage settles the job, once, if it still waits and the memory's text
is the one embedded: :func:`recalld.store.semantic.completes`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar, cast

import apsw
import numpy as np

from recalld._text import new_id
from recalld._time import from_storage, to_storage
from recalld.errors import DatabaseLockedError, StorageError
from recalld.model import Memory
from recalld.store.base import Scope
from recalld.store.semantic import (
    VECTOR_BYTES,
    Job,
    JobFailure,
    QueueCounts,
    VectorChanges,
    WorkerRecord,
    completes,
    stale_vectors,
    text_hash,
)
from recalld.store.sql import PENDING_JOB_STATES
from recalld.store.sqlite_connection import SQLiteDatabase
from recalld.store.sqlite_rows import SELECT_COLUMNS, row_to_memory, scope_sql

__all__ = ["SQLiteSemantic", "drop_vectors", "enqueue_embedding", "queue_again"]

T = TypeVar("T")
logger = logging.getLogger(__name__)

PENDING_STATES = "(" + ", ".join(f"'{state}'" for state in PENDING_JOB_STATES) + ")"
# The id of the model named by the ``:model`` parameter (migration 14: vectors store it).
MODEL_ID = "(SELECT id FROM vector_models WHERE name = :model)"


def _drop_other_lengths(connection: apsw.Connection, model: str, dimension: int) -> None:
    """Delete the ``model`` vectors that are not ``dimension`` float16 values long, when
    the first one is not: one row read at each backfill, not every vector. (Migration 8
    made every float32 row float16, so a float32 length is another dimension's: 384
    float32 values are 768 float16 ones.)"""
    lengths = {"model": model, "size": dimension * VECTOR_BYTES}
    first = connection.execute(
        f"SELECT length(vector) FROM vector_rows WHERE model_id = {MODEL_ID} LIMIT 1", lengths
    ).fetchone()
    if first is None or first[0] == lengths["size"]:
        return
    connection.execute(
        f"DELETE FROM vector_rows WHERE model_id = {MODEL_ID} AND length(vector) != :size",
        lengths,
    )


def enqueue_embedding(connection: apsw.Connection, seq: int, model: str, now: datetime) -> str:
    """Queue an embedding job for memory ``seq`` inside the caller's transaction."""
    job_id = new_id()
    stamp = to_storage(now)
    connection.execute(
        "INSERT INTO jobs(id, seq, kind, model, state, attempts, run_after, created_at, updated_at)"
        " VALUES (?, ?, 'embed', ?, 'queued', 0, ?, ?, ?)",
        (job_id, seq, model, stamp, stamp, stamp),
    )
    return job_id


def drop_vectors(
    connection: apsw.Connection, seq: int, now: datetime, own_model: str | None
) -> None:
    """:meth:`recalld.store.base.StoreTransaction.drop_vectors` inside the caller's
    transaction."""
    had: list[tuple[Any, ...]] = connection.execute(
        "SELECT m.name FROM vector_rows r JOIN vector_models m ON m.id = r.model_id"
        " WHERE r.seq = ?",
        (seq,),
    ).fetchall()
    # vector_log records each deletion, so every process's index drops the row.
    connection.execute("DELETE FROM vector_rows WHERE seq = ?", (seq,))
    others = [str(name) for (name,) in had if name != own_model]
    for model in others:
        enqueue_embedding(connection, seq, model, now)
    if others:
        connection.execute("UPDATE memories SET index_state = 'queued' WHERE seq = ?", (seq,))


def _job(row: Sequence[Any], model: str, attempts: int) -> Job:
    """A claimed job from a row ``(job id, seq, attempts, memory id, namespace, title,
    content, ..., place name, key)``."""
    return Job(
        id=row[0],
        seq=int(row[1]),
        model=model,
        attempts=attempts,
        memory_id=row[3],
        namespace=row[4],
        title=row[5],
        content=row[6],
        place_name=row[-2],
        key=row[-1],
    )


def _counts(row: Sequence[Any], stamp: str) -> int:
    """1 when claiming the job (``claim_for_recall``'s row) is an attempt: it was queued,
    or its lease expired; 0 when it takes over a live lease."""
    return 0 if row[7] == "running" and str(row[9]) > stamp else 1


class SQLiteSemantic:
    """:class:`recalld.store.semantic.SemanticStore` on the store's connections."""

    def __init__(self, database: SQLiteDatabase) -> None:
        self._database = database

    def _transact(self, operation: Callable[[apsw.Connection], T]) -> T:
        return self._database.write(operation)

    def _read(self, sql: str, params: dict[str, Any] | tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._database.read(sql, params)

    # -- jobs ------------------------------------------------------------------

    def claim_jobs(
        self,
        worker_id: str,
        model: str,
        limit: int,
        now: datetime,
        lease_until: datetime,
        max_attempts: int,
    ) -> list[Job]:
        stamp = to_storage(now)

        def step(connection: apsw.Connection) -> list[Job]:
            # A lease that expired this many times means the job kills its workers.
            doomed = connection.execute(
                "SELECT id, seq FROM jobs WHERE kind = 'embed' AND model = :model"
                " AND state = 'running'"
                " AND lease_until <= :now AND attempts >= :max",
                {"now": stamp, "model": model, "max": max_attempts},
            ).fetchall()
            for job_id, seq in doomed:
                connection.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, updated_at = ?,"
                    " last_error = 'the worker holding it stopped (lease expired) '"
                    " || attempts || ' times' WHERE id = ?",
                    (stamp, job_id),
                )
                # Unless a newer job (an edit's) still waits: it is what the memory is now.
                connection.execute(
                    "UPDATE memories SET index_state = 'failed' WHERE seq = ?"
                    " AND NOT EXISTS (SELECT 1 FROM jobs WHERE seq = memories.seq"
                    f" AND +kind = 'embed' AND state IN {PENDING_STATES})",
                    (seq,),
                )
            rows: list[tuple[Any, ...]] = connection.execute(
                "SELECT j.id, j.seq, j.attempts, m.id, m.namespace, m.title, m.content,"
                " m.place_name, m.key FROM jobs j JOIN memories m ON m.seq = j.seq"
                " WHERE j.kind = 'embed' AND j.model = :model AND ("
                "   (j.state = 'queued' AND j.run_after <= :now)"
                "   OR (j.state = 'running' AND j.lease_until <= :now))"
                " ORDER BY j.run_after, j.id LIMIT :limit",
                {"model": model, "now": stamp, "limit": limit},
            ).fetchall()
            if not rows:
                return []
            connection.executemany(
                "UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?,"
                " attempts = attempts + 1, updated_at = ? WHERE id = ?",
                [(worker_id, to_storage(lease_until), stamp, row[0]) for row in rows],
            )
            return [_job(row, model, int(row[2]) + 1) for row in rows]

        return self._transact(step)

    def claim_for_recall(
        self,
        worker_id: str,
        model: str,
        namespaces: Sequence[str],
        limit: int,
        now: datetime,
        lease_until: datetime,
    ) -> list[Job] | None:
        stamp = to_storage(now)
        params: dict[str, Any] = {
            "model": model,
            "namespaces": json.dumps(list(namespaces)),
            "bound": limit + 1,
        }
        # Off the partial index of queued memories (migration 17): another namespace's
        # bulk load is never walked.
        pending = (
            # "+": each queued memory's jobs by seq, never a walk of every pending job.
            " FROM memories m INDEXED BY memories_queued JOIN jobs j ON j.seq = m.seq"
            " AND +j.kind = 'embed' AND j.model = :model"
            f" AND j.state IN {PENDING_STATES}"
            " WHERE m.namespace IN (SELECT value FROM json_each(:namespaces))"
            " AND m.index_state = 'queued' LIMIT :bound"
        )
        count = len(self._read(f"SELECT 1{pending}", params))
        if count == 0:
            return []
        if count > limit:
            return None

        def step(connection: apsw.Connection) -> list[Job] | None:
            rows: list[tuple[Any, ...]] = connection.execute(
                "SELECT j.id, j.seq, j.attempts, m.id, m.namespace, m.title, m.content,"
                f" j.state, j.run_after, j.lease_until, m.place_name, m.key{pending}",
                params,
            ).fetchall()
            if len(rows) > limit:
                return None
            # A job queued again after a failure waits for its time, as a worker's claim does.
            due = [row for row in rows if row[7] == "running" or str(row[8]) <= stamp]
            # Taking over a live lease is no new attempt: concurrent recalls must not use
            # up a job's attempts while its worker is still at it.
            connection.executemany(
                "UPDATE jobs SET state = 'running', lease_owner = ?, lease_until = ?,"
                " attempts = attempts + ?, updated_at = ? WHERE id = ?",
                [
                    (worker_id, to_storage(lease_until), _counts(row, stamp), stamp, row[0])
                    for row in due
                ],
            )
            return [_job(row, model, int(row[2]) + _counts(row, stamp)) for row in due]

        try:
            # Not waiting out the write lock: waited for, a recall failed after
            # RECALLD_LOCK_RETRY_SECONDS while another process wrote (a read must not);
            # an ordinary write is waited for (busy_timeout, a second at most: see run_once).
            return self._database.write(step, wait=False)
        except DatabaseLockedError:
            logger.debug(
                "%s: a recall's catch-up skipped: another write holds the lock",
                self._database.path,
            )
            return []

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[Job, str, bytes]],
        dimension: int,
        now: datetime,
    ) -> int:
        def step(connection: apsw.Connection) -> int:
            completed = 0
            connection.execute("INSERT OR IGNORE INTO vector_models(name) VALUES (?)", (model,))
            # One stored vector's length stands for the model's (the backfill drops those of
            # another, see _drop_other_lengths): nothing else keeps a held vector of another
            # dimension out of another worker's job (PostgreSQL's index per dimension does).
            stored = connection.execute(
                f"SELECT length(vector) FROM vector_rows WHERE model_id = {MODEL_ID} LIMIT 1",
                {"model": model},
            ).fetchone()
            for job, digest, vector in results:
                held = connection.execute(
                    "SELECT state, lease_owner, model FROM jobs WHERE id = ?", (job.id,)
                ).fetchone()
                if held is None:
                    continue
                memory = connection.execute(
                    "SELECT title, content, place_name, key FROM memories WHERE seq = ?",
                    (job.seq,),
                ).fetchone()
                agrees = stored is None or int(stored[0]) == len(vector)
                if not completes(held, worker_id, model, memory, digest, agrees):
                    continue
                # The memory changed after the claim: its newer job embeds the new text.
                if memory is not None and text_hash(*memory) == digest:
                    connection.execute(
                        "INSERT INTO vector_rows(seq, model_id, text_hash, vector)"
                        f" VALUES (:seq, {MODEL_ID}, :digest, :vector)"
                        " ON CONFLICT(seq, model_id) DO UPDATE SET"
                        " text_hash = excluded.text_hash, vector = excluded.vector",
                        {"seq": job.seq, "model": model, "digest": digest, "vector": vector},
                    )
                    # The memory's vector is of its text now: any other job of this model
                    # would embed that text again (an old one a worker holds, kept the
                    # memory queued until settled, or a lease later if that worker died).
                    connection.execute(
                        "DELETE FROM jobs WHERE seq = ? AND +kind = 'embed' AND model = ?"
                        f" AND state IN {PENDING_STATES} AND id != ?",
                        (job.seq, model, job.id),
                    )
                # A done job is deleted at once: status counts done work from the
                # vectors, and 100k done rows were 30 MB of pages nobody read.
                connection.execute("DELETE FROM jobs WHERE id = ?", (job.id,))
                connection.execute(
                    "UPDATE memories SET index_state = 'indexed' WHERE seq = :seq AND NOT EXISTS"
                    f" (SELECT 1 FROM jobs WHERE seq = :seq AND +kind = 'embed' AND model = :model"
                    f" AND state IN {PENDING_STATES})",
                    {"seq": job.seq, "model": model},
                )
                completed += 1
            return completed

        return self._transact(step)

    def retry_job(
        self, worker_id: str, job: Job, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        stamp = to_storage(now)

        def step(connection: apsw.Connection) -> None:
            if run_after is None:
                connection.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_until = NULL,"
                    " last_error = ?, updated_at = ? WHERE id = ? AND lease_owner = ?",
                    (error[:2000], stamp, job.id, worker_id),
                )
                if connection.changes():
                    # Unless a newer job (an edit's) still waits: it is what the memory is.
                    connection.execute(
                        "UPDATE memories SET index_state = 'failed' WHERE seq = ?"
                        " AND NOT EXISTS (SELECT 1 FROM jobs WHERE seq = memories.seq"
                        f" AND +kind = 'embed' AND state IN {PENDING_STATES})",
                        (job.seq,),
                    )
                return
            connection.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
                " last_error = ?, run_after = ?, updated_at = ? WHERE id = ? AND lease_owner = ?",
                (error[:2000], to_storage(run_after), stamp, job.id, worker_id),
            )

        self._transact(step)

    def release_jobs(self, worker_id: str, jobs: Sequence[Job], now: datetime) -> int:
        ids = [job.id for job in jobs]
        return self._transact(lambda connection: release_leased(connection, worker_id, ids, now))

    def backfill_jobs(
        self,
        model: str,
        now: datetime,
        dimension: int | None = None,
        *,
        retry_failed: bool = False,
    ) -> int:
        def step(connection: apsw.Connection) -> int:
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'embed' AND model != ?"
                " AND state IN ('queued', 'failed')",
                (model,),
            )
            if retry_failed:  # gone, so their memories are queued again below
                connection.execute(
                    "DELETE FROM jobs WHERE kind = 'embed' AND model = ? AND state = 'failed'",
                    (model,),
                )
            if dimension is not None:
                _drop_other_lengths(connection, model, dimension)
            # Made from an older text (see stale_vectors): gone, so queued again below.
            stale = stale_vectors(
                connection.execute(
                    "SELECT m.seq, v.text_hash, m.title, m.content, m.place_name, m.key"
                    " FROM memories m JOIN vector_rows v ON v.seq = m.seq"
                    f" AND v.model_id = {MODEL_ID}"
                    " WHERE coalesce(m.place_name, '') != '' OR m.key IS NOT NULL",
                    {"model": model},
                ).fetchall()
            )
            connection.executemany(
                f"DELETE FROM vector_rows WHERE seq = :seq AND model_id = {MODEL_ID}",
                [{"seq": seq, "model": model} for seq in stale],
            )
            missing: list[tuple[Any, ...]] = connection.execute(
                "SELECT m.seq FROM memories m WHERE NOT EXISTS"
                f" (SELECT 1 FROM vector_rows v WHERE v.seq = m.seq AND v.model_id = {MODEL_ID})"
                # "+": look the memory's jobs up by seq, never scan jobs by kind (quadratic).
                " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = m.seq AND +j.kind = 'embed'"
                " AND j.model = :model AND j.state IN ('queued', 'running', 'failed'))",
                {"model": model},
            ).fetchall()
            for (seq,) in missing:
                enqueue_embedding(connection, int(seq), model, now)
            connection.executemany(
                "UPDATE memories SET index_state = 'queued' WHERE seq = ?",
                [(int(seq),) for (seq,) in missing],
            )
            return len(missing)

        return self._transact(step)

    def pending_jobs(self, model: str) -> int:
        rows = self._read(
            "SELECT count(*) FROM jobs WHERE kind = 'embed' AND model = ?"
            f" AND state IN {PENDING_STATES}",
            (model,),
        )
        return int(rows[0][0])

    def drop_other_models(self, model: str) -> int:
        other = self._read(
            "SELECT 1 FROM vector_rows WHERE model_id IN"
            " (SELECT id FROM vector_models WHERE name != ?) LIMIT 1",
            (model,),
        )
        if not other:
            return 0

        def step(connection: apsw.Connection) -> int:
            connection.execute(
                "DELETE FROM vector_rows WHERE model_id IN"
                " (SELECT id FROM vector_models WHERE name != ?)",
                (model,),
            )
            removed = int(connection.changes())
            connection.execute("DELETE FROM vector_log WHERE model != ?", (model,))
            return removed

        return self._transact(step)

    def purge_done_jobs(self, before: datetime) -> int:
        def step(connection: apsw.Connection) -> int:
            connection.execute(
                "DELETE FROM jobs WHERE state = 'done' AND completed_at < ?", (to_storage(before),)
            )
            return int(connection.changes())

        return self._transact(step)

    def compact_vector_log(self) -> int:
        def step(connection: apsw.Connection) -> int:
            # A process catching up needs each memory's newest change only.
            connection.execute(
                "DELETE FROM vector_log WHERE change NOT IN"
                " (SELECT max(change) FROM vector_log GROUP BY seq, model)"
            )
            return int(connection.changes())

        return self._transact(step)

    # -- vectors -----------------------------------------------------------------

    def last_vector_change(self, model: str) -> int:
        rows = self._read("SELECT max(change) FROM vector_log WHERE model = ?", (model,))
        return int(rows[0][0] or 0)

    def vector_changes(self, model: str, after_change: int) -> VectorChanges:
        if after_change <= 0:
            last = self.last_vector_change(model)
            rows = self._read(
                # CROSS JOIN: walk the vectors in seq order (the planner may not know
                # vector_rows yet, and then sorted every memory instead).
                "SELECT v.seq, m.namespace, v.vector FROM vector_rows v"
                f" CROSS JOIN memories m ON m.seq = v.seq WHERE v.model_id = {MODEL_ID}"
                " ORDER BY v.seq",
                {"model": model},
            )
            return VectorChanges(
                last_change=last,
                upserts=[(int(seq), str(namespace), bytes(blob)) for seq, namespace, blob in rows],
                deletes=[],
            )
        rows = self._read(
            "SELECT l.seq, max(l.change), m.namespace, v.vector FROM vector_log l"
            f" LEFT JOIN vector_rows v ON v.seq = l.seq AND v.model_id = {MODEL_ID}"
            " LEFT JOIN memories m ON m.seq = l.seq"
            " WHERE l.model = :model AND l.change > :after GROUP BY l.seq",
            {"model": model, "after": after_change},
        )
        upserts: list[tuple[int, str, bytes]] = []
        deletes: list[int] = []
        last = after_change
        for seq, change, namespace, blob in rows:
            last = max(last, int(change))
            if blob is None or namespace is None:
                deletes.append(int(seq))
            else:
                upserts.append((int(seq), str(namespace), bytes(blob)))
        return VectorChanges(last_change=last, upserts=upserts, deletes=deletes)

    def vectors_for(self, model: str, seqs: Sequence[int]) -> dict[int, bytes]:
        if not seqs:
            return {}
        rows = self._read(
            f"SELECT seq, vector FROM vector_rows WHERE model_id = {MODEL_ID}"
            " AND seq IN (SELECT value FROM json_each(:seqs))",
            {"model": model, "seqs": json.dumps([int(seq) for seq in seqs])},
        )
        return {int(seq): bytes(blob) for seq, blob in rows}

    def vector_rows(self, model: str, after_seq: int, limit: int) -> list[tuple[int, str, bytes]]:
        rows = self._read(
            "SELECT v.seq, m.namespace, v.vector FROM vector_rows v"
            " CROSS JOIN memories m NOT INDEXED ON m.seq = v.seq"
            f" WHERE v.model_id = {MODEL_ID} AND v.seq > :after ORDER BY v.seq LIMIT :limit",
            {"model": model, "after": after_seq, "limit": limit},
        )
        # apsw gives INTEGER, TEXT and BLOB columns as int, str and bytes already: the
        # page is returned as read (a conversion per row was 0.8 µs, 80 ms of a 100k load).
        return cast(list[tuple[int, str, bytes]], rows)

    def visible_seqs(self, scope: Scope) -> list[int]:
        params: dict[str, Any] = {}
        if (scope.tags_any or scope.tags_all) and not replace(
            scope, tags_any=(), tags_all=()
        ).filters_rows:
            return self._tagged_seqs(scope)
        where = scope_sql(scope, params)
        if scope.tags_any or scope.tags_all:
            # Start from the tag index (a tag filter usually keeps few memories) and
            # reach each memory by its primary key, instead of testing every memory
            # of the namespace for the tag.
            tags = list(scope.tags_any) or list(scope.tags_all)[:1]
            params["wanted_tags"] = json.dumps(tags)
            sql = (
                "SELECT DISTINCT m.seq FROM memory_tags t"
                " CROSS JOIN memories m NOT INDEXED ON m.seq = t.seq"
                f" WHERE t.tag IN (SELECT value FROM json_each(:wanted_tags)) AND {where}"
            )
        else:
            sql = f"SELECT m.seq FROM memories m WHERE {where}"
        return self._seq_list(sql, params)

    def any_visible(self, scope: Scope) -> bool:
        params: dict[str, Any] = {}
        where = scope_sql(scope, params)
        found = self._read(f"SELECT EXISTS (SELECT 1 FROM memories m WHERE {where})", params)
        return bool(found[0][0])

    def _seq_list(self, sql: str, params: dict[str, Any]) -> list[int]:
        """The seqs ``sql`` selects, read as one row (their comma-separated list).

        A row per seq gave the GIL back and took it again for each of them: with the
        caller's thread busy beside the vector search's, the 10,000 memories under a
        tag held by 1% of 1M took 3-5 ms to list instead of 1.8 alone. numpy parses
        the list (10,000 seqs: 0.2 ms, against 0.8 for ``int`` on each).
        """
        found = self._read(f"SELECT group_concat(seq) FROM ({sql})", params)
        text = str(found[0][0]) if found and found[0][0] is not None else ""
        if not text:
            return []
        unreadable = StorageError(f"the list of visible memories could not be read: {text[:40]!r}")
        try:
            seqs = np.fromstring(text, dtype=np.int64, sep=",")
        except ValueError as error:  # when warnings are errors; else numpy stops short
            raise unreadable from error
        if len(seqs) != text.count(",") + 1:
            raise unreadable
        return list(seqs.tolist())

    def _tagged_seqs(self, scope: Scope) -> list[int]:
        """The memories holding the scope's tags that have not expired, from the tag index
        alone: the caller's vector index keeps to the scope's namespaces itself.

        Reaching each tagged memory's row to read its namespace cost 14 of the 48 ms
        of a recall under a tag held by 1% of 1M memories (10,000 row lookups); the
        tag index answers in about 1 ms, and the few expired memories not purged yet
        come from the expiry index.
        """
        params: dict[str, Any] = {}
        parts = []
        if scope.tags_any:
            params["any"] = json.dumps(list(scope.tags_any))
            parts.append(
                "SELECT seq FROM memory_tags WHERE tag IN (SELECT value FROM json_each(:any))"
            )
        for index, tag in enumerate(scope.tags_all):
            params[f"all{index}"] = tag
            parts.append(f"SELECT seq FROM memory_tags WHERE tag = :all{index}")
        sql = " INTERSECT ".join(parts)
        if not scope.include_expired:
            params["now"] = to_storage(scope.now)
            sql += (
                " EXCEPT SELECT seq FROM memories"
                " WHERE expires_at IS NOT NULL AND expires_at <= :now"
            )
        return self._seq_list(sql, params)

    def visible_memories(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Memory]:
        if not seqs:
            return {}
        params: dict[str, Any] = {"seqs": json.dumps([int(seq) for seq in seqs])}
        where = scope_sql(scope, params)
        # NOT INDEXED: reach the rows by primary key. Without it SQLite walked the
        # (namespace, geohash) index over every row of the namespace (13.9 ms at
        # 100k, against 0.08 ms for ~50 primary-key lookups).
        rows = self._read(
            f"SELECT {SELECT_COLUMNS} FROM memories m NOT INDEXED"
            f" WHERE m.seq IN (SELECT value FROM json_each(:seqs)) AND {where}",
            params,
        )
        return {int(row[0]): row_to_memory(row) for row in rows}

    # -- status ------------------------------------------------------------------

    def queue_counts(self, namespaces: Sequence[str], failures_limit: int) -> QueueCounts:
        params: dict[str, Any] = {"limit": failures_limit}
        names = []
        for index, namespace in enumerate(namespaces):
            params[f"ns{index}"] = namespace
            names.append(f":ns{index}")
        inside = f"m.namespace IN ({', '.join(names) or 'NULL'})"
        jobs = self._read(
            f"SELECT j.state, count(*) FROM jobs j JOIN memories m ON m.seq = j.seq"
            f" WHERE j.kind = 'embed' AND {inside} GROUP BY 1",
            params,
        )
        vectors = self._read(
            f"SELECT v.model, count(*) FROM vectors v JOIN memories m ON m.seq = v.seq"
            f" WHERE {inside} GROUP BY 1 ORDER BY 1",
            params,
        )
        states = self._read(
            f"SELECT m.index_state, count(*) FROM memories m WHERE {inside} GROUP BY 1", params
        )
        failures = self._read(
            "SELECT j.id, m.id, m.namespace, j.model, j.state, j.attempts, j.last_error,"
            " j.updated_at FROM jobs j JOIN memories m ON m.seq = j.seq"
            f" WHERE j.kind = 'embed' AND {inside}"
            " AND (j.state = 'failed' OR j.last_error IS NOT NULL)"
            " ORDER BY j.updated_at DESC LIMIT :limit",
            params,
        )
        by_state = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        by_state.update({str(state): int(count) for state, count in jobs})
        # Done jobs are deleted on completion (older databases may still hold some):
        # the work done is the vectors stored.
        by_state["done"] = sum(int(count) for _, count in vectors)
        return QueueCounts(
            jobs_by_state=by_state,
            embeddings_by_model={str(model): int(count) for model, count in vectors},
            memories_by_index_state={str(state): int(count) for state, count in states},
            failures=[
                JobFailure(
                    job_id=row[0],
                    memory_id=row[1],
                    namespace=row[2],
                    model=row[3],
                    state=row[4],
                    attempts=int(row[5]),
                    error=row[6],
                    updated_at=from_storage(row[7]),
                )
                for row in failures
            ],
        )

    def heartbeat(self, record: WorkerRecord) -> None:
        def step(connection: apsw.Connection) -> None:
            connection.execute(
                "INSERT INTO workers(id, pid, host, model, state, started_at, heartbeat_at,"
                " processed, failed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET state = excluded.state,"
                " heartbeat_at = excluded.heartbeat_at, processed = excluded.processed,"
                " failed = excluded.failed",
                (
                    record.id,
                    record.pid,
                    record.host,
                    record.model,
                    record.state,
                    to_storage(record.started_at),
                    to_storage(record.heartbeat_at),
                    record.processed,
                    record.failed,
                ),
            )
            # Keep the table small: forget workers silent for a week.
            connection.execute(
                "DELETE FROM workers WHERE heartbeat_at < strftime('%Y-%m-%dT%H:%M:%fZ',"
                " 'now', '-7 days') AND id != ?",
                (record.id,),
            )

        self._transact(step)

    def workers(self) -> list[WorkerRecord]:
        rows = self._read(
            "SELECT id, pid, host, model, state, started_at, heartbeat_at, processed, failed"
            " FROM workers ORDER BY heartbeat_at DESC",
            (),
        )
        return [
            WorkerRecord(
                id=row[0],
                pid=int(row[1]),
                host=row[2],
                model=row[3],
                state=row[4],
                started_at=from_storage(row[5]),
                heartbeat_at=from_storage(row[6]),
                processed=int(row[7]),
                failed=int(row[8]),
            )
            for row in rows
        ]


def queue_again(
    connection: apsw.Connection, kind: str, seq: int, model: str, now: datetime
) -> str | None:
    """The id of memory ``seq``'s ``kind`` job of ``model`` that still waits (not claimed),
    made due now with its attempts from zero, inside the caller's transaction; None when
    there is none. An edit queues its memory again: a job beside the waiting one made the
    worker embed (or extract) the same new text once per edit, since a claim reads the
    memory's text as it is then."""
    row = connection.execute(
        "SELECT id FROM jobs WHERE seq = ? AND model = ? AND state = 'queued' AND kind = ? LIMIT 1",
        (seq, model, kind),
    ).fetchone()
    if row is None:
        return None
    stamp = to_storage(now)
    connection.execute(
        "UPDATE jobs SET attempts = 0, last_error = NULL, run_after = min(run_after, ?),"
        " updated_at = ? WHERE id = ?",
        (stamp, stamp, row[0]),
    )
    return str(row[0])


def release_leased(
    connection: apsw.Connection, worker_id: str, ids: Sequence[str], now: datetime
) -> int:
    """Queue again the jobs of ``ids`` that ``worker_id`` holds (embedding or graph), with
    the attempt their claim counted taken back: the store's failure was no fault of the
    job, and counting it would fail the job for good after a long enough outage. Returns
    how many were handed back."""
    stamp = to_storage(now)
    released = 0
    for job_id in ids:
        connection.execute(
            "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
            " attempts = MAX(attempts - 1, 0), run_after = ?, updated_at = ?"
            " WHERE id = ? AND lease_owner = ? AND state = 'running'",
            (stamp, stamp, job_id, worker_id),
        )
        released += connection.changes()
    return released
