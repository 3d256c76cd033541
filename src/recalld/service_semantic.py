"""The semantic half of :class:`recalld.service.MemoryService`: queue, worker, status.

Kept apart from ``service.py`` so each module stays readable. With an
embedder configured, every write that changes a memory's text queues an
embedding job *in the same transaction* and the receipt says
``index_state='queued'`` with the ``job_id``; the worker (a thread of this
process when ``worker_thread`` is on, or ``recalld worker``) embeds it later.
Without an embedder (``embedder='none'``) memories are ``indexed`` at once
and recall is keyword-only.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from recalld.embeddings.base import Embedder
from recalld.model import IndexState, IndexStatus, JobError, Memory, Status, WorkerStatus
from recalld.retrieval.hybrid import HybridRetriever, RetrievalDepths
from recalld.retrieval.rerank import Reranker
from recalld.store.base import MemoryRecord, StoreTransaction
from recalld.worker import Worker

if TYPE_CHECKING:
    from recalld._time import Clock
    from recalld.config import Settings
    from recalld.store.base import Store

__all__ = ["SemanticMixin"]

logger = logging.getLogger(__name__)

FAILED_JOBS_SHOWN = 20


class SemanticMixin:
    """Embedding queue, background worker, hybrid retriever and status for the service."""

    store: Store
    settings: Settings
    _clock: Clock
    embedder: Embedder | None
    _retriever: HybridRetriever
    _worker: Worker | None

    def _namespaces(self, namespaces: Sequence[str] | None) -> list[str]:
        raise NotImplementedError  # provided by MemoryService

    def _start_semantic(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        database = Path(getattr(self.store, "path", ""))
        self._retriever = HybridRetriever(
            self.store,
            embedder,
            reranker=Reranker.default(),
            depths=RetrievalDepths(
                keyword=self.settings.keyword_candidates,
                vector=self.settings.vector_candidates,
                duplicate_cosine=self.settings.duplicate_cosine,
            ),
            ann_threshold=self.settings.vector_ann_threshold,
            index_prefix=None if str(database) in ("", ".", ":memory:") else database,
        )
        self._worker = None
        if embedder is not None and self.settings.worker_thread:
            self.start_worker()

    def _stop_semantic(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        self._retriever.close()

    def _new_index_state(self) -> IndexState:
        return "indexed" if self.embedder is None else "queued"

    def _keep_index_state(self, record: MemoryRecord, current: Memory) -> tuple[MemoryRecord, bool]:
        """Keep the current state when the embedded text is unchanged; else re-index."""
        if self.embedder is None:
            return record, False
        if record.title == current.title and record.content == current.content:
            from dataclasses import replace

            return replace(record, index_state=current.index_state), False
        return record, True

    def _enqueue(self, tx: StoreTransaction, memory: Memory, now: datetime) -> str | None:
        if self.embedder is None:
            return None
        job_id = tx.enqueue_embedding(memory.seq, self.embedder.name, now)
        if self._worker is not None:
            self._worker.notify()
        return job_id

    # -- public ------------------------------------------------------------------

    @property
    def worker(self) -> Worker | None:
        """The worker thread of this process, if one runs."""
        return self._worker

    def start_worker(self) -> Worker:
        """Start an embedding worker thread in this process (idempotent)."""
        if self.embedder is None:
            from recalld.errors import ValidationError

            raise ValidationError("embedder", "no embedder is configured (embedder='none')")
        if self._worker is None:
            self._worker = Worker(self.store, self.embedder, self.settings, clock=self._clock)
            self._worker.start()
        return self._worker

    def new_worker(self, *, worker_id: str | None = None) -> Worker:
        """A worker bound to this service's store and embedder, not started (``recalld worker``)."""
        if self.embedder is None:
            from recalld.errors import ValidationError

            raise ValidationError("embedder", "no embedder is configured (embedder='none')")
        return Worker(
            self.store, self.embedder, self.settings, clock=self._clock, worker_id=worker_id
        )

    def status(self, namespaces: Sequence[str] | None = None) -> Status:
        """Indexing health over ``namespaces`` (default: the current one).

        Queue depth by state, embeddings per model, memories by index state,
        failed jobs with their last error, every worker's heartbeat and age,
        and the vector index's sizes. Loads no model and builds no index.
        """
        scoped = self._namespaces(namespaces)
        counts = self.store.semantic.queue_counts(scoped, FAILED_JOBS_SHOWN)
        now = self._clock()
        alive_within = max(30.0, 3 * self.settings.worker_poll_seconds)
        workers = []
        for record in self.store.semantic.workers():
            age = max(0.0, (now - record.heartbeat_at).total_seconds())
            workers.append(
                WorkerStatus(
                    id=record.id,
                    pid=record.pid,
                    host=record.host,
                    model=record.model,
                    state=record.state,
                    started_at=record.started_at,
                    heartbeat_at=record.heartbeat_at,
                    heartbeat_age_seconds=round(age, 3),
                    alive=record.state != "stopped" and age <= alive_within,
                    processed=record.processed,
                    failed=record.failed,
                )
            )
        index = None
        if self.embedder is not None:
            loaded = self._retriever.loaded_index()
            described = loaded.describe() if loaded is not None else {}
            index = IndexStatus(
                model=self.embedder.name,
                dimension=described.get("dimension"),
                vectors=counts.embeddings_by_model.get(self.embedder.name, 0),
                loaded=loaded is not None,
                loaded_vectors=described.get("vectors", 0),
                ann=described.get("ann", False),
                ann_rows=described.get("ann_rows", 0),
                file_bytes=described.get("file_bytes", 0),
            )
        backends = ["fts" if self.store.fts_available else "like"]
        if self.embedder is not None:
            backends.append("vector")
        return Status(
            namespaces=scoped,
            embedder=None if self.embedder is None else self.embedder.name,
            search_backends=backends,
            queue=counts.jobs_by_state,
            memories_by_index_state=counts.memories_by_index_state,
            embeddings=counts.embeddings_by_model,
            failed_jobs=[
                JobError(
                    job_id=failure.job_id,
                    memory_id=failure.memory_id,
                    namespace=failure.namespace,
                    model=failure.model,
                    state=failure.state,
                    attempts=failure.attempts,
                    error=failure.error,
                    updated_at=failure.updated_at,
                )
                for failure in counts.failures
            ],
            workers=workers,
            index=index,
        )
