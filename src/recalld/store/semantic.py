"""The storage protocol for semantic recall: the job queue, vectors and their change log.

A store that supports semantic recall exposes an object with this protocol as
``store.semantic``. Vectors in the database are the source of truth; every
in-memory or on-disk search structure is rebuilt from them and catches up from
the change sequence (``vector_log``), so one process sees another's vectors.

Vectors are stored as little-endian float16 (:func:`encode_vector`): half the
bytes of float32, and each row of a 384-dimension model then fits inside its
b-tree page instead of spilling into an overflow page. Cosines computed from
them differ from float32 ones by about 1e-4, far below any ranking margin.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from recalld.model import Memory
from recalld.store.base import Scope
from recalld.store.sql import PENDING_JOB_STATES

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Job",
    "JobFailure",
    "QueueCounts",
    "SemanticStore",
    "VectorChanges",
    "VectorSearch",
    "WorkerRecord",
    "completes",
    "decode_stored_vectors",
    "decode_vectors",
    "embedding_text",
    "encode_vector",
    "text_hash",
    "widen_half",
]

# numpy is imported by the functions that need it: opening a store (``recalld stats``)
# must not pay for it.
VECTOR_DTYPE = "<f2"
LEGACY_VECTOR_DTYPE = "<f4"
VECTOR_BYTES = 2
LEGACY_VECTOR_BYTES = 4


def encode_vector(vector: npt.ArrayLike) -> bytes:
    """The stored form of one vector: little-endian float16 bytes."""
    import numpy as np

    return np.asarray(vector, dtype=np.float32).reshape(-1).astype(VECTOR_DTYPE).tobytes()


def decode_vectors(blobs: Sequence[bytes], dimension: int) -> npt.NDArray[np.float32]:
    """Stored vectors as a float32 matrix, one row per blob.

    Float32 blobs (written before vectors were stored as float16) are read too,
    so a database mid-migration by another process still answers.
    """
    import numpy as np

    stored = decode_stored_vectors(blobs, dimension)
    if stored.dtype == np.float16:
        return widen_half(stored)
    return stored.astype(np.float32, copy=False)


# A float16's magnitude bits shifted into a float32's place read as its value times
# 2**-112 (its subnormals too: float32's exponent range holds them), so one multiply by
# 2**112 widens it exactly. Magnitudes from this one up are float16's inf and NaN.
_HALF_NOT_FINITE = 0x7C00
_HALF_SHIFT = 13
_HALF_RESCALE = 2.0**112
# Elements widened at a time (1 MiB of each temporary: fastest here on 20,000-vector pages).
_WIDEN_BLOCK = 1 << 18


def widen_half(half: npt.NDArray[np.float16]) -> npt.NDArray[np.float32]:
    """``half.astype(np.float32)``, the same values about three times faster.

    numpy widens float16 one element at a time (~1.8 ns each: 90 µs for the 132
    vectors a recall re-scores); this is a few whole-array integer steps and one
    multiply, over :data:`_WIDEN_BLOCK` elements at a time so that their temporaries
    stay in the CPU's cache (a cold start widens the file 20,000 vectors at a time).
    An array holding inf or NaN, or a thread whose CPU treats subnormal inputs as
    zero (which the rescaling would then lose), goes through numpy.
    """
    import numpy as np

    if half.size <= _WIDEN_BLOCK:
        return _widened(half)
    flat = half.reshape(-1)
    wide = np.empty(half.size, dtype=np.float32)
    for start in range(0, half.size, _WIDEN_BLOCK):
        wide[start : start + _WIDEN_BLOCK] = _widened(flat[start : start + _WIDEN_BLOCK])
    return wide.reshape(half.shape)


def _widened(half: npt.NDArray[np.float16]) -> npt.NDArray[np.float32]:
    """:func:`widen_half` of one block."""
    import numpy as np

    bits = half.view(np.uint16).astype(np.uint32)
    wide = bits & 0x7FFF
    if (wide.size and int(wide.max()) >= _HALF_NOT_FINITE) or not _subnormals_kept():
        return half.astype(np.float32)
    wide <<= _HALF_SHIFT
    value: npt.NDArray[np.float32] = wide.view(np.float32)
    value *= np.float32(_HALF_RESCALE)
    bits &= 0x8000
    bits <<= 16
    wide |= bits
    return value


def _subnormals_kept() -> bool:
    """Whether this thread's float32 arithmetic reads subnormal inputs as they are (a
    library may set the CPU to read them as zero for speed)."""
    import numpy as np

    return bool(np.float32(2.0**-140) * np.float32(_HALF_RESCALE) != 0)


def decode_stored_vectors(blobs: Sequence[bytes], dimension: int) -> npt.NDArray[np.floating[Any]]:
    """Stored vectors as a read-only float16 matrix when every blob is float16 (no
    conversion: what a cold start reads page by page), else as :func:`decode_vectors`."""
    import numpy as np

    size = dimension * VECTOR_BYTES
    if all(len(blob) == size for blob in blobs):
        joined = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE)
        return joined.reshape(len(blobs), dimension)
    matrix = np.zeros((len(blobs), dimension), dtype=np.float32)
    for row, blob in enumerate(blobs):
        if len(blob) == dimension * VECTOR_BYTES:
            matrix[row] = np.frombuffer(blob, dtype=VECTOR_DTYPE)
        elif len(blob) == dimension * LEGACY_VECTOR_BYTES:
            matrix[row] = np.frombuffer(blob, dtype=LEGACY_VECTOR_DTYPE)
    return matrix


# What separates a key's words (``staging.region``, ``db/primary-host``, ``a:b``).
KEY_SEPARATORS = re.compile(r"[._\-/:]+")


def embedding_text(
    title: str | None, content: str, place_name: str | None = None, key: str | None = None
) -> str:
    """The text a memory is embedded from: its key's words and its title (when given), its
    content, and the name of its place (when given). A key/value note says what it is
    about in its key (``user.favourite_colour`` → "blue"), an experience where it
    happened in its place ("what happened at Café Marly?")."""
    words = None if not key else " ".join(KEY_SEPARATORS.sub(" ", key).split())
    head = ", ".join(part for part in (words, title) if part)
    text = content if not head else f"{head}: {content}"
    return text if not place_name else f"{text} (at {place_name})"


def text_hash(
    title: str | None, content: str, place_name: str | None = None, key: str | None = None
) -> str:
    """A short digest of :func:`embedding_text`, stored with the vector to detect staleness."""
    embedded = embedding_text(title, content, place_name, key)
    return hashlib.blake2b(embedded.encode(), digest_size=12).hexdigest()


def completes(
    held: Sequence[Any],
    worker_id: str,
    model: str,
    memory: Sequence[Any] | None,
    digest: str,
    length_agrees: bool,
) -> bool:
    """Whether a worker's result settles its job, ``held`` being the job's row now
    ``(state, lease_owner, model)``, ``memory`` the memory's embedded fields (None: it
    was forgotten) and ``length_agrees`` whether the vector is as long as the model's
    stored ones (or none is stored).

    The worker's own running job is settled (its vector stored only when ``digest`` is
    still of the memory's text; else the newer job embeds the new text). A job another
    worker claimed after this one's lease ran out, or handed back queued, is settled too
    when it still waits for this model and the memory's text is the one embedded: a
    database down longer than the lease left the worker holding the vector while another
    worker's claim counted an attempt and embedded the text again, or while the hand-back
    the database refused left the job to its lease (adversarial pass d65). A job reused
    for an edited text (see ``queue_again``) is not, its text's hash being another; nor
    is one whose model now makes vectors of another length (a model served under the
    same name with another dimension, whose worker took the job: the held vector was
    stored among the new ones, review of pass d65)."""
    state, owner, job_model = held[0], held[1], held[2]
    if state == "running" and owner == worker_id:
        return True
    return (
        state in PENDING_JOB_STATES
        and job_model == model
        and length_agrees
        and memory is not None
        and text_hash(*memory) == digest
    )


def stale_vectors(rows: Iterable[Sequence[Any]]) -> list[int]:
    """The seqs of rows ``(seq, text_hash, title, content, place_name, key)`` whose vector
    was made from another text than :func:`embedding_text` gives now: a worker of an older
    version, still running through an upgrade, embedded them without the place name or
    key (migrations 19 and 22 had queued them again, and it took the jobs)."""
    return [
        int(seq)
        for seq, digest, title, content, place_name, key in rows
        if text_hash(title, content, place_name, key) != digest
    ]


@dataclass(frozen=True)
class Job:
    """A claimed embedding job and the memory text it embeds."""

    id: str
    seq: int
    model: str
    attempts: int
    memory_id: str
    namespace: str
    title: str | None
    content: str
    place_name: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class JobFailure:
    """A job that failed for good (or is waiting to retry) and why."""

    job_id: str
    memory_id: str
    namespace: str
    model: str
    state: str
    attempts: int
    error: str | None
    updated_at: datetime


@dataclass(frozen=True)
class QueueCounts:
    """Raw numbers behind the service's status report, for some namespaces."""

    jobs_by_state: dict[str, int]
    embeddings_by_model: dict[str, int]
    memories_by_index_state: dict[str, int]
    failures: list[JobFailure] = field(default_factory=list)


