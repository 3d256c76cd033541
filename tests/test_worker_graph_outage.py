"""An extraction a database outage held past its lease settles the job another worker took
over, as a held vector does (adversarial pass e66): it was dropped and extracted again, an
attempt counted each lease, and with RECALLD_WORKER_MAX_ATTEMPTS leases of outage the
memory's extraction failed for good. A job already failed is never settled by it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import DatabaseUnavailableError
from recalld.graph.extractor import ExtractorSetup
from recalld.graph.rules import RuleExtractor
from recalld.graph.types import Extraction, ExtractionInput
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.graph import GraphJob
from recalld.worker import Worker
from tests.conftest import FakeClock


class CountingExtractor(RuleExtractor):
    """The rules, counting the texts they read."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        self.texts += len(items)
        return super().extract_batch(items)


def _held_past_the_lease(
    database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> tuple[MemoryService, Worker, CountingExtractor, list[bool]]:
    """A service, and a worker holding the extraction of its one memory past the lease
    (storing it and handing it back refused, as by a database fully down); the outage
    ends when the returned flag is cleared."""
    settings = Settings(db=database, embedder="none", graph_extractor="rules")
    settings = settings.model_copy(update={"worker_max_attempts": 2})
    extractor = CountingExtractor()
    setup = ExtractorSetup(extractor=extractor, requested="rules")
    service = MemoryService(open_store(settings), settings, clock=clock, extractor=setup)
    service.remember("Alice Smith moved to Paris")
    graph = service.store.graph
    complete = graph.complete_jobs
    outage = [True]

    def failing(worker_id: str, model: str, results: Any, now: datetime) -> int:
        if outage[0]:
            raise DatabaseUnavailableError("the database at db is unavailable")
        return complete(worker_id, model, results, now)

    def refused(worker_id: str, jobs: list[GraphJob], now: datetime) -> int:
        raise DatabaseUnavailableError("the database at db is unavailable")

    monkeypatch.setattr(graph, "complete_jobs", failing)
    monkeypatch.setattr(graph, "release_jobs", refused)
    holding = Worker(service.store, None, settings, extractor=extractor, clock=clock)
    with pytest.raises(DatabaseUnavailableError):
        holding.run_once()
    clock.advance(seconds=settings.worker_lease_seconds + 1)
    with pytest.raises(DatabaseUnavailableError):
        holding.run_once()
    return service, holding, extractor, outage


def _graph_jobs(service: MemoryService) -> dict[str, int]:
    status = service.status().graph
    assert status is not None
    return status.jobs


def _claimed_by_another(service: MemoryService, clock: FakeClock) -> GraphJob:
    lease_until = clock() + timedelta(seconds=service.settings.worker_lease_seconds)
    [taken] = service.store.graph.claim_jobs(
        "other", RuleExtractor().name, 8, clock(), lease_until, 2
    )
    return taken


def test_an_extraction_held_past_the_lease_settles_the_job_another_worker_took(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, holding, extractor, outage = _held_past_the_lease(any_database, clock, monkeypatch)
    with service:
        outage[0] = False
        taken = _claimed_by_another(service, clock)
        assert taken.attempts == 2  # the other worker's claim counted the last one
        holding.run_once()  # the held extraction, stored
        assert _graph_jobs(service)["done"] == 1
        assert "Alice Smith" in {entity.name for entity in service.graph.entities().entities}
        assert extractor.texts == 1  # extracted once
        # The other worker's result finds the job settled, and its failure fails nothing.
        store = service.store.graph
        assert store.complete_jobs("other", taken.model, [(taken, Extraction())], clock()) == 0
        store.retry_job("other", taken, "gave up", clock(), None)
        assert _graph_jobs(service)["failed"] == 0
        assert "Alice Smith" in {entity.name for entity in service.graph.entities().entities}


def test_an_extraction_held_past_the_lease_never_settles_a_failed_job(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, holding, _, outage = _held_past_the_lease(any_database, clock, monkeypatch)
    with service:
        outage[0] = False
        taken = _claimed_by_another(service, clock)
        service.store.graph.retry_job("other", taken, "the extractor gave up", clock(), None)
        holding.run_once()
        assert _graph_jobs(service)["failed"] == 1
        assert service.graph.entities().entities == []


def test_an_extraction_held_past_a_delete_of_its_entity_does_not_bring_it_back(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass e66: a held extraction settles a job now, and the tombstone the
    # knowledge tools' delete left (after the memory was written) still keeps it out.
    service, holding, _, outage = _held_past_the_lease(any_database, clock, monkeypatch)
    with service:
        service.knowledge.create_entities([{"name": "Alice Smith", "entityType": "person"}])
        service.knowledge.delete_entities(["Alice Smith"])
        outage[0] = False
        _claimed_by_another(service, clock)
        holding.run_once()
        assert _graph_jobs(service)["done"] == 1
        names = {entity.name for entity in service.graph.entities().entities}
        assert "Alice Smith" not in names
        assert "Paris" in names
