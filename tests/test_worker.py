"""The durable job queue and its worker: receipts, retries, leases, model switches, status."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from recalld.config import Settings
from recalld.embeddings.base import Embedder, Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import EmbeddingError, StorageError
from recalld.graph.extractor import create_extractor
from recalld.graph.types import Extraction, ExtractionInput
from recalld.model import Filters
from recalld.service import MemoryService
from recalld.store.base import Store
from recalld.store.factory import open_store
from recalld.store.semantic import text_hash
from recalld.store.sqlite import SQLiteStore
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import (
    FlakyEmbedder,
    MisstatedEmbedder,
    NamedEmbedder,
    RecordingEmbedder,
    semantic_settings,
)


def _open(
    db_path: Path, clock: FakeClock, embedder: Embedder | None = None, **overrides: Any
) -> MemoryService:
    settings = semantic_settings(db_path, **overrides)
    if embedder is None:
        return MemoryService.open(settings, clock=clock)
    return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)


def test_worker_receipt_is_queued_before_indexing(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        receipt = service.remember("the staging database lives in Melbourne")
        assert receipt.index_state == "queued"
        assert receipt.job_id is not None
        assert service.get(receipt.id).index_state == "queued"
        # Keyword recall answers before any vector exists.
        hits = service.recall("staging database")
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].backends == ["fts"]
        assert service.status().queue["queued"] == 1
        report = service.new_worker().run_until_idle()
        assert report.processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        status = service.status()
        assert status.queue == {"queued": 0, "running": 0, "done": 1, "failed": 0}
        assert status.embeddings == {"hashing-256": 1}
        assert status.memories_by_index_state == {"indexed": 1}


def test_worker_unchanged_text_keeps_index_state(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        receipt = service.remember("the staging database", key="staging")
        service.new_worker().run_until_idle()
        assert service.update(receipt.id, tags=["infra"]).index_state == "indexed"
        changed = service.update(receipt.id, content="the staging database moved to Sydney")
        assert changed.index_state == "queued"
        again = service.remember("the staging database moved to Sydney", key="staging")
        assert (again.status, again.job_id, again.index_state) == ("overwritten", None, "queued")
        service.new_worker().run_until_idle()
        assert service.get(receipt.id).index_state == "indexed"
        hits = service.search("Sydney", mode="vector", min_score=0)
        assert hits[0].memory.id == receipt.id


def test_edited_text_is_never_found_by_the_old_texts_vector(
    db_path: Path, clock: FakeClock
) -> None:
    # The old vector stayed until a worker re-embedded the memory: with more queued than a
    # recall catches up on, "tuberculosis" found the record that no longer says it.
    with _open(db_path, clock, recall_catch_up=0) as service:
        record = service.remember("The patient tested positive for tuberculosis")
        keyed = service.remember("Ana tested positive for tuberculosis", key="ana")
        service.new_worker().run_until_idle()
        assert len(service.search("tuberculosis positive", mode="vector", min_score=0)) == 2
        service.update(record.id, content="Medical record: details withheld")
        service.remember("Ana's record: withheld", key="ana")  # a key overwrite
        assert service.status().embeddings == {}
        assert service.search("tuberculosis positive", mode="vector", min_score=0) == []
        # Found by its new words meanwhile; by meaning once embedded again.
        assert [hit.memory.id for hit in service.recall("withheld")] == [record.id, keyed.id]
        service.new_worker().run_until_idle()
        assert service.status().embeddings == {"hashing-256": 2}
        found = service.search("details withheld", mode="vector", min_score=0)
        assert found[0].memory.id == record.id


def test_a_place_name_is_embedded_with_the_text_and_again_when_it_changes(
    db_path: Path, clock: FakeClock
) -> None:
    embedder = RecordingEmbedder()
    with _open(db_path, clock, embedder) as service:
        ramen = service.remember(
            "Ate ramen with Ken after the temple visit",
            place={"lat": 35.0116, "lon": 135.7681, "name": "Kyoto"},
        )
        service.new_worker().run_until_idle()
        assert embedder.texts == ["Ate ramen with Ken after the temple visit (at Kyoto)"]
        assert [hit.memory.id for hit in service.search("Kyoto", mode="vector", min_score=0)] == [
            ramen.id
        ]
        # Another name is another text: the old vector goes at once, the new one follows.
        moved = {"lat": 34.6937, "lon": 135.5023, "name": "Osaka"}
        assert service.update(ramen.id, place=moved).index_state == "queued"
        assert service.search("Kyoto", mode="vector", min_score=0) == []
        service.new_worker().run_until_idle()
        assert embedder.texts[-1] == "Ate ramen with Ken after the temple visit (at Osaka)"
        found = service.search("Osaka", mode="vector", min_score=0)
        assert [hit.memory.id for hit in found] == [ramen.id]
        # The same name at other coordinates embeds nothing again.
        service.update(ramen.id, place={"lat": 34.70, "lon": 135.50, "name": "Osaka"})
        assert service.get(ramen.id).index_state == "indexed"
        # A key's words head the text (a key/value note says what it is about in its key).
        colour = service.remember("blue", key="user.favourite_colour")
        service.new_worker().run_until_idle()
        assert embedder.texts[-1] == "user favourite colour: blue"
        service.remember("green", key="user.favourite_colour")  # an upsert: embedded again
        service.new_worker().run_until_idle()
        assert embedder.texts[-1] == "user favourite colour: green"
        assert service.get(colour.id).index_state == "indexed"


def test_a_vector_an_older_worker_made_without_the_key_is_made_again(
    db_path: Path, clock: FakeClock
) -> None:
    # A worker of an older version, still running through the upgrade, took migration 22's
    # jobs and embedded "blue" without its key: the next worker's backfill notices.
    embedder = RecordingEmbedder()
    with _open(db_path, clock, embedder) as service:
        colour = service.remember("blue", key="user.favourite_colour")
        plain = service.remember("a note without a key")
        service.new_worker().run_until_idle()
        older = text_hash(None, "blue")  # the text an older version embedded
        cast(SQLiteStore, service.store).write(
            lambda tx: tx.execute(
                "UPDATE vector_rows SET text_hash = ? WHERE seq = ?", (older, colour.seq)
            )
        )
        embedder.texts.clear()
        report = service.new_worker().run_until_idle()
        assert embedder.texts == ["user favourite colour: blue"]
        assert report.processed == 1
        assert service.get(colour.id).index_state == "indexed"
        assert service.get(plain.id).index_state == "indexed"
        assert service.new_worker().run_until_idle().processed == 0  # nothing stale now


def test_an_edit_by_a_process_without_the_model_queues_its_embedding(
    db_path: Path, clock: FakeClock
) -> None:
    # Its vectors were dropped and nothing queued: the memory stayed "indexed" with no
    # vector until a worker restarted and backfilled.
    with _open(db_path, clock) as service:
        receipt = service.remember("The quarterly report covers Europe")
        service.new_worker().run_until_idle()
        settings = semantic_settings(db_path, embedder="none")
        with MemoryService.open(settings, clock=clock) as keyword_only:
            keyword_only.update(receipt.id, content="The quarterly report covers Asia")
        assert service.get(receipt.id).index_state == "queued"
        assert service.new_worker().run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        found = service.search("quarterly report Asia", mode="vector", min_score=0)
        assert found[0].memory.id == receipt.id


def test_worker_retries_with_recorded_errors_then_succeeds(db_path: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder(failures=2)
    with _open(db_path, clock, embedder, worker_retry_seconds=5.0) as service:
        receipt = service.remember("a memory that fails twice")
        worker = service.new_worker()
        worker.run_until_idle()
        status = service.status()
        assert status.queue["queued"] == 1
        assert status.failed_jobs[0].error == "EmbeddingError: model exploded on 1 texts"
        assert status.failed_jobs[0].attempts == 1
        clock.advance(6)
        worker.run_until_idle()
        assert service.status().failed_jobs[0].attempts == 2
        assert service.get(receipt.id).index_state == "queued"
        clock.advance(11)  # the second retry waits twice as long
        worker.run_until_idle()
        assert service.get(receipt.id).index_state == "indexed"
        assert worker.report.failed_attempts == 2
        assert service.status().failed_jobs == []


def test_worker_gives_up_after_max_attempts(db_path: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder(failures=100, poison="poison")
    with _open(db_path, clock, embedder, worker_max_attempts=3) as service:
        bad = service.remember("poison pill memory")
        good = service.remember("a healthy memory")
        worker = service.new_worker()
        for _ in range(5):
            worker.run_until_idle()
        assert service.get(bad.id).index_state == "failed"
        # The poison failed alone: its batch-mate was retried on its own and indexed.
        assert service.get(good.id).index_state == "indexed"
        status = service.status()
        assert status.queue["failed"] == 1
        [failure] = status.failed_jobs
        assert (failure.memory_id, failure.state, failure.attempts) == (bad.id, "failed", 3)
        assert "exploded" in (failure.error or "")
        # Still found by keyword.
        assert service.recall("poison")[0].memory.id == bad.id


def test_worker_queues_failed_embeddings_again_when_asked(db_path: Path, clock: FakeClock) -> None:
    # Failed for good while the endpoint was down, a memory was never embedded again.
    embedder = FlakyEmbedder(failures=2)
    with _open(db_path, clock, embedder, worker_max_attempts=2) as service:
        receipt = service.remember("a memory written while the endpoint was down")
        worker = service.new_worker()
        worker.run_until_idle()
        worker.run_until_idle()
        assert service.get(receipt.id).index_state == "failed"
        assert service.new_worker().run_until_idle().processed == 0  # a restart alone
        retrying = service.new_worker()
        assert retrying.backfill(retry_failed=True) == 1
        assert retrying.run_until_idle().processed == 1
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().failed_jobs == []


def test_worker_backoff_delays_the_retry(db_path: Path, clock: FakeClock) -> None:
    embedder = FlakyEmbedder(failures=1)
    with _open(db_path, clock, embedder, worker_retry_seconds=10.0) as service:
        receipt = service.remember("backoff")
        worker = service.new_worker()
        worker.run_until_idle()
        worker.run_until_idle()
        assert service.get(receipt.id).index_state == "queued"
        clock.advance(11)
        worker.run_until_idle()
        assert service.get(receipt.id).index_state == "indexed"


def test_worker_two_workers_never_process_a_job_twice(db_path: Path, clock: FakeClock) -> None:
    embedder = RecordingEmbedder()
    with _open(db_path, clock, embedder, worker_batch_size=3) as service:
        texts = [f"memory number {index}" for index in range(60)]
        service.remember_many([{"content": text} for text in texts])
        other_store = open_store(semantic_settings(db_path, embedder="none"))
        workers = [
            Worker(service.store, embedder, service.settings, clock=clock, worker_id="one"),
            Worker(other_store, embedder, service.settings, clock=clock, worker_id="two"),
        ]
        start = threading.Barrier(2)

        def run(worker: Worker) -> None:
            start.wait(10)
            worker.run_until_idle()

        threads = [threading.Thread(target=run, args=(worker,)) for worker in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        other_store.close()
        assert sorted(embedder.texts) == sorted(texts)
        assert sum(worker.report.processed for worker in workers) == 60
        assert service.status().queue["done"] == 60


def test_worker_expired_lease_is_taken_over(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, worker_lease_seconds=30) as service:
        receipt = service.remember("claimed by a worker that died")
        store = service.store
        claimed = store.semantic.claim_jobs(
            "dead", "hashing-256", 10, clock(), clock.now.replace(microsecond=1), 5
        )
        assert [job.memory_id for job in claimed] == [receipt.id]
        clock.advance(60)
        service.new_worker().run_until_idle()
        assert service.get(receipt.id).index_state == "indexed"
        # The dead worker's late completion is refused: the job is not completed twice.
        late = store.semantic.complete_jobs(
            "dead", "hashing-256", [(claimed[0], "x", b"")], 4, clock()
        )
        assert late == 0


def test_worker_model_switch_re_embeds_while_recall_works(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock, NamedEmbedder("model-a")) as service:
        receipts = service.remember_many(
            [{"content": "the kitchen is through the second door"}, {"content": "roses in June"}]
        )
        service.new_worker().run_until_idle()
        assert service.status().embeddings == {"model-a": 2}
    with _open(db_path, clock, NamedEmbedder("model-b")) as service:
        # Before the worker runs, recall still answers (keyword).
        assert service.recall("kitchen")[0].memory.id == receipts[0].id
        worker = service.new_worker()
        assert worker.backfill() == 2
        assert service.get(receipts[0].id).index_state == "queued"
        assert service.status().embeddings == {"model-a": 2}
        worker.run_until_idle()
        status = service.status()
        assert status.embeddings == {"model-b": 2}
        assert status.memories_by_index_state == {"indexed": 2}
        hits = service.search("kitchen door", mode="vector", min_score=0)
        assert hits[0].memory.id == receipts[0].id
        assert hits[0].backends == ["vector"]


def test_worker_model_switch_deletes_the_old_models_graph_file(
    db_path: Path, clock: FakeClock
) -> None:
    # It stayed beside the database for good, about 270 MB at a million memories.
    contents = [{"content": f"note {index} about topic{index % 7}"} for index in range(12)]
    old_graph = Path(f"{db_path}-vectors-model-a.graph.npz")
    with _open(db_path, clock, NamedEmbedder("model-a"), vector_ann_threshold=4) as service:
        service.remember_many(contents)
        service.new_worker().run_until_idle()
        service.search("topic3", mode="vector", min_score=0)
    assert old_graph.exists()
    # Another database whose name starts alike keeps its files, whatever they hold.
    neighbour = Path(f"{db_path}-vectors-x.db-vectors-model-a.graph.npz")
    neighbour.write_bytes(old_graph.read_bytes())
    with _open(db_path, clock, NamedEmbedder("model-b"), vector_ann_threshold=4) as service:
        worker = service.new_worker()
        assert worker.backfill() == 12
        # Until the switch completes, the old model's vectors and graph are still used.
        worker.run_once()
        assert old_graph.exists()
        worker.run_until_idle()
        assert service.status().embeddings == {"model-b": 12}
        service.search("topic3", mode="vector", min_score=0)
    assert not old_graph.exists()
    assert Path(f"{db_path}-vectors-model-b.graph.npz").exists()
    assert neighbour.exists()


def test_worker_re_embeds_vectors_a_model_of_the_same_name_made_at_another_dimension(
    db_path: Path, clock: FakeClock
) -> None:
    # An http model alias pointed at another model: the old vectors were read as zeros,
    # so the memories stayed "indexed" and were never found by meaning again.
    with _open(db_path, clock, NamedEmbedder("alias", 64)) as service:
        receipt = service.remember("the kitchen is through the second door")
        service.new_worker().run_until_idle()
    with _open(db_path, clock, NamedEmbedder("alias", 32)) as service:
        assert service.new_worker().run_until_idle().processed == 1
        hits = service.search("kitchen door", mode="vector", min_score=0)
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].channels["text"] > 0.5


def test_worker_thread_indexes_in_the_background(db_path: Path, clock: FakeClock) -> None:
    # An idle worker polls only once an hour here: only the write's own wake-up can make it
    # index the memory within the wait below.
    with _open(db_path, clock, worker_thread=True, worker_poll_seconds=3600) as service:
        worker = service.worker
        assert worker is not None
        receipt = service.remember("indexed by the thread")
        assert worker.wait_until_processed(1, timeout=60)
        assert service.get(receipt.id).index_state == "indexed"
        second = service.remember("and the next write wakes it again")
        assert worker.wait_until_processed(2, timeout=60)
        assert service.get(second.id).index_state == "indexed"
        [record] = service.status().workers
        assert record.alive


class _FailingSemantic:
    """The store's semantic side whose job claims fail ``failures`` times, then work."""

    def __init__(self, real: Any, failures: int) -> None:
        self._real = real
        self.failures = failures
        self.claims = 0

    def claim_jobs(self, *arguments: Any) -> Any:
        self.claims += 1
        if self.claims <= self.failures:
            raise StorageError("the database file is unreadable")
        return self._real.claim_jobs(*arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _FailingStore:
    def __init__(self, real: Any, failures: int) -> None:
        self._real = real
        self.semantic = _FailingSemantic(real.semantic, failures)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def test_worker_backs_off_when_its_store_keeps_failing(db_path: Path, clock: FakeClock) -> None:
    failures = 6
    settings = semantic_settings(db_path, worker_poll_seconds=0.01)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("waiting for the database to come back")
        store = _FailingStore(service.store, failures)
        pauses: list[float] = []

        def pause(delay: float) -> None:
            pauses.append(delay)  # the worker asks to wait this long; nothing sleeps here

        assert service.embedder is not None
        worker = Worker(cast(Store, store), service.embedder, settings, clock=clock, pause=pause)
        worker.start()
        try:
            assert worker.wait_until_processed(1, timeout=60)
        finally:
            worker.stop()
        # Every failed claim was followed by a wait, each longer than the last and well
        # above the poll rate: a failing store is not hammered.
        assert store.semantic.claims >= failures + 1
        assert len(pauses) == failures
        assert pauses == sorted(pauses)
        assert all(later >= 2 * earlier for earlier, later in itertools.pairwise(pauses))
        assert pauses[0] > settings.worker_poll_seconds


def test_worker_status_is_scoped_to_namespaces(db_path: Path, clock: FakeClock) -> None:
    with _open(db_path, clock) as service:
        service.remember("mine")
        service.remember("theirs", namespace="other")
        service.remember("theirs too", namespace="other")
        assert service.status().queue["queued"] == 1
        assert service.status(["other"]).queue["queued"] == 2
        service.new_worker().run_until_idle()
        assert service.status().embeddings == {"hashing-256": 1}
        assert service.status(["default", "other"]).embeddings == {"hashing-256": 3}
        hits = service.search("theirs", filters=Filters(), mode="vector", min_score=0)
        assert hits
        assert all(hit.memory.namespace == "default" for hit in hits)


class _GatedEmbedder(HashingEmbedder):
    """Embeds only once a graph batch has started (or gives up after ``timeout``)."""

    def __init__(self, extracting: threading.Event, timeout: float) -> None:
        super().__init__(64)
        self.extracting = extracting
        self.timeout = timeout
        self.waited_in_vain = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not self.extracting.wait(self.timeout):
            self.waited_in_vain += 1
        return super().embed_batch(texts)


class _SignallingExtractor:
    """The rule-based extractor that says when it starts, and in which thread it ran."""

    def __init__(self, extracting: threading.Event) -> None:
        rules = create_extractor(Settings(graph_extractor="rules")).extractor
        assert rules is not None
        self._rules = rules
        self.extracting = extracting
        self.threads: set[str] = set()

    @property
    def name(self) -> str:
        return self._rules.name

    @property
    def description(self) -> str:
        return self._rules.description

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        self.threads.add(threading.current_thread().name)
        self.extracting.set()
        return self._rules.extract_batch(items)


def _extract_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if "recalld-extract" in thread.name]


