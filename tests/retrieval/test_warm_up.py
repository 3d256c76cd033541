"""A long-running server (``worker_thread``) loads its vector index and model at start; a
library or CLI process loads nothing before its first recall."""

from __future__ import annotations

from pathlib import Path

from recalld.embeddings.base import Loadable
from recalld.embeddings.hashing import HashingEmbedder
from recalld.embeddings.http import HTTPEmbedder
from recalld.embeddings.minilm import MiniLMEmbedder
from recalld.embeddings.torch_backend import SentenceTransformerEmbedder
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

MEMORIES = 30


def _stored(db_path: Path, clock: FakeClock) -> list[str]:
    """A file with MEMORIES embedded memories and a saved ANN graph."""
    settings = semantic_settings(db_path, vector_ann_threshold=10)
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many(
            [{"content": f"entry{index} about the garden"} for index in range(MEMORIES)]
        )
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector", min_score=0)  # builds the graph, saved on close
    return [receipt.id for receipt in receipts]


def test_server_loads_the_vector_index_before_any_recall(db_path: Path, clock: FakeClock) -> None:
    ids = _stored(db_path, clock)
    settings = semantic_settings(
        db_path, vector_ann_threshold=10, worker_thread=True, worker_poll_seconds=3600
    )
    with MemoryService.open(settings, clock=clock) as service:
        retriever = service.indexing.retriever
        assert retriever.warming is not None
        retriever.warming.result(timeout=60)
        index = retriever.loaded_index()
        assert index is not None
        assert index.size == MEMORIES
        assert index.uses_ann  # the saved graph, loaded
        hits = service.search("entry7 about the garden", mode="vector", min_score=0)
        assert hits[0].memory.id == ids[7]


def test_a_library_process_loads_nothing_before_its_first_recall(
    db_path: Path, clock: FakeClock
) -> None:
    _stored(db_path, clock)
    settings = semantic_settings(db_path, vector_ann_threshold=10)
    with MemoryService.open(settings, clock=clock) as service:
        retriever = service.indexing.retriever
        assert retriever.warming is None
        assert retriever.loaded_index() is None
        service.search("entry7", mode="vector", min_score=0)
        assert retriever.loaded_index() is not None


def test_close_waits_for_the_warm_up(db_path: Path, clock: FakeClock) -> None:
    _stored(db_path, clock)
    settings = semantic_settings(
        db_path, vector_ann_threshold=10, worker_thread=True, worker_poll_seconds=3600
    )
    service = MemoryService.open(settings, clock=clock)
    warming = service.indexing.retriever.warming
    assert warming is not None
    service.close()  # at once: the store must not close under the loading thread
    assert warming.done()
    assert warming.exception() is None


class LoadableEmbedder(RecordingEmbedder):
    """A recording embedder with a model to load, as MiniLM has."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    def load(self) -> None:
        self.loads += 1


def _served(db_path: Path, clock: FakeClock, embedder: RecordingEmbedder) -> MemoryService:
    settings = semantic_settings(db_path, worker_thread=True, worker_poll_seconds=3600)
    return MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)


def test_the_warm_up_loads_a_local_model_once(db_path: Path, clock: FakeClock) -> None:
    # An empty store: the worker has nothing to embed, so any call would be the warm-up's.
    embedder = LoadableEmbedder()
    with _served(db_path, clock, embedder) as service:
        retriever = service.indexing.retriever
        assert retriever.warming is not None
        retriever.warming.result(timeout=60)
        assert retriever.warm_up() is retriever.warming  # asked again: the same one
        assert embedder.loads == 1
        assert embedder.texts == []  # loaded, not called


def test_the_warm_up_never_calls_an_embedder_without_a_model_to_load(
    db_path: Path, clock: FakeClock
) -> None:
    # An HTTP embedder has nothing to load: a call would be a request (maybe a paid one).
    # An empty store: the worker has nothing to embed, so any call would be the warm-up's.
    embedder = RecordingEmbedder()
    with _served(db_path, clock, embedder) as service:
        warming = service.indexing.retriever.warming
        assert warming is not None
        warming.result(timeout=60)
        assert service.indexing.retriever.loaded_index() is not None
        assert embedder.texts == []


def test_a_private_in_memory_database_is_not_warmed(clock: FakeClock) -> None:
    # Another thread would open its own, empty database.
    with MemoryService.open(semantic_settings(Path(":memory:")), clock=clock) as service:
        service.remember("a note")
        retriever = service.indexing.retriever
        assert retriever.warm_up() is None
        assert retriever.warming is None


def test_the_shipped_embedders_say_whether_they_have_a_model_to_load() -> None:
    assert issubclass(MiniLMEmbedder, Loadable)
    assert issubclass(SentenceTransformerEmbedder, Loadable)  # torch itself is not imported
    assert not issubclass(HTTPEmbedder, Loadable)  # a call would be a request
    assert not issubclass(HashingEmbedder, Loadable)
