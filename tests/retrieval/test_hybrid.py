"""Hybrid recall: scored hits with channels and backends, walls and filters before top-k.

Most tests here pin the candidate stage (which memories each channel finds, under which
walls and filters), so they pass ``min_score=0``: a weak vector-only match scores under
the default threshold. Abstention and calibration have their own tests (test_rerank.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from recalld.embeddings.base import Vectors
from recalld.embeddings.hashing import HashingEmbedder
from recalld.errors import EmbeddingError, ValidationError
from recalld.model import Filters
from recalld.retrieval import vector_index
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def indexed(db_path: Path, clock: FakeClock) -> MemoryService:
    service = MemoryService.open(semantic_settings(db_path), clock=clock)
    service.remember_many(
        [
            {"content": "The staging database lives in the Melbourne region", "tags": ["infra"]},
            {"content": "Grandma grows roses in her garden", "kind": "experience"},
            {"content": "The production database runs in Sydney", "tags": ["infra"]},
        ]
    )
    service.new_worker().run_until_idle()
    return service


def test_hybrid_hits_carry_channels_and_backends(indexed: MemoryService) -> None:
    with indexed as service:
        found = service.recall("staging database", limit=3)
        # With the default min_score the real match comes first, the other database note
        # (a word in common) may follow, the roses never do.
        assert found[0].memory.content.startswith("The staging database")
        assert found[0].backends == ["fts", "vector"]
        assert all("roses" not in hit.memory.content for hit in found)
        hits = service.recall("staging database", limit=3, min_score=0)
        top = hits[0]
        assert top.memory.content.startswith("The staging database")
        assert top.backends == ["fts", "vector"]
        assert set(top.channels) == {"keyword", "text"}
        assert 0.0 <= top.score <= 1.0
        assert all(0.0 <= hit.score <= 1.0 for hit in hits)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
        # A memory with no shared word is found by the vector backend alone.
        vector_only = [hit for hit in hits if "fts" not in hit.backends]
        assert vector_only
        assert vector_only[0].backends == ["vector"]
        assert vector_only[0].channels["keyword"] == 0.0


def test_hybrid_modes_use_one_channel(indexed: MemoryService) -> None:
    with indexed as service:
        keyword = service.search("database", mode="keyword")
        assert {tuple(hit.backends) for hit in keyword} == {("fts",)}
        assert all(set(hit.channels) == {"keyword"} for hit in keyword)
        vector = service.search("database", mode="vector", min_score=0)
        assert {tuple(hit.backends) for hit in vector} == {("vector",)}
        assert vector[0].channels["text"] == max(hit.channels["text"] for hit in vector)
        assert "database" in vector[0].memory.content
        assert 0.0 < vector[0].score <= 1.0


def test_hybrid_filters_and_namespaces_apply_before_top_k(indexed: MemoryService) -> None:
    with indexed as service:
        service.remember("staging database notes in another tenant", namespace="other")
        service.new_worker().run_until_idle()
        hits = service.search(
            "staging database", limit=1, filters=Filters(kind="experience"), min_score=0
        )
        assert [hit.memory.kind for hit in hits] == ["experience"]
        tagged = service.search(
            "roses garden", limit=5, filters=Filters(tags_any=["infra"]), min_score=0
        )
        assert tagged
        assert all("infra" in hit.memory.tags for hit in tagged)
        walled = service.search("staging database tenant", limit=10, mode="vector", min_score=0)
        assert all(hit.memory.namespace == "default" for hit in walled)
        other = service.search(
            "staging database", limit=10, namespace="other", mode="vector", min_score=0
        )
        assert [hit.memory.namespace for hit in other] == ["other"]


def test_hybrid_forget_removes_the_vector(indexed: MemoryService) -> None:
    with indexed as service:
        target = service.search("roses", mode="vector", min_score=0)[0].memory
        assert service.forget(target.id)
        assert target.id not in {
            hit.memory.id for hit in service.search("roses", mode="vector", min_score=0)
        }
        assert service.status().embeddings == {"hashing-256": 2}


def test_hybrid_second_process_sees_new_vectors(db_path: Path, clock: FakeClock) -> None:
    with MemoryService.open(semantic_settings(db_path), clock=clock) as service:
        first = service.remember("the staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        assert service.search("staging", mode="vector", min_score=0)[0].memory.id == first.id
        second = service.remember("grandma grows roses")
        # Another process (the CLI worker) embeds it; this process's index catches up.
        environment = {**os.environ, "RECALLD_EMBEDDER": "hashing", "RECALLD_SYNCHRONOUS": "NORMAL"}
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "recalld",
                "--db",
                str(db_path),
                "worker",
                "--until-idle",
                "--json",
            ],
            cwd=REPOSITORY,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        assert json.loads(completed.stdout)["processed"] == 1
        hits = service.search("roses", mode="vector", min_score=0)
        assert hits[0].memory.id == second.id
        status = subprocess.run(
            [sys.executable, "-m", "recalld", "--db", str(db_path), "status", "--json"],
            cwd=REPOSITORY,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["embeddings"] == {"hashing-256": 2}


def test_hybrid_ann_index_is_persisted_and_catches_up(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=40, worker_batch_size=64)
    contents = [f"note {index} about topic{index % 7} and item{index}" for index in range(120)]
    with MemoryService.open(settings, clock=clock) as service:
        receipts = service.remember_many([{"content": text} for text in contents])
        service.remember("far away in another namespace", namespace="other")
        service.new_worker().run_until_idle()
        hits = service.search("item17 topic3", mode="vector", limit=5, min_score=0)
        assert hits[0].memory.id == receipts[17].id
        assert all(hit.memory.namespace == "default" for hit in hits)
        assert service.status().index is not None
    graph_file = Path(f"{db_path}-vectors-hashing-256.graph.npz")
    assert graph_file.exists()
    with MemoryService.open(settings, clock=clock) as service:
        service.forget(receipts[17].id)
        extra = service.remember("a brand new note about item500")
        service.new_worker().run_until_idle()
        hits = service.search("item17 topic3", mode="vector", limit=5, min_score=0)
        assert receipts[17].id not in {hit.memory.id for hit in hits}
        assert (
            service.search("item500", mode="vector", limit=1, min_score=0)[0].memory.id == extra.id
        )
        index = service.status().index
        assert index is not None
        assert index.ann
        assert index.vectors == 120


class _BrokenQueryEmbedder(HashingEmbedder):
    """Embeds stored memories; fails on queries with ``error`` once ``broken`` is set."""

    def __init__(self, error: Exception) -> None:
        super().__init__(64)
        self.error = error
        self.broken = False

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if self.broken:
            raise self.error
        return super().embed_batch(texts)


def test_hybrid_embedding_failure_answers_by_keyword_and_says_so(
    db_path: Path, clock: FakeClock
) -> None:
    embedder = _BrokenQueryEmbedder(EmbeddingError("the embedding endpoint is unreachable"))
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        embedder.broken = True
        hits = service.search("staging database")
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].backends == ["fts", VECTOR_UNAVAILABLE]


class _AskingEmbedder(_BrokenQueryEmbedder):
    """Knows its dimension only by asking (as the http embedder with no dimension set),
    which fails too once ``broken`` is set."""

    @property
    def dimension(self) -> int:
        if self.broken:
            raise self.error
        return super().dimension


def test_hybrid_an_embedder_that_cannot_tell_its_dimension_answers_by_keyword_and_says_so(
    db_path: Path, clock: FakeClock
) -> None:
    # The http embedder with no RECALLD_EMBEDDER_DIMENSION asks its endpoint: down, every
    # recall of a new process failed with the endpoint's error instead of keyword hits.
    embedder = _AskingEmbedder(EmbeddingError("the embedding endpoint answered 500"))
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
    embedder.broken = True
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        hits = service.search("staging database")
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].backends == ["fts", VECTOR_UNAVAILABLE]


def test_hybrid_a_bug_in_the_embedder_is_not_hidden(db_path: Path, clock: FakeClock) -> None:
    embedder = _BrokenQueryEmbedder(RuntimeError("an embedder bug"))
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        embedder.broken = True
        with pytest.raises(RuntimeError, match="an embedder bug"):
            service.search("staging database")


def test_hybrid_tag_filter_keeps_the_namespace_wall_and_expiry(
    db_path: Path, clock: FakeClock
) -> None:
    # Three vector candidates: the other namespace's five could fill them all.
    with MemoryService.open(
        semantic_settings(db_path, vector_candidates=3), clock=clock
    ) as service:
        for content in ("The staging database in Melbourne", "The production database in Sydney"):
            service.remember(content, tags=["infra"])
        # Nearer to the query than anything tagged in "default", and tagged alike.
        for index in range(5):
            service.remember(f"grandma roses garden {index}", tags=["infra"], namespace="other")
        for index in range(3):
            service.remember(
                f"grandma roses garden, staging {index}", tags=["infra"], ttl_seconds=60
            )
        service.new_worker().run_until_idle()
        clock.advance(120)
        hits = service.search(
            "grandma roses garden",
            limit=2,
            mode="vector",
            filters=Filters(tags_any=["infra"]),
            min_score=0,
        )
        # Both of default's live tagged memories, none of the other namespace's nor the
        # expired one: the wall and expiry apply before the vector candidates are cut.
        assert sorted(hit.memory.content for hit in hits) == [
            "The production database in Sydney",
            "The staging database in Melbourne",
        ]


def test_hybrid_an_edited_memory_is_scored_by_its_new_text(indexed: MemoryService) -> None:
    # The retriever keeps each memory's terms between queries, keyed by the text itself:
    # an edit (same memory, same seq) must be scored by what it says now.
    with indexed as service:
        first = service.recall("Melbourne staging", mode="keyword", limit=3, min_score=0)
        memory = first[0].memory
        assert memory.content.startswith("The staging database")
        before = first[0].channels["keyword"]
        service.update(memory.id, content="The staging database moved to Perth")
        assert service.recall("Melbourne", mode="keyword", limit=3, min_score=0) == []
        after = service.recall("Melbourne staging", mode="keyword", limit=3, min_score=0)
        assert [hit.memory.id for hit in after] == [memory.id]
        assert after[0].channels["keyword"] < before  # one of the two words is gone
        perth = service.recall("Perth", mode="keyword", limit=3, min_score=0)
        assert [hit.memory.id for hit in perth] == [memory.id]


class _GatedQueryEmbedder(HashingEmbedder):
    """Once armed, embeds only after a chosen step of the recall was called (or 10 s)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.asked = threading.Event()
        self.waited: list[bool] = []

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if self.armed:
            self.waited.append(self.asked.wait(timeout=10))
        return super().embed_batch(texts)

    def open_when_called(self, owner: Any, name: str) -> None:
        """Let the embedding go on once ``owner.<name>`` is called."""
        original = getattr(owner, name)

        def called(*args: Any, **kwargs: Any) -> Any:
            self.asked.set()
            return original(*args, **kwargs)

        setattr(owner, name, called)


