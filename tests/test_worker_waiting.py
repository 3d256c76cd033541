"""A worker that waits for a rival of another model (recalld.worker_rivals) keeps what it
was asked to do, and only an embedding worker is a rival (adversarial pass d63)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recalld.graph.extractor import ExtractorSetup
from recalld.graph.rules import RuleExtractor
from recalld.graph.types import Extraction, ExtractionInput
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.semantic import WorkerRecord
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import FlakyEmbedder, NamedEmbedder, semantic_settings


@pytest.fixture
def clock() -> FakeClock:
    # Today's time: a heartbeat deletes the workers silent for a week by the real clock.
    return FakeClock(datetime.now(UTC))


class _OwnExtractor(RuleExtractor):
    """A library user's own extractor, under a name of its own."""

    @property
    def name(self) -> str:
        return "mine/1"


def _beat(service: MemoryService, clock: FakeClock, state: str) -> None:
    """Another process's worker of model-a, started before any in this test."""
    service.store.semantic.heartbeat(
        WorkerRecord(
            id="other-process",
            pid=1,
            host="elsewhere",
            model="model-a",
            state=state,
            started_at=clock() - timedelta(seconds=60),
            heartbeat_at=clock(),
        )
    )


def test_retry_failed_asked_while_waiting_for_a_rival_is_done_once_it_stops(
    any_database: Path | str, clock: FakeClock
) -> None:
    settings = semantic_settings(any_database, worker_max_attempts=2)
    embedder = FlakyEmbedder(failures=2)
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("a memory written while the endpoint was down")
        failing = service.new_worker()
        failing.run_until_idle()
        failing.run_until_idle()
        assert service.get(receipt.id).index_state == "failed"
        _beat(service, clock, "busy")
        retrying = service.new_worker()
        assert retrying.backfill(retry_failed=True) == 0  # it waits for model-a's worker
        _beat(service, clock, "stopped")
        # Before, the backfill it ran once the rival stopped left failed jobs failed.
        assert retrying.run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().failed_jobs == []


def test_a_graph_only_worker_with_its_own_extractor_is_no_rival(
    any_database: Path | str, clock: FakeClock
) -> None:
    settings = semantic_settings(any_database)
    store = open_store(settings)
    setup = ExtractorSetup(extractor=_OwnExtractor(), requested="mine")
    with MemoryService(
        store, settings, clock=clock, embedder=NamedEmbedder("model-b"), extractor=setup
    ) as service:
        service.remember_many([{"content": "Alice met Bob in Paris"}, {"content": "roses"}])
        extracting = Worker(store, None, settings, extractor=_OwnExtractor(), clock=clock)
        assert extracting.run_once() == 2  # and alive: its heartbeat is not "stopped"
        [record] = [w for w in service.status().workers if w.id == extracting.id]
        assert record.model == "mine/1"
        clock.advance(1)
        embedding = Worker(store, NamedEmbedder("model-b"), settings, clock=clock)
        # Before, "mine/1" was taken for another embedding model: this worker waited.
        assert embedding.run_until_idle().processed == 2
        assert service.status().embeddings == {"model-b": 2}


def test_a_graph_only_workers_heartbeat_reads_as_such_in_an_older_version(
    any_database: Path | str, clock: FakeClock
) -> None:
    # A rolling upgrade: an older process on the same database tells a graph-only worker
    # by its extractor's name alone ("rules/..."); "+rules/..." was an embedding model of
    # its own to it, and its embedding workers started later waited for it for ever
    # (review of pass d63).
    settings = semantic_settings(any_database)
    store = open_store(settings)
    extractor = RuleExtractor()
    setup = ExtractorSetup(extractor=extractor, requested="rules")
    with MemoryService(store, settings, clock=clock, extractor=setup) as service:
        service.remember("Alice met Bob in Paris")
        extracting = Worker(store, None, settings, extractor=extractor, clock=clock)
        assert extracting.run_once() == 1
        [model] = [w.model for w in store.semantic.workers() if w.id == extracting.id]
        assert model == extractor.name
        assert model.startswith(("rules/", "spacy/"))  # what an older version looks for


def test_retry_failed_queues_a_failed_graph_extraction_again(
    any_database: Path | str, clock: FakeClock
) -> None:
    settings = semantic_settings(any_database, worker_max_attempts=1)
    extractor = _FailingOnceExtractor()
    setup = ExtractorSetup(extractor=extractor, requested="rules")
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, extractor=setup) as service:
        service.remember("Alice Smith moved to Paris")
        worker = Worker(store, None, settings, extractor=extractor, clock=clock)
        assert worker.run_until_idle().failed_for_good == 1
        retrying = Worker(store, None, settings, extractor=extractor, clock=clock)
        assert retrying.backfill(retry_failed=True) == 1
        assert retrying.run_until_idle().extracted == 1
        assert "Alice Smith" in {entity.name for entity in service.graph.entities().entities}


class _FailingOnceExtractor(RuleExtractor):
    """Fails its first batch, as a crashing model does."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        if not self.failed:
            self.failed = True
            raise RuntimeError("extractor exploded")
        return super().extract_batch(items)
