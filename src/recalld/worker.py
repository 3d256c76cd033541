"""The durable job queue's consumer: embeds and graph-extracts queued memories, with retries.

One :class:`Worker` runs either as a thread of a long-running process
(``recalld serve``/``recalld mcp``, or any service opened with
``worker_thread=True``) or as its own process (``recalld worker``). Several
workers may share one database: each claim leases a batch of jobs atomically
(``BEGIN IMMEDIATE`` on SQLite, ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), a
crashed worker's jobs are taken over once their lease expires, and completing
a job checks the lease is still held (or, for a worker that held its results through
an outage longer than the lease, that the job still waits and its memory's text is the
one embedded), so no job is completed twice.

A failing batch is retried one text at a time, so one poison memory fails
alone; each failure is recorded on its job (``last_error``) and retried with
exponential backoff until ``worker_max_attempts``, after which the job and its
memory are marked ``failed``. When the configured model changes, the worker
queues a re-embedding of every memory (recall keeps using the keyword index
meanwhile) and drops the old model's vectors once the new ones are complete.

Graph extraction jobs (``kind = 'graph'``, issue 12) share the queue and its
rules, each kind claimed in batches of its own, so a failing extractor never
holds up embedding (or the other way round), and a worker runs with an
extractor and no embedder. With both, graph batches run on a helper thread
while the worker's thread embeds (:meth:`Worker.run_once`). An extractor
change re-extracts every memory in the background, like a model change.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import numpy as np

from recalld._time import Clock, utc_now
from recalld.config import Settings
from recalld.embeddings.base import Embedder, Releasable, checked_vectors
from recalld.embeddings.endpoint_rest import Resting
from recalld.errors import (
    ConflictError,
    DatabaseReplacedError,
    EmbedderUnavailableError,
    EmbeddingError,
    StorageError,
)
from recalld.graph.extractor import Extractor, extraction_input
from recalld.graph.names import visible_extraction
from recalld.graph.types import Extraction
from recalld.store.base import Store, shared_between_threads
from recalld.store.graph import GraphJob
from recalld.store.semantic import (
    Job,
    WorkerRecord,
    embedding_text,
    encode_vector,
    text_hash,
)
from recalld.worker_dimension import known_dimension
from recalld.worker_housekeeping import MAINTENANCE_INTERVAL_SECONDS, tidy
from recalld.worker_outage import (
    DATABASE_AWAY,
    FAILURE_BACKOFF_MAX_SECONDS,
    HeldResults,
    is_outage,
    longest_step_gap,
    release_batch,
    until_idle_delay,
)
from recalld.worker_rivals import graph_only_models, rival, rival_message

__all__ = ["Worker", "WorkerReport"]

T = TypeVar("T", Job, GraphJob)

logger = logging.getLogger(__name__)


@dataclass
class WorkerReport:
    """What a worker did since it started."""

    processed: int = 0
    failed_attempts: int = 0
    failed_for_good: int = 0
    batches: int = 0
    backfilled: int = 0
    embed_seconds: float = 0.0
    extracted: int = 0
    extract_seconds: float = 0.0


class Worker:
    """Claims embedding and graph jobs, runs them, stores the results; see the module docstring."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: Settings,
        *,
        extractor: Extractor | None = None,
        clock: Clock = utc_now,
        worker_id: str | None = None,
        pause: Callable[[float], object] | None = None,
    ) -> None:
        if embedder is None and extractor is None:
            raise ValueError("a worker needs an embedder, an extractor or both")
        self._store = store
        self._embedder = embedder
        self._extractor = extractor
        self._settings = settings
        self._clock = clock
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"
        self.report = WorkerReport()
        # Why run_forever stopped on its own: the database was replaced under the process.
        self.stopped_by: DatabaseReplacedError | None = None
        self._started_at = clock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        # How run_forever waits after a failed step (tests record the delays it asks for).
        self._pause = pause or self._stop.wait
        self._progress = threading.Condition()
        self._thread: threading.Thread | None = None
        self._backfilled = False
        self._last_heartbeat = float("-inf")
        self._last_maintenance = float("-inf")
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()
        self._extracting: Future[None] | None = None
        self._extracted_since = 0  # graph jobs done beside, not yet counted by a step
        self._halt_extraction = threading.Event()
        self._waiting_for: WorkerRecord | None = None  # the rival worker this one waits for
        # --retry-failed asked while a rival made this worker wait: done by the backfill
        # run once it stops (it was lost: failed jobs stayed failed).
        self._retry_failed = False
        # Results an outage kept from being stored (see recalld.worker_outage).
        gap = longest_step_gap(
            settings.lock_retry_seconds, settings.postgres_connect_timeout_seconds
        )
        self._held_vectors: HeldResults[Job, tuple[Job, str, np.ndarray]] = HeldResults(
            "vectors",
            self._complete,
            lambda result: result[0],
            lambda jobs: self._store.semantic.release_jobs(self.id, jobs, self._clock()),
            clock,
            gap,
        )
        self._held_extractions: HeldResults[GraphJob, tuple[GraphJob, Extraction]] = HeldResults(
            "extractions",
            self._complete_graph,
            lambda result: result[0],
            lambda jobs: self._store.graph.release_jobs(self.id, jobs, self._clock()),
            clock,
            gap,
        )

    # -- one step ------------------------------------------------------------------

    def _heartbeat(self, state: str, *, force: bool = False) -> None:
        if not force and time.monotonic() - self._last_heartbeat < 5.0:
            return
        self._last_heartbeat = time.monotonic()
        self._store.semantic.heartbeat(
            WorkerRecord(
                id=self.id,
                pid=os.getpid(),
                host=socket.gethostname(),
                model=(
                    "+".join(self._models())
                    if self._embedder is not None
                    else graph_only_models(self._models()[0])
                ),
                state=state,
                started_at=self._started_at,
                heartbeat_at=self._clock(),
                processed=self.report.processed,
                failed=self.report.failed_for_good,
            )
        )

    def hand_back_held(self) -> None:
        """Hand back the jobs whose results this worker still holds (see
        :mod:`recalld.worker_outage`), as it stops: left to their lease, the next claim
        counted an attempt."""
        self._held_vectors.give_back()
        self._held_extractions.give_back()

    def _say_stopped(self) -> None:
        """Record that this worker stopped; a database that cannot take it is logged.

        The work is done (or given back) by then: a write lock another process held past
        the retry bound, or a full disk, ended the worker thread with "Exception in thread
        recalld-worker" and a traceback on stderr at every stop, and ``recalld worker
        --until-idle`` exited 1 after draining the queue. The record ages out as a
        crashed worker's does (``status`` shows it not alive after a lease)."""
        try:
            self._heartbeat("stopped", force=True)
        except StorageError as error:
            logger.warning("could not record that worker %s stopped: %s", self.id, error)

    def _yields(self) -> bool:
        """Whether the live embedding worker started first on this database embeds with
        another model, so this one must do nothing (see :mod:`recalld.worker_rivals`);
        says so once per such worker."""
        if self._embedder is None:
            return False
        found = rival(
            self._store.semantic.workers(),
            me=self.id,
            started_at=self._started_at,
            embedder=self._embedder.name,
            now=self._clock(),
            alive_within=timedelta(seconds=self._settings.worker_lease_seconds),
        )
        if found is None:
            if self._waiting_for is not None:
                logger.warning("worker %s stopped: this worker takes over", self._waiting_for.id)
                self._waiting_for = None
            return False
        if self._waiting_for is None or found.id != self._waiting_for.id:
            logger.error(
                "%s. This worker waits until that one stops; stop one of them, or give both"
                " the same RECALLD_EMBEDDER_MODEL",
                rival_message(found, self._embedder.name),
            )
        self._waiting_for = found
        return True

    def _models(self) -> list[str]:
        return [part.name for part in (self._embedder, self._extractor) if part is not None]

    def backfill(self, *, retry_failed: bool = False) -> int:
        """Queue every memory without a vector of the current model or an extraction of the
        current extractor (model or extractor switch, import, a database older than the graph).

        ``retry_failed``: also every memory whose embedding failed for good (attempts
        used up while an endpoint was down, say), from its first attempt again; a
        failed job otherwise stays failed (``recalld worker --retry-failed``)."""
        self._retry_failed = self._retry_failed or retry_failed
        if self._yields():
            return 0  # queued when the rival has stopped (run_once backfills then)
        retry_failed = self._retry_failed
        now = self._clock()
        queued = 0
        if self._embedder is not None:
            embeds = self._store.semantic.backfill_jobs(
                self._embedder.name, now, self._known_dimension(), retry_failed=retry_failed
            )
            if embeds:
                logger.info("queued %d memories for embedding with %s", embeds, self._embedder.name)
            queued += embeds
        if self._extractor is not None:
            extractions = self._store.graph.backfill_jobs(
                self._extractor.name, now, retry_failed=retry_failed
            )
            if extractions:
                logger.info(
                    "queued %d memories for graph extraction with %s",
                    extractions,
                    self._extractor.name,
                )
            queued += extractions
        self.report.backfilled += queued
        self._backfilled = True
        self._retry_failed = False
        return queued

    def _known_dimension(self) -> int | None:
        """The embedder's dimension for the backfill (see
        :func:`recalld.worker_dimension.known_dimension`)."""
        assert self._embedder is not None
        return known_dimension(self._store, self._embedder)

    def run_once(self) -> int:
        """Claim one batch of each kind and process them; returns how many jobs it claimed.

        With both an embedder and an extractor, graph extraction runs on a helper
        thread of its own (see :meth:`_extraction_thread`): this step embeds one batch
        and counts the graph jobs done beside since the last step; a step with nothing
        to embed waits for the next graph batch (or for extraction to run out of
        work), so new embedding jobs are looked for after every graph batch.
        """
        if self._yields():
            self._heartbeat("idle")
            return 0
        if not self._backfilled:
            self.backfill()
        now = self._clock()
        lease_until = now + timedelta(seconds=self._settings.worker_lease_seconds)
        beside = self._extraction_thread()
        claimed = 0
        if beside is not None:
            claimed += self._take_extraction(wait=False)
            if self._extracting is None:
                extracting = beside.submit(self._graph_steps)
                extracting.add_done_callback(self._extraction_ended)
                self._extracting = extracting
        if self._embedder is not None:
            claimed += self._embedding_step(now, lease_until)
        if beside is not None and not claimed:
            claimed += self._take_extraction(wait=True)
        elif beside is None and self._extractor is not None:
            claimed += self._graph_step(now, lease_until)
        if not claimed:
            self._release_memory()
            self._when_idle()
            return 0
        self._heartbeat("busy")
        return claimed

    def _release_memory(self) -> None:
        """The queue has drained: the embedder gives back what its batches grew (once per
        burst of batches, not after each: see :class:`recalld.embeddings.base.Releasable`)."""
        if not isinstance(self._embedder, Releasable):
            return
        try:
            self._embedder.release_memory()
        except EmbeddingError as error:
            logger.warning("the embedder could not give its batches' memory back: %s", error)

    def _graph_steps(self) -> None:
        """Graph batches until none is runnable (or the worker stops), each one counted
        for :meth:`_take_extraction` as soon as it is done."""
        while not (self._halt_extraction.is_set() or self._stop.is_set()):
            now = self._clock()
            found = self._graph_step(
                now, now + timedelta(seconds=self._settings.worker_lease_seconds)
            )
            if not found:
                return
            with self._progress:
                self._extracted_since += found
                self._progress.notify_all()

    def _extraction_ended(self, _: Future[None]) -> None:
        with self._progress:
            self._progress.notify_all()

    def _take_extraction(self, *, wait: bool) -> int:
        """The graph jobs done beside since the last call; with ``wait``, first wait for
        the next batch to end, or for the extraction to run out of work. A failed
        extraction raises its error here (its jobs are retried as usual)."""
        extracting = self._extracting
        with self._progress:
            if wait and extracting is not None:
                self._progress.wait_for(lambda: self._extracted_since > 0 or extracting.done())
            count, self._extracted_since = self._extracted_since, 0
        if extracting is not None and extracting.done():
            self._extracting = None
            extracting.result()
        return count

    def _extraction_thread(self) -> ThreadPoolExecutor | None:
        """The thread graph batches run on beside the embedding, when there is both work.

        The embedder runs on one core (onnxruntime releases the GIL while it runs), so
        extraction on the other costs ingestion little time. The thread runs batch
        after batch, never waited for between embedding batches (a batch ending with
        each embedding batch would cost the wait for its last one every time). None
        (both in this thread) with one kind of work, and for a private SQLite
        database, which another thread's connection would not see.
        """
        if self._embedder is None or self._extractor is None:
            return None
        if not shared_between_threads(self._store):
            return None
        with self._executor_lock:
            if self._executor is None:
                self._halt_extraction.clear()
                self._executor = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="recalld-extract"
                )
            return self._executor

    def _close_extraction_thread(self) -> None:
        """Let the extraction thread finish its batch, and end it."""
        with self._executor_lock:
            executor, self._executor = self._executor, None
            self._halt_extraction.set()
        if executor is not None:
            executor.shutdown(wait=True)
        extracting, self._extracting = self._extracting, None
        with self._progress:
            self._extracted_since = 0
        if extracting is not None and extracting.exception() is not None:
            # Already logged by the batch that failed; its jobs are retried as usual.
            logger.warning("graph extraction stopped on an error: %s", extracting.exception())

    def _embedding_step(self, now: datetime, lease_until: datetime) -> int:
        embedder = self._embedder
        assert embedder is not None
        stored = self._held_vectors.flush()
        if not self._may_embed():
            return stored
        return stored + self._step(
            "embedding",
            lambda: self._store.semantic.claim_jobs(
                self.id,
                embedder.name,
                self._settings.worker_batch_size,
                now,
                lease_until,
                self._settings.worker_max_attempts,
            ),
            lambda jobs: self._process(jobs, lease_until),
        )

    def _graph_step(self, now: datetime, lease_until: datetime) -> int:
        extractor = self._extractor
        assert extractor is not None
        stored = self._held_extractions.flush()
        return stored + self._step(
            "graph",
            lambda: self._store.graph.claim_jobs(
                self.id,
                extractor.name,
                self._settings.graph_batch_size,
                now,
                lease_until,
                self._settings.worker_max_attempts,
            ),
            lambda jobs: self._process_graph(jobs, lease_until),
        )

    def _step(
        self, kind: str, claim: Callable[[], Sequence[T]], process: Callable[[Sequence[T]], None]
    ) -> int:
        """Claim one batch and process it; how many jobs it claimed."""
        jobs = claim()
        if not jobs:
            return 0
        self._heartbeat("busy")
        self._count_batch()
        try:
            process(jobs)
        except Exception as error:
            logger.exception("a batch of %d %s jobs failed", len(jobs), kind)
            if is_outage(error):  # those whose results are held wait for the next step
                held = (self._held_vectors, self._held_extractions)
                release_batch(self._store, self.id, jobs, self._clock(), held)
            raise
        return len(jobs)

    def _count_batch(self) -> None:
        with self._progress:
            self.report.batches += 1

    def embed_for_recall(self, namespaces: Sequence[str], limit: int) -> int | None:
        """Embed now, in this thread, every memory of ``namespaces`` still waiting for its
        vector, including one another worker is embedding at this moment; returns how many
        were completed, or None (embedding nothing) when more than ``limit`` wait. No
        backfill, no heartbeat: this is a recall catching up, not a worker."""
        if self._embedder is None or limit <= 0 or not self._may_embed():
            return 0
        self._held_vectors.flush()
        now = self._clock()
        lease_until = now + timedelta(seconds=self._settings.worker_lease_seconds)
        jobs = self._store.semantic.claim_for_recall(
            self.id, self._embedder.name, namespaces, limit, now, lease_until
        )
        if not jobs:
            return jobs if jobs is None else 0
        before = self.report.processed
        self._process(jobs, lease_until)
        return self.report.processed - before

    def _may_embed(self) -> bool:
        """False while the embedder's endpoint rests (see
        :mod:`recalld.embeddings.endpoint_rest`): a job claimed then would only use up an
        attempt, and a recall's catch-up answers from what is indexed."""
        return not isinstance(self._embedder, Resting) or self._embedder.available()

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        assert self._embedder is not None
        started = time.perf_counter()
        try:
            return checked_vectors(self._embedder.embed_batch(texts), len(texts), self._embedder)
        finally:
            self.report.embed_seconds += time.perf_counter() - started

    def _process(self, jobs: Sequence[Job], lease_until: datetime) -> None:
        texts = [embedding_text(job.title, job.content, job.place_name, job.key) for job in jobs]
        try:
            vectors = self._embed(texts)
        except Exception as error:  # noqa: BLE001 - any embedder failure is retried
            if len(jobs) == 1 or isinstance(error, EmbedderUnavailableError):
                # An endpoint that did not answer would not answer each text alone either.
                for job in jobs:
                    self._failed(job, error)
                return
            logger.warning("embedding a batch failed (%s); retrying one by one", error)
        else:
            # Outside the try: a store that cannot take the vectors (PostgreSQL restarting)
            # is no fault of these texts. Embedding them again one by one, or recording an
            # attempt against each, would spend the embedder and the jobs' attempts on it;
            # the step fails instead, the vectors held (see recalld.worker_outage).
            self._held_vectors.store(list(zip(jobs, texts, vectors, strict=True)), lease_until)
            return
        for job, text in zip(jobs, texts, strict=True):
            try:
                vector = self._embed([text])[0]
            except Exception as error:  # noqa: BLE001 - recorded on the job, retried later
                self._failed(job, error)
                continue
            self._held_vectors.store([(job, text, vector)], lease_until)

    def _complete(self, items: Sequence[tuple[Job, str, np.ndarray]]) -> int:
        results = [
            (job, text_hash(job.title, job.content, job.place_name, job.key), encode_vector(vector))
            for job, _, vector in items
        ]
        dimension = int(np.asarray(items[0][2]).shape[-1])
        assert self._embedder is not None
        done = self._store.semantic.complete_jobs(
            self.id, self._embedder.name, results, dimension, self._clock()
        )
        with self._progress:
            self.report.processed += done
            self._progress.notify_all()
        return done

    def wait_until_processed(self, count: int, timeout: float) -> bool:
        """Block until this worker has completed ``count`` jobs in all (True) or ``timeout``
        seconds pass (False); for callers that must know the background work happened."""
        with self._progress:
            return self._progress.wait_for(lambda: self.report.processed >= count, timeout)

    # -- graph extraction --------------------------------------------------------

    def _extract(self, jobs: Sequence[GraphJob]) -> list[Extraction]:
        assert self._extractor is not None
        started = time.perf_counter()
        try:
            found = self._extractor.extract_batch(
                [
                    extraction_input(job.title, job.content, job.tags, job.meta, job.speaker)
                    for job in jobs
                ]
            )
            # Names as anyone can ask for them again (no control or invisible character).
            return [visible_extraction(extraction) for extraction in found]
        finally:
            self.report.extract_seconds += time.perf_counter() - started

    def _process_graph(self, jobs: Sequence[GraphJob], lease_until: datetime) -> None:
        assert self._extractor is not None
        try:
            extractions = self._extract(jobs)
            results = list(zip(jobs, extractions, strict=True))
        except Exception as error:  # noqa: BLE001 - any extractor failure is retried
            if len(jobs) == 1:
                self._failed(jobs[0], error)
                return
            logger.warning("graph extraction of a batch failed (%s); retrying one by one", error)
            results = []
            for job in jobs:
                try:
                    results.append((job, self._extract([job])[0]))
                except Exception as single:  # noqa: BLE001 - recorded on the job, retried later
                    self._failed(job, single)
        if results:
            self._held_extractions.store(results, lease_until)

    def _complete_graph(self, results: list[tuple[GraphJob, Extraction]]) -> int:
        assert self._extractor is not None
        done = self._store.graph.complete_jobs(
            self.id, self._extractor.name, results, self._clock()
        )
        with self._progress:
            self.report.extracted += done
        return done

    def _failed(self, job: Job | GraphJob, error: BaseException) -> None:
        message = f"{type(error).__name__}: {error}"
        now = self._clock()
        given_up = job.attempts >= self._settings.worker_max_attempts
        with self._progress:  # the embedding and the graph halves may both be failing
            self.report.failed_attempts += 1
            self.report.failed_for_good += int(given_up)
        if given_up:
            run_after = None
            logger.error(
                "job %s failed for good after %d attempts: %s", job.id, job.attempts, message
            )
        else:
            delay = min(
                self._settings.worker_retry_seconds * 2 ** (job.attempts - 1),
                self._settings.worker_retry_max_seconds,
            )
            run_after = now + timedelta(seconds=delay)
            logger.warning(
                "job %s failed (attempt %d), retry in %.1f s: %s",
                job.id,
                job.attempts,
                delay,
                message,
            )
        if isinstance(job, GraphJob):
            self._store.graph.retry_job(self.id, job, message, now, run_after)
        else:
            self._store.semantic.retry_job(self.id, job, message, now, run_after)

    def _when_idle(self) -> None:
        self._heartbeat("idle")
        # Housekeeping writes are rate-limited: an idle worker polls every second.
        if time.monotonic() - self._last_maintenance < MAINTENANCE_INTERVAL_SECONDS:
            return
        self._last_maintenance = time.monotonic()
        tidy(self._store, None if self._embedder is None else self._embedder.name, self._clock())

    # -- loops -----------------------------------------------------------------------

    def run_until_idle(
        self,
        *,
        stop: Callable[[], bool] | None = None,
        on_step: Callable[[WorkerReport], None] | None = None,
    ) -> WorkerReport:
        """Process batches until no job is runnable now (jobs waiting on a backoff remain).

        ``on_step(report)`` is told after the backfill and after every batch (progress bars).
        A database found away or busy (another's lock, a full pool) is waited for and tried
        again, as :meth:`run_forever` does, for a few minutes (see :meth:`_back_off`); a
        statement timeout is raised at once.
        Beside a live worker embedding with another model (see :mod:`recalld.worker_rivals`)
        it embeds nothing and raises :class:`ConflictError` naming that worker: it
        reported "embedded 0" as if the queue were drained (adversarial pass a64).
        """
        failures = 0
        try:
            while True:
                try:
                    self.backfill()
                    self._heartbeat("busy", force=True)
                    break
                except DATABASE_AWAY as error:
                    failures = self._back_off(failures, error)
            if on_step is not None:
                on_step(self.report)
            failures = 0
            while not (stop is not None and stop()):
                try:
                    claimed = self.run_once()
                except DATABASE_AWAY as error:
                    failures = self._back_off(failures, error)
                    continue
                failures = 0
                if claimed == 0:
                    break
                if on_step is not None:
                    on_step(self.report)
        finally:
            self._close_extraction_thread()
            self.hand_back_held()
        self._say_stopped()
        if self._waiting_for is not None and self._embedder is not None:
            # It does no graph extraction either (`recalld graph rebuild --run`): it yields
            # as a whole. What it did before that worker appeared is said, not "nothing"
            # (review of pass a64).
            report = self.report
            done = (
                "nothing was embedded or extracted"
                if not (report.processed or report.extracted)
                else f"it stopped after embedding {report.processed} and extracting"
                f" {report.extracted}"
            )
            message = rival_message(self._waiting_for, self._embedder.name)
            raise ConflictError(
                "RECALLD_EMBEDDER_MODEL",
                f"{message}; {done}, the rest left queued. Stop that worker, or give both"
                " the same RECALLD_EMBEDDER_MODEL",
            )
        return self.report

    def _back_off(self, failures: int, error: StorageError) -> int:
        """Wait before :meth:`run_until_idle` tries a database found away again (see
        :func:`recalld.worker_outage.until_idle_delay`); the new count in a row."""
        failures += 1
        self._pause(
            until_idle_delay(
                failures, error, self._settings.worker_poll_seconds, self._stop.is_set()
            )
        )
        return failures

    def run_forever(self, *, on_step: Callable[[WorkerReport], None] | None = None) -> None:
        """Process batches until :meth:`stop`; sleeps ``worker_poll_seconds`` when idle.
        ``on_step(report)`` is told after every batch that did something. The backfill and
        the first heartbeat are :meth:`run_once`'s: a database away or locked at start is
        waited for as in any step (it ended the worker, ``recalld worker`` exit 1)."""
        failures = 0
        while not self._stop.is_set():
            try:
                claimed = self.run_once()
                failures = 0
                if claimed and on_step is not None:
                    on_step(self.report)
            except DatabaseReplacedError as error:
                # Nothing works again in this process (it holds the old file): it failed
                # every second for as long as it ran. Said once, and the worker stops, so
                # `recalld worker` exits 1 and a supervisor starts it on the file there now.
                logger.error("embedding worker stopped: %s", error)
                self.stopped_by = error
                break
            except Exception as error:  # the worker thread must outlive a failed step
                # A step fails as a whole only when the store or the embedder is down
                # (a bad text fails its own job): wait longer after each failure in a
                # row so a broken database is not hammered, and say so once per streak.
                failures += 1
                if failures == 1:
                    logger.exception("embedding worker step failed; backing off")
                else:
                    logger.warning(
                        "embedding worker step failed again (%d in a row): %s", failures, error
                    )
                delay = min(
                    self._settings.worker_poll_seconds * 2 ** min(failures, 16),
                    FAILURE_BACKOFF_MAX_SECONDS,
                )
                self._pause(delay)
                continue
            if claimed == 0:
                self._wake.wait(self._settings.worker_poll_seconds)
                self._wake.clear()
        self._close_extraction_thread()
        if self.stopped_by is None:  # else there is no database to write either to
            self.hand_back_held()
            self._say_stopped()

    def notify(self) -> None:
        """Wake an idle worker thread now (a new job was just queued in this process)."""
        self._wake.set()

    def start(self) -> None:
        """Run :meth:`run_forever` in a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self.run_forever, name="recalld-worker", daemon=True)
        self._thread.start()

    def stop_soon(self) -> None:
        """Ask :meth:`run_forever` to end after the batch in hand, not waiting (a signal
        handler's: ``recalld worker`` on SIGTERM)."""
        self._stop.set()
        self._wake.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Ask the thread to finish its batch and wait for it."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._close_extraction_thread()

    @property
    def started_at(self) -> datetime:
        """When this worker was created."""
        return self._started_at