@contextmanager
def _armed(
    db_path: Path, clock: FakeClock, embedder: _GatedQueryEmbedder
) -> Iterator[tuple[MemoryService, str]]:
    """A service holding one indexed memory (its id comes along), whose next query
    embedding waits until the keyword index is asked."""
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        embedder.open_when_called(service.store.retrieval, "keyword_candidates")
        embedder.armed = True
        yield service, receipt.id


def test_hybrid_embeds_the_query_while_the_keyword_index_answers(
    db_path: Path, clock: FakeClock
) -> None:
    embedder = _GatedQueryEmbedder()
    with _armed(db_path, clock, embedder) as (service, memory_id):
        hits = service.search("staging database")
        # Embedding in the caller's thread first would have waited out the timeout.
        assert embedder.waited == [True]
        assert [hit.memory.id for hit in hits] == [memory_id]
        assert hits[0].backends == ["fts", "vector"]
    # Closing the service stops the query-embedding threads.
    assert not [
        thread for thread in threading.enumerate() if thread.name.startswith("recalld-query")
    ]


def _searching_threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that run a vector search from now on, in order."""
    searched: list[str] = []
    search = vector_index.VectorIndex.search

    def recorded(self: vector_index.VectorIndex, *args: Any, **kwargs: Any) -> Any:
        searched.append(threading.current_thread().name)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(vector_index.VectorIndex, "search", recorded)
    return searched


def test_hybrid_reads_the_visible_rows_while_the_query_is_embedded(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under a row filter the vector search needs the list of visible rows: the recall's
    # own thread reads it without waiting for the query's vector (a third thread would
    # wait for a core), and the thread that embedded the query searches.
    embedder = _GatedThreadEmbedder()
    settings = semantic_settings(db_path)
    searched = _searching_threads(monkeypatch)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        tagged = service.remember("The staging database lives in Melbourne", tags=["infra"])
        service.remember("The production database runs in Sydney")
        service.new_worker().run_until_idle()
        embedder.open_when_called(service.store.semantic, "visible_seqs")
        listed = service.store.semantic.visible_seqs
        readers: list[str] = []

        def reading(scope: Any) -> list[int]:
            readers.append(threading.current_thread().name)
            return listed(scope)

        monkeypatch.setattr(service.store.semantic, "visible_seqs", reading)
        embedder.armed = True
        searched.clear()
        hits = service.search(
            "where are the servers", filters=Filters(tags_any=["infra"]), min_score=0
        )
        # Reading the list after the vector would have waited out the timeout.
        assert embedder.waited == [True]
        assert [hit.memory.id for hit in hits] == [tagged.id]
        assert hits[0].backends == ["vector"]
        assert readers == [threading.current_thread().name]
        assert len(embedder.threads) == 1
        assert embedder.threads[0].startswith("recalld-query")
        assert searched == embedder.threads


class _GatedThreadEmbedder(_GatedQueryEmbedder):
    """Gated, says which thread embedded the armed query, and then raises ``error`` if set."""

    def __init__(self, error: Exception | None = None) -> None:
        super().__init__()
        self.error = error
        self.threads: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        vectors = super().embed_batch(texts)
        if self.armed:
            self.threads.append(threading.current_thread().name)
            if self.error is not None:
                raise self.error
        return vectors


def test_hybrid_searches_in_the_thread_that_embedded_the_query(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The embedding ends after the recall asked for its search: the thread that embedded
    # runs the search next, so no other helper has to wake up for it.
    embedder = _GatedThreadEmbedder()
    searched = _searching_threads(monkeypatch)
    with _armed(db_path, clock, embedder) as (service, memory_id):
        hits = service.search("staging database")
        assert embedder.waited == [True]
        assert [hit.memory.id for hit in hits] == [memory_id]
        assert hits[0].backends == ["fts", "vector"]
        assert len(embedder.threads) == 1
        assert embedder.threads[0].startswith("recalld-query")
        assert searched == embedder.threads


@pytest.mark.parametrize(
    ("error", "raised"),
    [(EmbeddingError("the endpoint is unreachable"), None), (RuntimeError("a bug"), RuntimeError)],
)
def test_hybrid_an_embedding_that_fails_after_the_search_was_asked_for(
    db_path: Path, clock: FakeClock, error: Exception, raised: type[Exception] | None
) -> None:
    # What the embedding raised reaches the recall through the search that waited on it:
    # an embedding failure degrades to keyword recall, a bug propagates.
    embedder = _GatedThreadEmbedder(error)
    with _armed(db_path, clock, embedder) as (service, memory_id):
        if raised is not None:
            with pytest.raises(raised, match="a bug"):
                service.search("staging database")
        else:
            hits = service.search("staging database")
            assert [hit.memory.id for hit in hits] == [memory_id]
            assert hits[0].backends == ["fts", VECTOR_UNAVAILABLE]
        assert embedder.waited == [True]


class _StartRecordingEmbedder(RecordingEmbedder):
    """Records its texts and says when it has been asked for a query's vector."""

    def __init__(self) -> None:
        super().__init__()
        self.query = ""
        self.started = threading.Event()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if self.query in texts:
            self.started.set()
        return super().embed_batch(texts)


