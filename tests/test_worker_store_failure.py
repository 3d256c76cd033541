"""A database failure while the worker stores vectors is not an embedding failure
(adversarial pass d62): nothing is embedded again one by one, no attempt is recorded
against the job, and the step fails as a whole so the worker backs off."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseUnavailableError, DiskFullError, StorageError
from recalld.graph.extractor import ExtractorSetup
from recalld.graph.rules import RuleExtractor
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.sqlite_connection import DISK_FULL_MESSAGE
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, StoreOutage, semantic_settings


def _service(db_path: Path, clock: FakeClock, embedder: RecordingEmbedder) -> MemoryService:
    settings = semantic_settings(db_path)
    return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)


def test_a_batch_whose_vectors_cannot_be_stored_is_not_embedded_again_one_by_one(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    with _service(db_path, clock, embedder) as service:
        service.remember_many([{"content": f"memory number {index}"} for index in range(3)])
        calls = StoreOutage(service, monkeypatch, failures=1).calls
        worker = service.new_worker()
        with pytest.raises(DatabaseUnavailableError):
            worker.run_once()
        assert len(embedder.texts) == 3  # the batch, once: no text embedded alone
        assert calls == [3]
        assert worker.report.failed_attempts == 0
        clock.advance(seconds=service.settings.worker_lease_seconds + 1)
        assert worker.run_until_idle().processed == 3
        assert service.status().queue["failed"] == 0


def test_a_job_whose_vector_cannot_be_stored_keeps_no_error_of_its_own(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    with _service(db_path, clock, embedder) as service:
        receipt = service.remember("the only memory")
        calls = StoreOutage(service, monkeypatch, failures=1).calls
        worker = service.new_worker()
        with pytest.raises(DatabaseUnavailableError):
            worker.run_once()
        assert calls == [1]
        assert worker.report.failed_attempts == 0
        status = service.status()
        assert status.failed_jobs == []
        assert status.queue["failed"] == 0
        clock.advance(seconds=service.settings.worker_lease_seconds + 1)
        assert worker.run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"


@pytest.mark.parametrize("lease_fraction", [0.25, 1.1])
def test_vectors_a_database_outage_held_back_are_stored_without_using_attempts(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, lease_fraction: float
) -> None:
    # The embedder was never at fault: before, each outage outlived the jobs' lease, each
    # claim after it embedded the texts again and used an attempt, and the second outage
    # (of RECALLD_WORKER_MAX_ATTEMPTS=2) failed the memory for good (adversarial pass d63).
    embedder = RecordingEmbedder()
    settings = semantic_settings(db_path, worker_max_attempts=2)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("the only memory")
        semantic = service.store.semantic
        complete = semantic.complete_jobs
        outages = [DatabaseUnavailableError("the database at db is unavailable")] * 2

        def failing(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            if outages:
                raise outages.pop()
            return complete(worker_id, model, results, dimension, now)

        monkeypatch.setattr(semantic, "complete_jobs", failing)
        worker = service.new_worker()
        for _ in range(2):
            with pytest.raises(DatabaseUnavailableError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds * lease_fraction)
        assert worker.run_until_idle().processed == 1
        # Held and stored within the lease: embedded once. Past it the jobs were handed
        # back (their attempt taken back) and embedded again (review of pass d63).
        assert embedder.texts == ["the only memory"] * (1 if lease_fraction < 0.5 else 2)
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0


def test_a_run_until_idle_waits_for_the_database_to_come_back(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `recalld worker --until-idle` exited on the first failure of a restarting
    # PostgreSQL, leaving the queue undrained (adversarial pass d63).
    embedder = RecordingEmbedder()
    settings = semantic_settings(db_path, worker_poll_seconds=1.0)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember_many([{"content": f"memory number {index}"} for index in range(3)])
        semantic = service.store.semantic
        claim = semantic.claim_jobs
        outages = [DatabaseUnavailableError("the database at db is unavailable")] * 2

        def failing(*arguments: Any) -> Any:
            if outages:
                raise outages.pop()
            return claim(*arguments)

        monkeypatch.setattr(semantic, "claim_jobs", failing)
        delays: list[float] = []
        worker = Worker(service.store, embedder, settings, clock=clock, pause=delays.append)
        assert worker.run_until_idle().processed == 3
        assert delays == [2.0, 4.0]


def test_a_run_until_idle_gives_up_on_a_database_that_stays_away(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    settings = semantic_settings(db_path, worker_poll_seconds=1.0)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("a memory")

        def failing(*arguments: Any, **options: Any) -> Any:
            raise DatabaseUnavailableError("the database at db is unavailable")

        monkeypatch.setattr(service.store.semantic, "backfill_jobs", failing)
        delays: list[float] = []
        worker = Worker(service.store, embedder, settings, clock=clock, pause=delays.append)
        with pytest.raises(DatabaseUnavailableError):
            worker.run_until_idle()
        assert delays == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]


def test_extractions_a_database_outage_held_back_are_stored_without_using_attempts(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The graph half alike: two outages of RECALLD_WORKER_MAX_ATTEMPTS=2 failed the
    # memory's extraction for good, and nothing queues a failed one again.
    settings = semantic_settings(db_path, worker_max_attempts=2)
    extractor = RuleExtractor()
    setup = ExtractorSetup(extractor=extractor, requested="rules")
    with MemoryService(open_store(settings), settings, clock=clock, extractor=setup) as service:
        service.remember("Alice Smith moved to Paris")
        graph = service.store.graph
        complete = graph.complete_jobs
        outages = [DatabaseUnavailableError("the database at db is unavailable")] * 2

        def failing(worker_id: str, model: str, results: Any, now: datetime) -> int:
            if outages:
                raise outages.pop()
            return complete(worker_id, model, results, now)

        monkeypatch.setattr(graph, "complete_jobs", failing)
        worker = Worker(service.store, None, settings, extractor=extractor, clock=clock)
        for _ in range(2):
            with pytest.raises(DatabaseUnavailableError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds + 1)
        assert worker.run_until_idle().extracted == 1
        assert "Alice Smith" in {entity.name for entity in service.graph.entities().entities}


def test_a_long_disk_full_fails_no_job_for_good(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adversarial pass c63: each claim counted an attempt and a failed store left the job
    to its lease, so a full disk lasting ``worker_max_attempts`` leases failed it for good
    ("lease expired N times") and the memory was never indexed once space came back."""
    settings = semantic_settings(db_path, worker_max_attempts=2, graph_extractor="none")
    with MemoryService(
        open_store(settings), settings, clock=clock, embedder=RecordingEmbedder()
    ) as service:
        receipt = service.remember("written before the disk filled")
        semantic = service.store.semantic
        complete = semantic.complete_jobs
        full = [True]

        def failing(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            if full[0]:
                raise DiskFullError(DISK_FULL_MESSAGE)
            return complete(worker_id, model, results, dimension, now)

        monkeypatch.setattr(semantic, "complete_jobs", failing)
        worker = service.new_worker()
        for _ in range(4):  # four leases of a full disk
            with pytest.raises(DiskFullError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds + 1)
        full[0] = False
        assert worker.run_until_idle().processed == 1
        assert service.status().queue["failed"] == 0
        assert service.get(receipt.id).index_state == "indexed"


def test_a_graph_batch_the_store_cannot_take_is_handed_back(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = semantic_settings(db_path, worker_max_attempts=1, embedder="none")
    with MemoryService(open_store(settings), settings, clock=clock, embedder=None) as service:
        service.remember("Ada Lovelace wrote to Charles Babbage in London.")
        graph = service.store.graph
        complete = graph.complete_jobs
        calls: list[int] = []

        def failing(worker_id: str, model: str, results: Any, now: datetime) -> int:
            calls.append(len(results))
            if len(calls) == 1:
                raise DiskFullError(DISK_FULL_MESSAGE)
            return complete(worker_id, model, results, now)

        monkeypatch.setattr(graph, "complete_jobs", failing)
        worker = service.new_worker()
        with pytest.raises(DiskFullError):
            worker.run_once()
        # Stored by the next step from what was held (no lease to wait out), its one
        # attempt not spent (review of pass d63: held, not handed back, within the lease).
        assert worker.run_until_idle().extracted == 1
        graph_status = service.status().graph
        assert graph_status is not None
        assert graph_status.jobs.get("failed", 0) == 0


def test_another_database_error_still_counts_the_attempt(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not a passing condition (one a job's own row may cause): the batch is left to its
    # lease, so a batch that can never be stored stops being retried after its attempts.
    settings = semantic_settings(db_path, worker_max_attempts=1, graph_extractor="none")
    with MemoryService(
        open_store(settings), settings, clock=clock, embedder=RecordingEmbedder()
    ) as service:
        service.remember("a memory whose vector the database refuses")

        def refusing(*_: Any) -> int:
            raise StorageError("SQLError: the row cannot be stored")

        monkeypatch.setattr(service.store.semantic, "complete_jobs", refusing)
        worker = service.new_worker()
        with pytest.raises(StorageError):
            worker.run_once()
        assert worker.run_once() == 0  # still leased: not handed back
        clock.advance(seconds=settings.worker_lease_seconds + 1)
        assert worker.run_once() == 0  # its one attempt spent: failed for good
        assert service.status().queue["failed"] == 1