def test_worker_extracts_the_graph_while_it_embeds(db_path: Path, clock: FakeClock) -> None:
    extracting = threading.Event()
    # Were the two done one after the other, each embedding batch would wait out its timeout.
    embedder = _GatedEmbedder(extracting, timeout=30.0)
    extractor = _SignallingExtractor(extracting)
    settings = semantic_settings(db_path, worker_batch_size=4, graph_batch_size=2)
    with _open(db_path, clock) as service:
        for index in range(12):
            service.remember(f"Ada Lovelace met Charles Babbage in London, note {index}")
        worker = Worker(service.store, embedder, settings, extractor=extractor, clock=clock)
        report = worker.run_until_idle()
        assert (report.processed, report.extracted) == (12, 12)
        assert embedder.waited_in_vain == 0
        assert any(name.startswith("recalld-extract") for name in extractor.threads)
        assert _extract_threads() == []  # the helper ends with the run
        assert service.status().queue["queued"] == 0
        hits = service.recall("Babbage", mode="hybrid", min_score=0)
        assert len(hits) == 10


def test_worker_keeps_a_private_database_in_one_thread(clock: FakeClock) -> None:
    extracting = threading.Event()
    embedder = _GatedEmbedder(extracting, timeout=0.01)
    extractor = _SignallingExtractor(extracting)
    settings = semantic_settings(Path(":memory:"))
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("Ada Lovelace wrote the first program")
        worker = Worker(service.store, embedder, settings, extractor=extractor, clock=clock)
        report = worker.run_until_idle()
        # Another thread's connection would open an empty database of its own.
        assert (report.processed, report.extracted) == (1, 1)
        assert extractor.threads == {threading.current_thread().name}


