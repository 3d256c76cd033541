"""The worker beside another process holding SQLite's write lock past
``RECALLD_LOCK_RETRY_SECONDS`` (adversarial pass a64): a batch whose vectors could not be
committed had its attempts counted and waited out its lease, and ``recalld worker
--until-idle`` ended at once on "stayed locked". A lock is no fault of the batch: its
vectors are held and stored once the lock is free, and ``--until-idle`` waits for it as
for a database that is restarting."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import pytest

from recalld.embeddings.base import Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import DatabaseLockedError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings

MEMORY = "Ada wrote the first program."


class _OtherWriter:
    """Another process's connection, taking the write lock (a long import) when told."""

    def __init__(self, db_path: Path) -> None:
        self.connection = apsw.Connection(str(db_path))

    def lock(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def unlock(self) -> None:
        if not self.connection.get_autocommit():
            self.connection.execute("ROLLBACK")


class _LockingEmbedder(HashingEmbedder):
    """Embeds, and the other writer takes the lock while the first batch of memories
    (not a query) is embedded: between the claim and the commit."""

    def __init__(self, writer: _OtherWriter) -> None:
        super().__init__(64)
        self.writer = writer
        self.batches: list[list[str]] = []

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        memories = [text for text in texts if text.startswith(MEMORY)]
        if memories and not self.batches:
            self.writer.lock()
        if memories:
            self.batches.append(memories)
        return super().embed_batch(texts)


@pytest.fixture
def writer(db_path: Path) -> Iterator[_OtherWriter]:
    other = _OtherWriter(db_path)
    try:
        yield other
    finally:
        other.unlock()
        other.connection.close()


def test_a_batch_the_lock_kept_from_its_commit_is_stored_once_free_with_no_attempt(
    db_path: Path, clock: FakeClock, writer: _OtherWriter
) -> None:
    settings = semantic_settings(
        db_path,
        busy_timeout_ms=0,
        lock_retry_seconds=0.05,
        worker_max_attempts=1,
        graph_extractor="none",
    )
    embedder = _LockingEmbedder(writer)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember(MEMORY)
        worker = service.new_worker()
        with pytest.raises(DatabaseLockedError, match="stayed locked"):
            worker.run_once()
        assert worker.report.failed_attempts == 0
        writer.unlock()
        # Before: no attempt left (max 1), the job leased for a lease, nothing stored.
        assert worker.run_once() == 1
        assert worker.report.processed == 1
        assert embedder.batches == [[MEMORY]]  # stored as embedded, not embedded again
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0


def test_until_idle_waits_for_another_process_write_lock(
    db_path: Path, clock: FakeClock, writer: _OtherWriter
) -> None:
    settings = semantic_settings(db_path, busy_timeout_ms=0, lock_retry_seconds=0.05)
    embedder = HashingEmbedder(64)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember_many([{"content": f"memory number {index}"} for index in range(3)])
        waits: list[float] = []

        def pause(seconds: float) -> None:  # the other writer is done during the first wait
            waits.append(seconds)
            writer.unlock()

        worker = Worker(service.store, embedder, settings, clock=clock, pause=pause)
        writer.lock()
        report = worker.run_until_idle()  # before: DatabaseLockedError ("stayed locked")
        assert report.processed == 3
        assert len(waits) == 1
        assert service.status().queue["queued"] == 0


def test_a_recall_whose_catch_up_the_lock_kept_from_its_commit_still_answers(
    db_path: Path, clock: FakeClock, writer: _OtherWriter
) -> None:
    settings = semantic_settings(
        db_path,
        busy_timeout_ms=0,
        lock_retry_seconds=0.05,
        graph_extractor="none",
        recall_catch_up=8,
    )
    embedder = _LockingEmbedder(writer)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember(MEMORY)
        # Before: the recall failed "stayed locked" (its catch-up's commit waited it out).
        hits = service.search("first program")
        assert [(hit.memory.id, hit.memory.index_state) for hit in hits] == [(receipt.id, "queued")]
        writer.unlock()
        hits = service.search("first program")  # stores the vector it held
        assert [hit.memory.index_state for hit in hits] == ["indexed"]
        assert embedder.batches == [[MEMORY]]  # the held vector, stored as embedded


def test_a_worker_started_while_another_process_writes_waits_for_the_lock(
    db_path: Path, clock: FakeClock, writer: _OtherWriter
) -> None:
    # `recalld worker` (and a server's worker thread) started while another process held
    # the lock past RECALLD_LOCK_RETRY_SECONDS (a long import): its first backfill failed
    # outside the loop that backs off, and the worker ended (exit 1).
    settings = semantic_settings(
        db_path, busy_timeout_ms=0, lock_retry_seconds=0.05, graph_extractor="none"
    )
    embedder = HashingEmbedder(64)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember(MEMORY)
        waits: list[float] = []

        def pause(seconds: float) -> None:  # the other writer is done during the first wait
            waits.append(seconds)
            writer.unlock()

        worker = Worker(service.store, embedder, settings, clock=clock, pause=pause)
        writer.lock()
        worker.run_forever(on_step=lambda report: worker.stop_soon())
        assert len(waits) == 1
        assert worker.report.processed == 1
        assert service.get(receipt.id).index_state == "indexed"
