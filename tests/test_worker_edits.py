"""A memory edited while its job waits is embedded and extracted once, with its new text
(adversarial pass d63): each edit queued a job beside the waiting one, and every one of
them, claimed later, read the memory's current text, so the worker embedded (a paid
endpoint billed) and extracted the same text once per edit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

from recalld.graph.extractor import ExtractorSetup
from recalld.graph.rules import RuleExtractor
from recalld.graph.types import Extraction, ExtractionInput
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.store.semantic import text_hash
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings


class _RecordingExtractor(RuleExtractor):
    """The rule-based extractor that remembers every text it read."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        self.texts.extend(item.text for item in items)
        return super().extract_batch(items)


def test_a_memory_edited_while_queued_is_embedded_and_extracted_once(
    any_database: Path | str, clock: FakeClock
) -> None:
    settings = semantic_settings(any_database)
    embedder = RecordingEmbedder()
    extractor = _RecordingExtractor()
    setup = ExtractorSetup(extractor=extractor, requested="rules")
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=embedder, extractor=setup) as service:
        receipt = service.remember("Alice lives in Paris")
        service.update(receipt.id, content="Alice lives in Rome")
        edited = service.update(receipt.id, content="Alice lives in Oslo")
        assert edited.index_state == "queued"
        assert service.status().queue["queued"] == 1
        report = service.new_worker().run_until_idle()
        assert embedder.texts == ["Alice lives in Oslo"]
        assert extractor.texts == ["Alice lives in Oslo"]
        assert (report.processed, report.extracted) == (1, 1)
        assert service.get(receipt.id).index_state == "indexed"
        assert service.recall("Oslo")[0].memory.id == receipt.id


def test_a_memory_edited_while_its_job_runs_gets_a_job_of_its_own(
    any_database: Path | str, clock: FakeClock
) -> None:
    # The running job's vector is of the old text: it is not stored, and the edit's job
    # (not the running one, which a worker holds) embeds the new one.
    settings = semantic_settings(any_database)
    embedder = RecordingEmbedder()
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        worker = service.new_worker()
        lease_until = clock() + timedelta(seconds=settings.worker_lease_seconds)
        [job] = store.semantic.claim_jobs(
            "elsewhere", embedder.name, 8, clock(), lease_until, settings.worker_max_attempts
        )
        service.update(receipt.id, content="Alice lives in Oslo")
        assert service.status().queue == {"queued": 1, "running": 1, "done": 0, "failed": 0}
        assert worker.run_until_idle().processed == 1
        assert embedder.texts == ["Alice lives in Oslo"]
        assert job.content == "Alice lives in Paris"


def test_a_memory_embedded_with_its_new_text_is_indexed_while_its_old_job_is_held(
    any_database: Path | str, clock: FakeClock
) -> None:
    # Adversarial pass a64: the edit's job done, the memory stayed `queued` (and the old
    # job `running`) until the worker holding the old job settled it: a lease later, and
    # then embedded again, an attempt counted, if that worker had died. Its vector is of
    # the text it holds now, so every other job embedding that text for that model goes.
    settings = semantic_settings(any_database)
    embedder = RecordingEmbedder()
    store = open_store(settings)
    with MemoryService(store, settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("Alice lives in Paris")
        lease_until = clock() + timedelta(seconds=settings.worker_lease_seconds)
        [job] = store.semantic.claim_jobs(
            "elsewhere", embedder.name, 8, clock(), lease_until, settings.worker_max_attempts
        )
        service.update(receipt.id, content="Alice lives in Oslo")
        assert service.new_worker().run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue == {"queued": 0, "running": 0, "done": 1, "failed": 0}
        # The worker that held the old job comes back: nothing of it is stored.
        old = (job, text_hash(None, "Alice lives in Paris", None, None), b"\0" * 128)
        assert store.semantic.complete_jobs("elsewhere", embedder.name, [old], 64, clock()) == 0
        assert service.recall("Oslo")[0].memory.id == receipt.id
