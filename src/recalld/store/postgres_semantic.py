"""The PostgreSQL side of semantic recall: the job queue, pgvector vectors, heartbeats.

* **Claims** select due jobs ``FOR UPDATE SKIP LOCKED`` and lease them in the
  same statement, so workers on any number of machines take disjoint batches
  without waiting on each other; a lease that expired is taken over, and one
  that expired ``max_attempts`` times fails the job (as on SQLite). Completing
  a job locks its memory (``FOR NO KEY UPDATE``: completions and failures of one
  memory's jobs run one at a time, so the last one sets its index state) and then
  the job, checks the lease is still held (or the job still waits, see
  :func:`~recalld.store.semantic.completes`) and the text unchanged, and stores the
  vector, in one transaction.
* **Vectors** are ``halfvec`` rows (float16, like SQLite's blobs). Each model
  gets a partial HNSW index (cosine) over ``embedding::halfvec(<dimension>)``
  the first time one of its vectors is stored, and :meth:`PostgresSemantic.nearest`
  asks that index for the ``k`` best rows *with the scope applied in the same
  query* (namespace wall, filters, expiry). Every connection runs with
  ``hnsw.iterative_scan = relaxed_order``, so a selective filter makes the index
  scan go on until ``k`` visible rows are found instead of returning fewer; the
  rows are re-sorted by exact cosine afterwards.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from pgvector import HalfVector, Vector
from psycopg import sql
from ulid import ULID

from recalld.model import Memory
from recalld.store.base import Scope
from recalld.store.postgres_connection import (
    UNBOUNDED_LOCK_WAIT,
    Connection,
    PostgresDatabase,
    lock_saying_so,
    rows_waiting_briefly,
)
from recalld.store.postgres_job_rows import release_leased
from recalld.store.postgres_rows import SELECT_COLUMNS, Parameters, row_to_memory, scope_sql
from recalld.store.semantic import (
    VECTOR_DTYPE,
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

__all__ = ["PostgresSemantic", "enqueue_embedding", "enqueue_jobs", "index_name"]

T = TypeVar("T")
PENDING = list(PENDING_JOB_STATES)
# How long a recall's catch-up claim waits for a job row another transaction holds.
RECALL_LOCK_WAIT_MS = 1_000


def enqueue_jobs(
    connection: Connection, kind: str, seqs: Sequence[int], model: str, now: datetime
) -> list[str]:
    """Queue a ``kind`` job for each memory of ``seqs`` inside the caller's transaction."""
    ids = [str(ULID()) for _ in seqs]
    if ids:
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO jobs(id, seq, kind, model, state, attempts, run_after, created_at,"
                " updated_at) VALUES (%s, %s, %s, %s, 'queued', 0, %s, %s, %s)",
                [
                    (job_id, seq, kind, model, now, now, now)
                    for job_id, seq in zip(ids, seqs, strict=True)
                ],
            )
    return ids


def enqueue_embedding(connection: Connection, seq: int, model: str, now: datetime) -> str:
    """Queue an embedding job for memory ``seq`` inside the caller's transaction."""
    return enqueue_jobs(connection, "embed", [seq], model, now)[0]


def index_name(model: str, dimension: int) -> str:
    """The name of the HNSW index of one model's vectors (a digest: models are free text)."""
    digest = hashlib.blake2b(f"{model}\x00{dimension}".encode(), digest_size=6).hexdigest()
    return f"vectors_hnsw_{digest}"


def _half(blob: bytes) -> HalfVector:
    return HalfVector(np.frombuffer(blob, dtype=VECTOR_DTYPE))


def _blob(value: HalfVector) -> bytes:
    return bytes(value.to_numpy().astype(VECTOR_DTYPE).tobytes())


def _failure(row: Sequence[Any]) -> JobFailure:
    return JobFailure(
        job_id=row[0],
        memory_id=row[1],
        namespace=row[2],
        model=row[3],
        state=row[4],
        attempts=int(row[5]),
        error=row[6],
        updated_at=row[7],
    )