def test_hybrid_starts_the_query_embedding_before_the_catch_up(
    db_path: Path, clock: FakeClock
) -> None:
    embedder = _StartRecordingEmbedder()
    settings = semantic_settings(db_path)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        catch_up = service.indexing.catch_up
        seen: list[bool] = []

        def waiting_catch_up(namespaces: Sequence[str]) -> int:
            # Started before the catch-up, the embedding is under way while it runs;
            # started after it, this would wait out the timeout.
            seen.append(embedder.started.wait(timeout=10))
            return catch_up(namespaces)

        service.indexing.catch_up = waiting_catch_up  # type: ignore[method-assign]
        embedder.query = "where is staging"
        hits = service.search(embedder.query, min_score=0)
        assert seen == [True]
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert "vector" in hits[0].backends
        # Embedded once: the recall took over the vector the early start computed.
        assert embedder.texts.count(embedder.query) == 1
        # Keyword recall and a rejected request embed nothing.
        service.search("keyword only please", mode="keyword", min_score=0)
        with pytest.raises(ValidationError):
            service.search("a bad filter", filters=Filters(since="not a time"))
        assert "keyword only please" not in embedder.texts
        assert "a bad filter" not in embedder.texts


def test_hybrid_in_a_private_memory_database_searches_in_the_callers_thread(
    clock: FakeClock,
) -> None:
    # ":memory:" is one connection's own database: a helper thread would see another,
    # empty one. The filtered search reads the visible rows, so it must stay here.
    settings = semantic_settings(Path(":memory:"))
    with MemoryService.open(settings, clock=clock) as service:
        tagged = service.remember("The staging database lives in Melbourne", tags=["infra"])
        service.remember("The production database runs in Sydney")
        service.new_worker().run_until_idle()
        hits = service.search(
            "where are the servers", filters=Filters(tags_any=["infra"]), min_score=0
        )
        assert [hit.memory.id for hit in hits] == [tagged.id]
        assert hits[0].backends == ["vector"]