@dataclass(frozen=True)
class WorkerRecord:
    """A worker's heartbeat row."""

    id: str
    pid: int
    host: str
    model: str
    state: str
    started_at: datetime
    heartbeat_at: datetime
    processed: int = 0
    failed: int = 0


@dataclass(frozen=True)
class VectorChanges:
    """What changed in one model's vectors after a change number.

    ``upserts`` are ``(seq, namespace, vector bytes)``; ``deletes`` are seqs whose
    vector no longer exists. ``last_change`` is where the next catch-up starts.
    """

    last_change: int
    upserts: list[tuple[int, str, bytes]]
    deletes: list[int]


class SemanticStore(Protocol):
    """Jobs, vectors and heartbeats; every method is one short transaction or read."""

    def claim_jobs(
        self,
        worker_id: str,
        model: str,
        limit: int,
        now: datetime,
        lease_until: datetime,
        max_attempts: int,
    ) -> list[Job]:
        """Atomically lease up to ``limit`` runnable jobs (queued and due, or lease expired).

        A job whose lease expired after ``max_attempts`` claims fails instead.
        """
        ...

    def claim_for_recall(
        self,
        worker_id: str,
        model: str,
        namespaces: Sequence[str],
        limit: int,
        now: datetime,
        lease_until: datetime,
    ) -> list[Job] | None:
        """Lease, for a recall about to search ``namespaces``, every pending embedding job of
        ``model`` for a memory of those namespaces: queued and due, or leased by a worker that
        is still at it (the recall embeds it too rather than search without it; the slower
        of the two finds its lease gone and completes nothing).

        None, claiming nothing, when more than ``limit`` are pending there (a bulk load the
        recall does not wait for); pending jobs of other namespaces never count.

        Never waits out another writer (a recall is a read): on SQLite, a write lock
        another connection holds past ``busy_timeout`` (a second at most) leaves it
        claiming nothing (``[]``); on PostgreSQL, a job row another transaction holds past
        a second (a memory row being deleted: at once) is skipped. The recall then
        answers from what is indexed, as with a longer queue.
        """
        ...

    def complete_jobs(
        self,
        worker_id: str,
        model: str,
        results: Sequence[tuple[Job, str, bytes]],
        dimension: int,
        now: datetime,
    ) -> int:
        """Store ``(job, text hash, vector)`` results and mark the jobs done, in one transaction.

        Only jobs still leased by ``worker_id`` count (a job taken over after its
        lease expired is not completed twice); returns how many were completed.
        """
        ...

    def retry_job(
        self, worker_id: str, job: Job, error: str, now: datetime, run_after: datetime | None
    ) -> None:
        """Record a failed attempt: queue it again at ``run_after``, or fail it for good (None)."""
        ...

    def release_jobs(self, worker_id: str, jobs: Sequence[Job], now: datetime) -> int:
        """Hand back jobs ``worker_id`` claimed but could not settle because the store failed
        (a full disk, a database gone away): queued again at once, their claim not counted
        as an attempt. Only jobs still leased by ``worker_id`` change; returns how many."""
        ...

    def backfill_jobs(
        self,
        model: str,
        now: datetime,
        dimension: int | None = None,
        *,
        retry_failed: bool = False,
    ) -> int:
        """Queue a job for every memory without a ``model`` vector or a pending job for it
        (with ``retry_failed``, a job that failed for good counts as none: it is queued
        again, its attempts from zero).

        Pending jobs of other models are dropped; returns how many jobs were queued. With
        ``dimension``, ``model`` vectors of another length (a model served under the same
        name with another dimension: read as zeros, they found nothing) are dropped and
        queued again too.
        """
        ...

    def pending_jobs(self, model: str) -> int:
        """Embedding jobs of ``model`` still queued or running."""
        ...

    def drop_other_models(self, model: str) -> int:
        """Delete vectors of every model but ``model`` (after a switch completed)."""
        ...

    def purge_done_jobs(self, before: datetime) -> int:
        """Delete jobs completed before ``before``."""
        ...

    def compact_vector_log(self) -> int:
        """Keep only the newest change of each (memory, model) in the change log."""
        ...

    def last_vector_change(self, model: str) -> int:
        """The newest change number of ``model``'s vectors (0 if none)."""
        ...

    def vector_changes(self, model: str, after_change: int) -> VectorChanges:
        """Every vector of ``model`` changed after ``after_change`` (all of them for 0)."""
        ...

    def vectors_for(self, model: str, seqs: Sequence[int]) -> dict[int, bytes]:
        """The stored vectors of these memories for ``model``."""
        ...

    def vector_rows(self, model: str, after_seq: int, limit: int) -> list[tuple[int, str, bytes]]:
        """``(seq, namespace, vector)`` of ``model``'s vectors with seq above ``after_seq``,
        in seq order, at most ``limit`` (an index loads a large collection page by page)."""
        ...

    def visible_seqs(self, scope: Scope) -> list[int]:
        """Every memory seq ``scope`` may see (for exact search under filters).

        Under a filter of tags alone a store may return the tagged memories of every
        namespace: the vector index it is given to keeps to the scope's namespaces.
        """
        ...

    def any_visible(self, scope: Scope) -> bool:
        """Whether ``scope`` sees at least one memory (one index probe, no listing)."""
        ...

    def visible_memories(self, scope: Scope, seqs: Sequence[int]) -> dict[int, Memory]:
        """Those of ``seqs`` that ``scope`` may see, by seq."""
        ...

    def queue_counts(self, namespaces: Sequence[str], failures_limit: int) -> QueueCounts:
        """Jobs by state, vectors by model and memories by index state in ``namespaces``."""
        ...

    def heartbeat(self, record: WorkerRecord) -> None:
        """Insert or refresh a worker's heartbeat row."""
        ...

    def workers(self) -> list[WorkerRecord]:
        """Every worker that ever reported, newest heartbeat first."""
        ...


class VectorSearch(Protocol):
    """Nearest-vector search run by the database itself (an optional store capability).

    A store that offers it (PostgreSQL with pgvector's HNSW index) answers
    vector candidates in the query, with the namespace wall and the scope's
    filters applied there, so no process holds a copy of the vectors. The
    retriever uses it whenever :attr:`recalld.store.base.Store.vector_search`
    is not None.
    """

    def dimension(self, model: str) -> int | None:
        """The dimension of the stored ``model`` vectors (None: there is none yet)."""
        ...

    def nearest(
        self, model: str, vector: npt.NDArray[np.float32], scope: Scope, k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` visible memories whose ``model`` vector is most similar, as
        ``(seq, cosine)``, best first."""
        ...

    def cosines(
        self, model: str, vector: npt.NDArray[np.float32], seqs: Sequence[int]
    ) -> dict[int, float]:
        """The cosine of ``vector`` with each of ``seqs`` that has a ``model`` vector."""
        ...