class _MeteredExtractor(_SignallingExtractor):
    """Extracts one batch per :meth:`allow` (each waits up to a minute for its turn)."""

    def __init__(self) -> None:
        super().__init__(threading.Event())
        self._turns = threading.Semaphore(0)

    def allow(self, batches: int = 1) -> None:
        self._turns.release(batches)

    def extract_batch(self, items: Sequence[ExtractionInput]) -> list[Extraction]:
        assert self._turns.acquire(timeout=60), "no turn to extract came"
        return super().extract_batch(items)


def test_worker_looks_for_new_embeddings_after_each_graph_batch(
    db_path: Path, clock: FakeClock
) -> None:
    extractor = _MeteredExtractor()
    settings = semantic_settings(db_path, graph_batch_size=1)
    with _open(db_path, clock) as service:
        for index in range(3):
            service.remember(f"Grace Hopper found a moth in the Mark II, note {index}")
        assert service.embedder is not None
        worker = Worker(service.store, service.embedder, settings, extractor=extractor, clock=clock)
        try:
            assert worker.run_once() == 3  # the embeddings; the graph waits for its turns
            answers: list[int] = []
            step = threading.Thread(target=lambda: answers.append(worker.run_once()))
            step.start()  # nothing to embed: it waits for the graph beside...
            extractor.allow()
            step.join(timeout=30)
            # ...for one batch, not for all three: a memory written meanwhile is embedded
            # by the next step, not after the whole graph backlog.
            assert not step.is_alive()
            assert answers == [1]
            fresh = service.remember("and a new note arrives while the graph is behind")
            assert worker.run_once() == 1
            assert service.get(fresh.id).index_state == "indexed"
        finally:
            extractor.allow(10)
            worker.stop()
        assert worker.report.extracted >= 1