def test_hybrid_reads_the_keyword_candidates_cosines_while_the_search_runs(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-scoring from the database (a large index, here forced), the keyword candidates'
    # cosines and their neighbours' are read once the query is embedded, before the
    # vector search returns; the pool reads only what is left after it, and every hit
    # scores as with the vectors held in memory. Few vector candidates, so that the
    # search does not give every keyword candidate's cosine.
    settings = semantic_settings(
        db_path, vector_ann_threshold=10, worker_batch_size=64, vector_candidates=4
    )
    turns = [
        {
            "content": f"turn {index} about {'the garden roses' if index % 5 == 0 else 'work'}",
            "source": "chat-1",
            "speaker": "Ana" if index % 2 else "Ben",
        }
        for index in range(40)
    ]
    query = "garden roses at home"

    def recall(service: MemoryService) -> list[tuple[str, float, dict[str, Any]]]:
        hits = service.search(query, limit=40, min_score=0)
        return [(hit.memory.id, hit.score, dict(hit.channels)) for hit in hits]

    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many(turns)
        service.new_worker().run_until_idle()
        in_memory = recall(service)
        index = service.indexing.retriever.loaded_index()
        assert index is not None
        assert not index.reads_database
    monkeypatch.setattr(vector_index, "EXACT_MEMORY_ROWS", 0)
    asked: list[list[int]] = []
    similarities = vector_index.VectorIndex.similarities

    def recorded(self: Any, vector: Vectors, seqs: Sequence[int]) -> dict[int, float]:
        asked.append(list(seqs))
        return similarities(self, vector, seqs)

    monkeypatch.setattr(vector_index.VectorIndex, "similarities", recorded)

    def reads_of_a_recall() -> list[list[int]]:
        with MemoryService.open(settings, clock=clock) as service:
            service.search("warm up", min_score=0)
            index = service.indexing.retriever.loaded_index()
            assert index is not None
            assert index._stored is None
            asked.clear()
            assert recall(service) == in_memory
            return list(asked)

    with monkeypatch.context() as before:
        # As before: every cosine read once the search returned.
        before.setattr(vector_index.VectorIndex, "reads_database", False)
        [single] = reads_of_a_recall()
    early_read, late_read = reads_of_a_recall()
    assert not set(early_read) & set(late_read)
    assert set(single) <= set(early_read) | set(late_read)
    # The keyword candidates the search did not return were read early, not after it.
    assert set(late_read) < set(single)