class PostgresSemantic:
    """:class:`~recalld.store.semantic.SemanticStore` and
    :class:`~recalld.store.semantic.VectorSearch` on PostgreSQL."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._indexed: set[tuple[str, int]] = set()
        self._dimensions: dict[str, int] = {}

    def _transact(self, operation: Callable[[Connection], T]) -> T:
        return self._database.write(operation)

    def _read(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self._database.read(query, params)

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
        def step(connection: Connection) -> list[Job]:
            # A lease that expired this many times means the job kills its workers.
            # With its memory (see complete_jobs): a job whose memory is being written or
            # completed is left to the next claim.
            doomed = connection.execute(
                "UPDATE jobs SET state = 'failed', lease_owner = NULL, updated_at = %(now)s,"
                " last_error = 'the worker holding it stopped (lease expired) '"
                " || attempts || ' times' WHERE id IN (SELECT j.id FROM memories m"
                " JOIN jobs j ON j.seq = m.seq WHERE j.kind = 'embed' AND j.model = %(model)s"
                " AND j.state = 'running' AND j.lease_until <= %(now)s"
                " AND j.attempts >= %(max)s"
                " FOR NO KEY UPDATE OF m SKIP LOCKED FOR UPDATE OF j SKIP LOCKED)"
                " RETURNING seq",
                {"now": now, "model": model, "max": max_attempts},
            ).fetchall()
            if doomed:
                # Unless a newer job (an edit's) still waits: it is what the memory is now.
                connection.execute(
                    "UPDATE memories SET index_state = 'failed' WHERE seq = ANY(%s)"
                    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = memories.seq"
                    " AND j.kind = 'embed' AND j.state = ANY(%s))",
                    ([int(row[0]) for row in doomed], PENDING),
                )
            claimed = connection.execute(
                "WITH picked AS (SELECT id FROM jobs WHERE kind = 'embed' AND model = %(model)s"
                " AND ((state = 'queued' AND run_after <= %(now)s)"
                " OR (state = 'running' AND lease_until <= %(now)s))"
                " ORDER BY run_after, id LIMIT %(limit)s FOR UPDATE SKIP LOCKED)"
                " UPDATE jobs j SET state = 'running', lease_owner = %(worker)s,"
                " lease_until = %(lease)s, attempts = j.attempts + 1, updated_at = %(now)s"
                " FROM picked WHERE j.id = picked.id"
                " RETURNING j.id, j.seq, j.attempts, j.run_after",
                {
                    "model": model,
                    "now": now,
                    "limit": limit,
                    "worker": worker_id,
                    "lease": lease_until,
                },
            ).fetchall()
            if not claimed:
                return []
            texts = {
                int(row[0]): row[1:]
                for row in connection.execute(
                    "SELECT seq, id, namespace, title, content, place_name, key FROM memories"
                    " WHERE seq = ANY(%s)",
                    ([int(row[1]) for row in claimed],),
                ).fetchall()
            }
            ordered = sorted(claimed, key=lambda row: (row[3], row[0]))
            return [
                Job(
                    id=row[0],
                    seq=int(row[1]),
                    model=model,
                    attempts=int(row[2]),
                    memory_id=texts[int(row[1])][0],
                    namespace=texts[int(row[1])][1],
                    title=texts[int(row[1])][2],
                    content=texts[int(row[1])][3],
                    place_name=texts[int(row[1])][4],
                    key=texts[int(row[1])][5],
                )
                for row in ordered
                if int(row[1]) in texts
            ]

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
        params: dict[str, Any] = {
            "model": model,
            "namespaces": list(namespaces),
            "pending": PENDING,
            "bound": limit + 1,
        }
        # Off the partial index of queued memories (migration 17): another namespace's
        # bulk load is never walked.
        pending = (
            " FROM memories m JOIN jobs j ON j.seq = m.seq"
            " AND j.kind = 'embed' AND j.model = %(model)s AND j.state = ANY(%(pending)s)"
            " WHERE m.namespace = ANY(%(namespaces)s) AND m.index_state = 'queued'"
        )
        count = len(self._read(f"SELECT 1{pending} LIMIT %(bound)s", params))
        if count == 0:
            return []
        if count > limit:
            return None

        def step(connection: Connection) -> list[Job] | None:
            # Found as before (an ORDER BY here could walk every memory in seq order), then
            # locked each memory before its jobs in (seq, id) order: the order complete_jobs,
            # forget and the purge take them in, so none waits on another in a circle. KEY
            # SHARE only keeps the memory from going meanwhile.
            locking = (
                f"WITH found AS MATERIALIZED (SELECT j.id{pending} LIMIT %(bound)s)"
                " SELECT j.id, j.seq, j.attempts, m.id, m.namespace, m.title, m.content,"
                f" j.state, j.run_after, j.lease_until, m.place_name, m.key{pending}"
                " AND j.id IN (SELECT id FROM found)"
                # A memory being forgotten is skipped: it will have no vector to find.
                " ORDER BY m.seq, j.id FOR KEY SHARE OF m SKIP LOCKED FOR UPDATE OF j"
            )
            # A job row another transaction holds is waited for a second at most (a worker
            # completing it: skipped at once, the recall searched before that vector was
            # committed, review of pass a64), then skipped: a recall does not wait out a
            # long writer.
            rows = rows_waiting_briefly(connection, locking, params, RECALL_LOCK_WAIT_MS)
            if len(rows) > limit:
                return None
            # A job queued again after a failure waits for its time, as a worker's claim does.
            due = [row for row in rows if row[7] == "running" or row[8] <= now]
            # Taking over a live lease is no new attempt: concurrent recalls must not use
            # up a job's attempts while its worker is still at it.
            live = {row[0] for row in due if row[7] == "running" and row[9] > now}
            for counted in (0, 1):
                ids = [row[0] for row in due if (row[0] not in live) == bool(counted)]
                if ids:
                    connection.execute(
                        "UPDATE jobs SET state = 'running', lease_owner = %s, lease_until = %s,"
                        " attempts = attempts + %s, updated_at = %s WHERE id = ANY(%s)",
                        (worker_id, lease_until, counted, now, ids),
                    )
            return [
                Job(
                    id=row[0],
                    seq=int(row[1]),
                    model=model,
                    attempts=int(row[2]) + (0 if row[0] in live else 1),
                    memory_id=row[3],
                    namespace=row[4],
                    title=row[5],
                    content=row[6],
                    place_name=row[10],
                    key=row[11],
                )
                for row in due
            ]

        return self._transact(step)

    def ensure_index(self, model: str, dimension: int) -> None:
        """Create the model's HNSW index once (its own transaction, one creator at a time)."""
        if (model, dimension) in self._indexed:
            return
        name = index_name(model, dimension)

        def step(connection: Connection) -> None:
            connection.execute(UNBOUNDED_LOCK_WAIT)  # another worker's build: minutes
            lock_saying_so(
                connection,
                f"index:{name}",
                f"{self._database.display}: another process is building the vector index"
                f" {name}; waiting for it to finish (a large table may take minutes)",
            )
            connection.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {name} ON vectors USING hnsw"
                    " ((embedding::halfvec({dimension})) halfvec_cosine_ops)"
                    " WITH (m = 16, ef_construction = 64) WHERE model = {model}"
                ).format(
                    name=sql.Identifier(name),
                    dimension=sql.Literal(int(dimension)),
                    model=sql.Literal(model),
                )
            )

        self._transact(step)
        self._indexed.add((model, dimension))

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[Job, str, bytes]],
        dimension: int,
        now: datetime,
    ) -> int:
        if results:
            self.ensure_index(model, dimension)

        def step(connection: Connection) -> int:
            completed = 0
            # In (seq, id) order, the order claim_for_recall locks them in too.
            for job, digest, vector in sorted(results, key=lambda item: (item[0].seq, item[0].id)):
                # The memory first, then the job: the order forget locks them in. Not shared:
                # two completions of one memory's jobs (an edit queued a newer one) must run
                # one after the other, so that the last one sees no other job pending and
                # marks the memory indexed (each seeing the other's job, not yet deleted,
                # left it queued for good).
                memory = connection.execute(
                    "SELECT title, content, place_name, key FROM memories WHERE seq = %s"
                    " FOR NO KEY UPDATE",
                    (job.seq,),
                ).fetchone()
                held = connection.execute(
                    "SELECT state, lease_owner, model FROM jobs WHERE id = %s FOR UPDATE",
                    (job.id,),
                ).fetchone()
                # A vector of another length than the model's stored ones is refused without
                # looking: each HNSW index of the model (ensure_index) casts every one of its
                # rows to its own dimension, so building or updating one fails on it.
                if held is None or not completes(held, worker_id, model, memory, digest, True):
                    continue
                # The memory changed after the claim: its newer job embeds the new text.
                if memory is not None and text_hash(*memory) == digest:
                    connection.execute(
                        "INSERT INTO vectors(seq, model, dimension, text_hash, embedding)"
                        " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (seq, model) DO UPDATE SET"
                        " dimension = excluded.dimension, text_hash = excluded.text_hash,"
                        " embedding = excluded.embedding",
                        (job.seq, model, dimension, digest, _half(vector)),
                    )
                    # The memory's vector is of its text now: any other job of this model
                    # would embed that text again (an old one a worker holds, kept the
                    # memory queued until settled, or a lease later if that worker died).
                    connection.execute(
                        "DELETE FROM jobs WHERE seq = %s AND kind = 'embed' AND model = %s"
                        " AND state = ANY(%s) AND id != %s",
                        (job.seq, model, PENDING, job.id),
                    )
                connection.execute("DELETE FROM jobs WHERE id = %s", (job.id,))
                connection.execute(
                    "UPDATE memories SET index_state = 'indexed' WHERE seq = %(seq)s"
                    " AND NOT EXISTS (SELECT 1 FROM jobs WHERE seq = %(seq)s AND kind = 'embed'"
                    " AND model = %(model)s AND state = ANY(%(pending)s))",
                    {"seq": job.seq, "model": model, "pending": PENDING},
                )
                completed += 1
            return completed

        return self._transact(step)

    def retry_job(
        self, worker_id: str, job: Job, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        def step(connection: Connection) -> None:
            if run_after is None:
                # The memory first (see complete_jobs): its index state is decided by
                # whoever settles its last pending job, one at a time.
                connection.execute(
                    "SELECT 1 FROM memories WHERE seq = %s FOR NO KEY UPDATE", (job.seq,)
                )
                cursor = connection.execute(
                    "UPDATE jobs SET state = 'failed', lease_owner = NULL, lease_until = NULL,"
                    " last_error = %s, updated_at = %s WHERE id = %s AND lease_owner = %s",
                    (error[:2000], now, job.id, worker_id),
                )
                if cursor.rowcount:
                    # Unless a newer job (an edit's) still waits: it is what the memory is.
                    connection.execute(
                        "UPDATE memories SET index_state = 'failed' WHERE seq = %s"
                        " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = memories.seq"
                        " AND j.kind = 'embed' AND j.state = ANY(%s))",
                        (job.seq, PENDING),
                    )
                return
            connection.execute(
                "UPDATE jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL,"
                " last_error = %s, run_after = %s, updated_at = %s"
                " WHERE id = %s AND lease_owner = %s",
                (error[:2000], run_after, now, job.id, worker_id),
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
        def step(connection: Connection) -> int:
            # Workers starting together: one backfills, the others then find nothing missing.
            connection.execute(UNBOUNDED_LOCK_WAIT)
            lock_saying_so(
                connection,
                f"backfill:embed:{model}",
                f"{self._database.display}: another worker is queueing the memories {model}"
                " has no vector for; waiting for it to finish (minutes on a large table)",
            )
            connection.execute(
                "DELETE FROM jobs WHERE kind = 'embed' AND model <> %s"
                " AND state IN ('queued', 'failed')",
                (model,),
            )
            if retry_failed:  # gone, so their memories are queued again below
                connection.execute(
                    "DELETE FROM jobs WHERE kind = 'embed' AND model = %s AND state = 'failed'",
                    (model,),
                )
            if dimension is not None:
                self._drop_other_dimensions(connection, model, dimension)
            # Made from an older text (see stale_vectors): gone, so queued again below.
            stale = stale_vectors(
                connection.execute(
                    "SELECT m.seq, v.text_hash, m.title, m.content, m.place_name, m.key"
                    " FROM memories m JOIN vectors v ON v.seq = m.seq AND v.model = %s"
                    " WHERE coalesce(m.place_name, '') <> '' OR m.key IS NOT NULL",
                    (model,),
                ).fetchall()
            )
            if stale:
                connection.execute(
                    "DELETE FROM vectors WHERE model = %s AND seq = ANY(%s)", (model, stale)
                )
            missing = [
                int(row[0])
                for row in connection.execute(
                    "SELECT m.seq FROM memories m WHERE NOT EXISTS"
                    " (SELECT 1 FROM vectors v WHERE v.seq = m.seq AND v.model = %(model)s)"
                    " AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = m.seq"
                    " AND j.kind = 'embed' AND j.model = %(model)s"
                    " AND j.state IN ('queued', 'running', 'failed')) ORDER BY m.seq",
                    {"model": model},
                ).fetchall()
            ]
            enqueue_jobs(connection, "embed", missing, model, now)
            if missing:
                connection.execute(
                    "UPDATE memories SET index_state = 'queued' WHERE seq = ANY(%s)", (missing,)
                )
            return len(missing)

        return self._transact(step)

    def _drop_other_dimensions(self, connection: Connection, model: str, dimension: int) -> None:
        """Delete the ``model`` vectors of another dimension, and their HNSW index (its
        cast to the old dimension failed every new vector's insert), when the first
        one found is of another: one row read at each backfill, not every vector."""
        first = connection.execute(
            "SELECT dimension FROM vectors WHERE model = %s LIMIT 1", (model,)
        ).fetchone()
        if first is None or int(first[0]) == dimension:
            return
        others = connection.execute(
            "DELETE FROM vectors WHERE model = %s AND dimension <> %s RETURNING dimension",
            (model, dimension),
        ).fetchall()
        for other in {int(row[0]) for row in others}:
            connection.execute(
                sql.SQL("DROP INDEX IF EXISTS {name}").format(
                    name=sql.Identifier(index_name(model, other))
                )
            )
            self._indexed.discard((model, other))
        self._dimensions.pop(model, None)

    def pending_jobs(self, model: str) -> int:
        rows = self._read(
            "SELECT count(*) FROM jobs WHERE kind = 'embed' AND model = %s AND state = ANY(%s)",
            (model, PENDING),
        )
        return int(rows[0][0])

    def drop_other_models(self, model: str) -> int:
        if not self._read("SELECT 1 FROM vectors WHERE model <> %s LIMIT 1", (model,)):
            return 0

        def step(connection: Connection) -> int:
            removed = int(
                connection.execute("DELETE FROM vectors WHERE model <> %s", (model,)).rowcount
            )
            connection.execute("DELETE FROM vector_log WHERE model <> %s", (model,))
            return removed

        return self._transact(step)

    def purge_done_jobs(self, before: datetime) -> int:
        def step(connection: Connection) -> int:
            return int(
                connection.execute(
                    "DELETE FROM jobs WHERE state = 'done' AND completed_at < %s", (before,)
                ).rowcount
            )

        return self._transact(step)

    def compact_vector_log(self) -> int:
        def step(connection: Connection) -> int:
            return int(
                connection.execute(
                    "DELETE FROM vector_log WHERE change NOT IN"
                    " (SELECT max(change) FROM vector_log GROUP BY seq, model)"
                ).rowcount
            )

        return self._transact(step)

    # -- vectors -----------------------------------------------------------------

    def last_vector_change(self, model: str) -> int:
        rows = self._read("SELECT max(change) FROM vector_log WHERE model = %s", (model,))
        return int(rows[0][0] or 0)

    def vector_changes(self, model: str, after_change: int) -> VectorChanges:
        if after_change <= 0:
            last = self.last_vector_change(model)
            rows = self._read(
                "SELECT v.seq, m.namespace, v.embedding FROM vectors v"
                " JOIN memories m ON m.seq = v.seq WHERE v.model = %s ORDER BY v.seq",
                (model,),
            )
            return VectorChanges(
                last_change=last,
                upserts=[
                    (int(seq), str(namespace), _blob(value)) for seq, namespace, value in rows
                ],
                deletes=[],
            )
        rows = self._read(
            "SELECT l.seq, max(l.change), max(m.namespace), (array_agg(v.embedding))[1]"
            " FROM vector_log l LEFT JOIN vectors v ON v.seq = l.seq AND v.model = l.model"
            " LEFT JOIN memories m ON m.seq = l.seq"
            " WHERE l.model = %s AND l.change > %s GROUP BY l.seq",
            (model, after_change),
        )
        upserts: list[tuple[int, str, bytes]] = []
        deletes: list[int] = []
        last = after_change
        for seq, change, namespace, value in rows:
            last = max(last, int(change))
            if value is None or namespace is None:
                deletes.append(int(seq))
            else:
                upserts.append((int(seq), str(namespace), _blob(value)))
        return VectorChanges(last_change=last, upserts=upserts, deletes=deletes)

    def vectors_for(self, model: str, seqs: Sequence[int]) -> dict[int, bytes]:
        if not seqs:
            return {}
        rows = self._read(
            "SELECT seq, embedding FROM vectors WHERE model = %s AND seq = ANY(%s)",
            (model, [int(seq) for seq in seqs]),
        )
        return {int(seq): _blob(value) for seq, value in rows}

    def vector_rows(self, model: str, after_seq: int, limit: int) -> list[tuple[int, str, bytes]]:
        rows = self._read(
            "SELECT v.seq, m.namespace, v.embedding FROM vectors v JOIN memories m ON m.seq = v.seq"
            " WHERE v.model = %s AND v.seq > %s ORDER BY v.seq LIMIT %s",
            (model, after_seq, limit),
        )
        return [(int(seq), str(namespace), _blob(value)) for seq, namespace, value in rows]

    def dimension(self, model: str) -> int | None:
        """The dimension of the stored ``model`` vectors (None while there is none)."""
        known = self._dimensions.get(model)
        if known is not None:
            return known
        rows = self._read("SELECT dimension FROM vectors WHERE model = %s LIMIT 1", (model,))
        if not rows:
            return None
        self._dimensions[model] = int(rows[0][0])
        return self._dimensions[model]

    def nearest(
        self, model: str, vector: npt.NDArray[np.float32], scope: Scope, k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` visible memories nearest ``vector`` by cosine, from the HNSW index."""
        dimension = self.dimension(model)
        if dimension is None or k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if len(query) != dimension:
            # Read again: another process may have re-embedded the model at the query's
            # dimension since this one read it (kept, every query found nothing).
            self._dimensions.pop(model, None)
            dimension = self.dimension(model)
            if dimension is None or len(query) != dimension:
                return []
        params = Parameters()
        where = scope_sql(scope, params)
        distance = (
            f"v.embedding::halfvec({dimension}) <=>"
            f" {params.bind('query', HalfVector(query))}::halfvec({dimension})"
        )
        # The index orders by the half-precision query; the cosine reported is the stored
        # vector's dot product with the float32 query, as SQLite computes it (the half
        # query's cosine was up to ~2e-4 off, and tied hits came back in another order).
        product = (
            f"v.embedding::vector({dimension}) <#>"
            f" {params.bind('exact', Vector(query))}::vector({dimension})"
        )
        rows = self._read(
            f"SELECT v.seq, {product} AS product FROM vectors v"
            " JOIN memories m ON m.seq = v.seq"
            f" WHERE v.model = {params.bind('model', model)} AND {where}"
            f" ORDER BY {distance} LIMIT {params.bind('k', int(k))}",
            params,
        )
        # relaxed_order: an iterative scan may return neighbours slightly out of order.
        found = [(int(seq), -float(value)) for seq, value in rows]
        return sorted(found, key=lambda item: (-item[1], item[0]))

    def cosines(
        self, model: str, vector: npt.NDArray[np.float32], seqs: Sequence[int]
    ) -> dict[int, float]:
        """The cosine of ``vector`` with each of ``seqs`` that has a ``model`` vector."""
        if not seqs:
            return {}
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        rows = self._read(
            "SELECT seq, embedding FROM vectors WHERE model = %s AND seq = ANY(%s)",
            (model, [int(seq) for seq in seqs]),
        )
        found: dict[int, float] = {}
        for seq, value in rows:
            stored = value.to_numpy().astype(np.float32)
            if len(stored) == len(query):
                found[int(seq)] = float(stored @ query)
        return found

    def visible_seqs(self, scope: Scope) -> list[int]:
        params = Parameters()
        where = scope_sql(scope, params)
        return [
            int(row[0]) for row in self._read(f"SELECT m.seq FROM memories m WHERE {where}", params)
        ]

    def any_visible(self, scope: Scope) -> bool:
        params = Parameters()
        where = scope_sql(scope, params)
        found = self._read(f"SELECT EXISTS (SELECT 1 FROM memories m WHERE {where})", params)
        return bool(found[0][0])

    def visible_memories(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Memory]:
        if not seqs:
            return {}
        params = Parameters()
        where = scope_sql(scope, params)
        wanted = params.bind("seqs", [int(seq) for seq in seqs])
        rows = self._read(
            f"SELECT {SELECT_COLUMNS} FROM memories m WHERE m.seq = ANY({wanted}) AND {where}",
            params,
        )
        return {int(row[0]): row_to_memory(row) for row in rows}

    # -- status ------------------------------------------------------------------

    def queue_counts(self, namespaces: Sequence[str], failures_limit: int) -> QueueCounts:
        params = {"names": list(namespaces), "limit": failures_limit}
        jobs = self._read(
            "SELECT j.state, count(*) FROM jobs j JOIN memories m ON m.seq = j.seq"
            " WHERE j.kind = 'embed' AND m.namespace = ANY(%(names)s) GROUP BY 1",
            params,
        )
        vectors = self._read(
            "SELECT v.model, count(*) FROM vectors v JOIN memories m ON m.seq = v.seq"
            ' WHERE m.namespace = ANY(%(names)s) GROUP BY 1 ORDER BY v.model COLLATE "C"',
            params,
        )
        states = self._read(
            "SELECT m.index_state, count(*) FROM memories m"
            " WHERE m.namespace = ANY(%(names)s) GROUP BY 1",
            params,
        )
        failures = self._read(
            "SELECT j.id, m.id, m.namespace, j.model, j.state, j.attempts, j.last_error,"
            " j.updated_at FROM jobs j JOIN memories m ON m.seq = j.seq"
            " WHERE j.kind = 'embed' AND m.namespace = ANY(%(names)s)"
            " AND (j.state = 'failed' OR j.last_error IS NOT NULL)"
            " ORDER BY j.updated_at DESC LIMIT %(limit)s",
            params,
        )
        by_state = {"queued": 0, "running": 0, "done": 0, "failed": 0}
        by_state.update({str(state): int(count) for state, count in jobs})
        by_state["done"] = sum(int(count) for _, count in vectors)
        return QueueCounts(
            jobs_by_state=by_state,
            embeddings_by_model={str(model): int(count) for model, count in vectors},
            memories_by_index_state={str(state): int(count) for state, count in states},
            failures=[_failure(row) for row in failures],
        )

    def heartbeat(self, record: WorkerRecord) -> None:
        def step(connection: Connection) -> None:
            connection.execute(
                "INSERT INTO workers(id, pid, host, model, state, started_at, heartbeat_at,"
                " processed, failed) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET state = excluded.state,"
                " heartbeat_at = excluded.heartbeat_at, processed = excluded.processed,"
                " failed = excluded.failed",
                (
                    record.id,
                    record.pid,
                    record.host,
                    record.model,
                    record.state,
                    record.started_at,
                    record.heartbeat_at,
                    record.processed,
                    record.failed,
                ),
            )
            # Keep the table small: forget workers silent for a week.
            connection.execute(
                "DELETE FROM workers WHERE heartbeat_at < %s AND id <> %s",
                (record.heartbeat_at - timedelta(days=7), record.id),
            )

        self._transact(step)

    def workers(self) -> list[WorkerRecord]:
        rows = self._read(
            "SELECT id, pid, host, model, state, started_at, heartbeat_at, processed, failed"
            " FROM workers ORDER BY heartbeat_at DESC"
        )
        return [
            WorkerRecord(
                id=row[0],
                pid=int(row[1]),
                host=row[2],
                model=row[3],
                state=row[4],
                started_at=row[5],
                heartbeat_at=row[6],
                processed=int(row[7]),
                failed=int(row[8]),
            )
            for row in rows
        ]