class _ReleasingEmbedder(HashingEmbedder):
    """Records its batches and its releases, in order."""

    def __init__(self, failing: bool = False) -> None:
        super().__init__(64)
        self.events: list[str] = []
        self.failing = failing

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.events.append(f"batch {len(texts)}")
        return super().embed_batch(texts)

    def release_memory(self) -> None:
        self.events.append("release")
        if self.failing:
            raise EmbeddingError("the arena would not shrink")


def test_worker_releases_the_embedders_memory_once_its_queue_drains(
    db_path: Path, clock: FakeClock
) -> None:
    # Once per burst of batches, not after each (shrinking after every batch cost 3.5-9 %
    # of a batch's CPU with the ONNX model).
    embedder = _ReleasingEmbedder()
    with _open(db_path, clock, embedder, worker_batch_size=3) as service:
        service.remember_many([{"content": f"note number {index}"} for index in range(7)])
        service.new_worker().run_until_idle()
        assert embedder.events == ["batch 3", "batch 3", "batch 1", "release"]
        service.remember("one more note")
        service.new_worker().run_until_idle()
        assert embedder.events[4:] == ["batch 1", "release"]


def test_worker_logs_an_embedder_that_cannot_release_and_goes_on(
    db_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = _ReleasingEmbedder(failing=True)
    with _open(db_path, clock, embedder) as service:
        first = service.remember("the first note")
        service.new_worker().run_until_idle()
        assert "the arena would not shrink" in caplog.text
        second = service.remember("the second note")
        service.new_worker().run_until_idle()
        assert service.get(first.id).index_state == "indexed"
        assert service.get(second.id).index_state == "indexed"


def test_worker_with_a_wrong_dimension_setting_keeps_the_stored_vectors(
    db_path: Path, clock: FakeClock
) -> None:
    # One `recalld worker` run with RECALLD_EMBEDDER_DIMENSION set wrong deleted every
    # vector the server's (right) model had made, then failed every job re-embedding them.
    with _open(db_path, clock, NamedEmbedder("alias", 64)) as service:
        receipt = service.remember("the kitchen is through the second door")
        service.new_worker().run_until_idle()
    with _open(db_path, clock, MisstatedEmbedder("alias", 64, says=32)) as service:
        worker = service.new_worker()
        assert worker.backfill() == 0
        assert worker.run_until_idle().processed == 0
        assert service.status().embeddings == {"alias": 1}
        assert service.get(receipt.id).index_state == "indexed"
    with _open(db_path, clock, NamedEmbedder("alias", 64)) as service:
        hits = service.search("kitchen door", mode="vector", min_score=0)
        assert [hit.memory.id for hit in hits] == [receipt.id]


def test_status_counts_only_the_current_models_work_done(db_path: Path, clock: FakeClock) -> None:
    # During a model switch "done" added the old model's vectors (dropped once the switch
    # completes) to the new one's: 4 memories showed 1 queued and 7 done, the switch
    # 88 % done when it was 75 % done (adversarial pass d63).
    with _open(db_path, clock, NamedEmbedder("model-a"), worker_batch_size=3) as service:
        service.remember_many([{"content": f"memory number {index}"} for index in range(4)])
        service.new_worker().run_until_idle()
    with _open(db_path, clock, NamedEmbedder("model-b"), worker_batch_size=3) as service:
        assert service.new_worker().run_once() == 3
        status = service.status()
        assert status.embeddings == {"model-a": 4, "model-b": 3}
        assert status.queue == {"queued": 1, "running": 0, "done": 3, "failed": 0}
