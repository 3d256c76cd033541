"""A recall with no vector to search embeds its query to learn whether the embedder works
(stop 63): a healthy one must not embed it more often than recall did before, alone or
beside a recall of the same words (review of pass x63)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from recalld.embeddings.base import Vectors
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

QUERY = "where is the server kept"


def test_a_healthy_recall_with_no_vector_yet_embeds_the_query_once(
    any_database: Path | str, clock: FakeClock
) -> None:
    # Every memory is still queued (no catch-up at recall): the recall awaits the
    # embedding embed_soon started, and the next ones (and explain) find it cached.
    embedder = RecordingEmbedder()
    settings = semantic_settings(any_database)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        for number in range(3):
            service.remember(f"The staging database lives in Melbourne {number}")
        for mode in ("hybrid", "vector", "hybrid"):
            service.search(QUERY, mode=mode)
        memory = service.list_memories(limit=1).memories[0]
        assert service.explain(QUERY, memory.id).stage == "not_in_pool"
        assert embedder.texts.count(QUERY) == 1


class _GatedEmbedder(RecordingEmbedder):
    """Holds the query's embedding on the query thread until ``gate`` opens; a recall
    that embeds the query itself opens it (it did not wait for the one on its way)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if list(texts) == [QUERY]:
            if threading.current_thread().name.startswith("recalld-query"):
                assert self.gate.wait(10), "no recall went on"
            else:
                self.gate.set()
        return super().embed_batch(texts)


class _WatchedPending(OrderedDict[str, "Future[Vectors]"]):
    """The retriever's pending query embeddings: opens the gate once both recalls have
    found the query's embedding on its way (so neither needs to embed it itself)."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate
        self.found_by: set[str] = set()
        self.lock = threading.Lock()

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        found = super().get(key, default)
        if found is not None and key == QUERY:
            with self.lock:
                self.found_by.add(threading.current_thread().name)
                if {"first", "second"} <= self.found_by:
                    self.gate.set()
        return found


def test_two_healthy_recalls_of_the_same_words_share_one_query_embedding(
    any_database: Path | str, clock: FakeClock
) -> None:
    # The first recall took the embedding on its way over; the second, finding none,
    # embedded the same words again (a second call to a slow endpoint, or the model).
    embedder = _GatedEmbedder()
    settings = semantic_settings(any_database)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("The staging database lives in Melbourne")
        service.indexing.retriever._pending = _WatchedPending(embedder.gate)
        outcomes: dict[str, object] = {}

        def search() -> None:
            outcomes[threading.current_thread().name] = service.search(QUERY, mode="hybrid")

        threads = [threading.Thread(target=search, name=name) for name in ("first", "second")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert outcomes == {"first": [], "second": []}
        assert embedder.texts.count(QUERY) == 1
