"""Indexing: the embedding and graph queues, the background worker, the retriever, status.

A component the :class:`~recalld.service.MemoryService` owns. With an
embedder configured, every write that changes a memory's text queues an
embedding job *in the same transaction* and the receipt says
``index_state='queued'`` with the ``job_id``; the worker (a thread of this
process when ``worker_thread`` is on, or ``recalld worker``) embeds it later.
Without an embedder (``embedder='none'``) memories are ``indexed`` at once
and recall is keyword-only.

With a graph extractor, every write that changes what the extractor reads
(title, content, tags, speaker) also queues a graph job in the same
transaction (issue 12); the same worker runs both kinds. A memory's
``index_state`` is about its embedding only; the graph has its own status.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Literal

from recalld._time import Clock
from recalld.config import Settings
from recalld.embeddings.base import Embedder
from recalld.errors import DatabaseBusyError, DatabaseReadOnlyError, ValidationError
from recalld.graph.extractor import Extractor, ExtractorSetup, create_extractor
from recalld.intentions.timing import parse_zone
from recalld.model import (
    GraphStatus,
    IndexState,
    IndexStatus,
    JobError,
    Memory,
    Status,
    WorkerStatus,
)
from recalld.retrieval.graph_channel import GraphChannel
from recalld.retrieval.hybrid import HybridRetriever, RetrievalDepths
from recalld.retrieval.rerank import Reranker
from recalld.store.base import FULL_TEXT_BACKENDS, MemoryRecord, Store, StoreTransaction
from recalld.store.semantic import JobFailure
from recalld.store.sqlite_connection import writing_briefly
from recalld.worker import Worker

__all__ = ["Indexing"]

logger = logging.getLogger(__name__)

FAILED_JOBS_SHOWN = 20


class Indexing:
    """Embedding queue, background worker, hybrid retriever and indexing status."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Clock,
        embedder: Embedder | None,
        extractor: ExtractorSetup | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock
        self.embedder = embedder
        self.extractor_setup = extractor if extractor is not None else create_extractor(settings)
        self.retriever = HybridRetriever(
            store,
            embedder,
            reranker=Reranker.default(),
            depths=RetrievalDepths(
                keyword=settings.keyword_candidates,
                vector=settings.vector_candidates,
                period=settings.period_candidates,
                duplicate_cosine=settings.duplicate_cosine,
            ),
            ann_threshold=settings.vector_ann_threshold,
            index_prefix=store.index_location,
            clock=clock,
            zone=None if settings.zone is None else parse_zone(settings.zone, "RECALLD_ZONE"),
            # No extractor, no mentions to walk: the channel would only cost queries.
            graph=None
            if self.extractor_setup.extractor is None or not settings.graph_recall
            else GraphChannel(
                store,
                seed_limit=settings.graph_seed_limit,
                fanout=settings.graph_fanout,
            ),
        )
        self._worker: Worker | None = None
        self._catch_up_worker: Worker | None = None
        self._catch_up_lock = threading.Lock()
        self._catch_up_warned = False
        if (embedder is not None or self.extractor is not None) and settings.worker_thread:
            self.start_worker()

    @property
    def extractor(self) -> Extractor | None:
        """The graph extractor in use (None: no graph is built)."""
        return self.extractor_setup.extractor

    def close(self) -> None:
        """Stop the worker thread (if any) and save the vector index."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        if self._catch_up_worker is not None:  # what a recall's catch-up held (an outage)
            with self._catch_up_lock:
                self._catch_up_worker.hand_back_held()
        self.retriever.close()

    # -- what writes need ----------------------------------------------------

    def new_index_state(self) -> IndexState:
        """The index state of a memory just written."""
        return "indexed" if self.embedder is None else "queued"

    def keep_index_state(self, record: MemoryRecord, current: Memory) -> tuple[MemoryRecord, bool]:
        """Keep the current state when the embedded text is unchanged; else re-index."""
        if self.embedder is None:
            return record, False
        if _embedded(record) == _embedded(current):
            return replace(record, index_state=current.index_state), False
        return record, True

    def _queue(self, jobs: dict[str, int], vectors: dict[str, int]) -> dict[str, int]:
        """The embedding queue by state, its work done counted in the current model's
        vectors: during a model switch the old model's (dropped once it completes) are
        none of this queue's work. With no embedder here, every model's."""
        if self.embedder is None:
            return jobs
        return {**jobs, "done": vectors.get(self.embedder.name, 0)}

    def enqueue(
        self,
        tx: StoreTransaction,
        memory: Memory,
        now: datetime,
        *,
        previous: Memory | None = None,
        embed: bool = True,
    ) -> str | None:
        """Queue the memory's embedding (when ``embed``) and its graph extraction (when what
        the extractor reads differs from ``previous``) in ``tx``; returns the embedding job id."""
        job_id = None
        if previous is not None and _embedded(previous) != _embedded(memory):
            # The old text's vector goes now, not when the new text is embedded: until
            # then the memory is found by its words alone, never by what it no longer says.
            tx.drop_vectors(memory.seq, now, None if self.embedder is None else self.embedder.name)
        if embed and self.embedder is not None:
            job_id = tx.enqueue_embedding(memory.seq, self.embedder.name, now)
        changed = previous is None or _graph_inputs_changed(previous, memory)
        if previous is not None and changed:
            # What the old text said goes with it, now: not when the new text is extracted.
            tx.graph.drop_extraction(memory.seq)
        elif previous is not None and previous.at != memory.at:
            # No extractor reads the time: the relations the memory states take its new
            # one here, at once and without extracting it again (and with no extractor).
            tx.graph.retime_sources(memory.seq)
        extractor = self.extractor
        if extractor is not None and changed:
            tx.enqueue_graph(memory.seq, extractor.name, now)
        if self._worker is not None:
            self._worker.notify()
        return job_id

    def catch_up(self, namespaces: Sequence[str]) -> int:
        """Before a recall over ``namespaces``: embed their queued memories in this thread
        when only a few are queued (at most ``settings.recall_catch_up``); returns how many
        it embedded.

        A library user who writes and recalls at once, with no worker running,
        then finds what was just written by meaning, not only by its words; the
        cost is bounded (a few dozen short texts). A memory a worker is embedding
        at that moment is embedded here too (the recall does not wait on another
        thread or process, nor search without it). With more queued (a bulk
        import, a model change) recall answers at once from the keyword index
        and the vectors already there, and the worker (``recalld worker``, a
        server's thread, :meth:`start_worker`) embeds the rest. Other
        namespaces' queues never count.
        """
        limit = self._settings.recall_catch_up
        if self.embedder is None or limit <= 0:
            return 0
        if self._catch_up_worker is None:
            self._catch_up_worker = Worker(
                self._store,
                self.embedder,
                self._settings,
                clock=self._clock,
                worker_id=f"{self._worker_id_prefix()}:recall",
            )
        # One catch-up at a time in this process: concurrent recalls would each embed the
        # same queue (taking over one another's leases); the next finds it done.
        with self._catch_up_lock, writing_briefly():
            try:
                embedded = self._catch_up_worker.embed_for_recall(namespaces, limit)
            except (DatabaseBusyError, DatabaseReadOnlyError) as error:
                # Another process's write held the lock (a second at most: writing_briefly;
                # on PostgreSQL, another client's lock or a full pool)
                # between the claim and the vectors' commit: the vectors are held (stored
                # by the next catch-up, handed back at close) and this recall, a read,
                # answers from what is indexed rather than fail (adversarial pass a64).
                # So does one on a server taking no writes for a while (a failover's
                # standby phase): every search failed while it lasted (review of pass d65).
                logger.warning("a recall's catch-up could not store its vectors: %s", error)
                return 0
        if embedded is not None:
            return embedded
        if not self._catch_up_warned:
            self._catch_up_warned = True
            logger.info(
                "more than %d memories wait for their embedding: recall uses the keyword"
                " index and the vectors already computed until a worker embeds them"
                " (`recalld worker`, or MemoryService.start_worker())",
                limit,
            )
        return 0

    @staticmethod
    def _worker_id_prefix() -> str:
        import os
        import socket

        return f"{socket.gethostname()}:{os.getpid()}"

    def after_forget(self) -> None:
        """Erase forgotten vectors from the loaded index and its saved files."""
        self.retriever.after_forget()

    # -- the worker ------------------------------------------------------------

    @property
    def worker(self) -> Worker | None:
        """The worker thread of this process, if one runs."""
        return self._worker

    def _require_work(self) -> None:
        if self.embedder is None and self.extractor is None:
            raise ValidationError(
                "embedder",
                "no embedder and no graph extractor are configured (embedder='none',"
                " graph_extractor='none'): there is nothing for a worker to do",
            )

    def start_worker(self) -> Worker:
        """Start a worker thread (embedding and graph jobs) in this process (idempotent)."""
        if self._worker is None:
            self._worker = self.new_worker()
            self._worker.start()
        return self._worker

    def new_worker(self, *, worker_id: str | None = None) -> Worker:
        """A worker for this store, embedder and extractor, not started (``recalld worker``)."""
        self._require_work()
        return Worker(
            self._store,
            self.embedder,
            self._settings,
            extractor=self.extractor,
            clock=self._clock,
            worker_id=worker_id,
        )

    # -- status ----------------------------------------------------------------

    def status(self, namespaces: Sequence[str]) -> Status:
        """Indexing health over ``namespaces`` (already validated).

        Queue depth by state, embeddings per model, memories by index state,
        failed jobs with their last error, every worker's heartbeat and age,
        and the vector index's sizes. Loads no model and builds no index.
        """
        scoped = list(namespaces)
        counts = self._store.semantic.queue_counts(scoped, FAILED_JOBS_SHOWN)
        now = self._clock()
        alive_within = max(30.0, 3 * self._settings.worker_poll_seconds)
        workers = []
        for record in self._store.semantic.workers():
            age = max(0.0, (now - record.heartbeat_at).total_seconds())
            workers.append(
                WorkerStatus(
                    id=record.id,
                    pid=record.pid,
                    host=record.host,
                    # A graph-only worker's "+extractor" (see worker_rivals) as its name.
                    model=record.model.removeprefix("+"),
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
            loaded = self.retriever.loaded_index()
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
        keyword = self._store.keyword_backend
        backends = ["fts" if keyword in FULL_TEXT_BACKENDS else "like"]
        if self.embedder is not None:
            backends.append("vector")
        return Status(
            namespaces=scoped,
            embedder=None if self.embedder is None else self.embedder.name,
            search_backends=backends,
            keyword_backend=keyword,
            vector_backend=None
            if self.embedder is None
            else ("database" if self._store.vector_search is not None else "in-process"),
            queue=self._queue(counts.jobs_by_state, counts.embeddings_by_model),
            memories_by_index_state=counts.memories_by_index_state,
            embeddings=counts.embeddings_by_model,
            failed_jobs=[_job_error(failure) for failure in counts.failures],
            workers=workers,
            index=index,
            graph=self.graph_status(scoped),
        )

    def graph_status(self, namespaces: Sequence[str]) -> GraphStatus:
        """The graph's size, its jobs by state, the extractor, and the last extraction errors."""
        counts = self._store.graph.counts(namespaces, FAILED_JOBS_SHOWN)
        extractor = self.extractor
        pending = counts.jobs_by_state.get("queued", 0) + counts.jobs_by_state.get("running", 0)
        extracted = 0 if extractor is None else counts.extracted.get(extractor.name, 0)
        state: Literal["disabled", "empty", "building", "ready"]
        if extractor is None:
            state = "disabled"
        elif pending:
            state = "building"
        elif counts.entities or extracted:
            state = "ready"
        else:
            state = "empty"
        return GraphStatus(
            state=state,
            extractor=None if extractor is None else extractor.name,
            extractor_version=None if extractor is None else extractor.description,
            requested_extractor=self.extractor_setup.requested,
            warning=self.extractor_setup.warning,
            entities=counts.entities,
            relations=counts.relations,
            mentions=counts.mentions,
            observations=counts.observations,
            memories_extracted=extracted,
            jobs=counts.jobs_by_state,
            last_errors=[_job_error(failure) for failure in counts.failures],
        )


def _job_error(failure: JobFailure) -> JobError:
    return JobError(
        job_id=failure.job_id,
        memory_id=failure.memory_id,
        namespace=failure.namespace,
        model=failure.model,
        state=failure.state,
        attempts=failure.attempts,
        error=failure.error,
        updated_at=failure.updated_at,
    )


def _graph_inputs_changed(previous: Memory, memory: Memory) -> bool:
    """Whether a rewrite changed anything an extractor reads (title, content, tags, speaker)."""
    return (
        previous.title != memory.title
        or previous.content != memory.content
        or previous.tags != memory.tags
        or previous.speaker != memory.speaker
        or previous.meta.get("speaker") != memory.meta.get("speaker")
        or previous.meta.get("author") != memory.meta.get("author")
    )


def _embedded(
    memory: Memory | MemoryRecord,
) -> tuple[str | None, str, str | None, str | None]:
    """What a memory's vector is made of (:func:`recalld.store.semantic.embedding_text`):
    its title, its content, its place's name and its key."""
    place_name = None if memory.place is None else memory.place.name
    return memory.title, memory.content, place_name, memory.key
