"""A recall whose vectors could not be searched says so: its keyword hits list
``vector-unavailable`` (as explain's ``found_by`` does), and an answer left empty by it is
an error, not "nothing stored matches" (the meaning was never compared)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from recalld.adapters.http_api import create_app
from recalld.embeddings.http import HTTPEmbedder
from recalld.errors import EmbedderUnavailableError, EmbeddingError
from recalld.recollection.cue import Cue
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE
from recalld.retrieval.pool import Mode
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.adapters.conftest import LOOPBACK
from tests.conftest import FakeClock
from tests.embeddings.test_endpoint_rest import Monotonic
from tests.embeddings.test_http import FakeEmbeddingServer, _url
from tests.embeddings.test_http import server as server  # the fixture
from tests.retrieval.test_hybrid import _BrokenQueryEmbedder
from tests.semantic_support import semantic_settings

UNREACHABLE = "the embedding endpoint is unreachable"


def _broken_service(database: Path | str, clock: FakeClock) -> tuple[MemoryService, str]:
    """A service whose one memory has its vector, and whose embedder then fails."""
    embedder = _BrokenQueryEmbedder(EmbeddingError(UNREACHABLE))
    settings = semantic_settings(database)
    service = MemoryService(open_store(settings), settings, clock=clock, embedder=embedder)
    receipt = service.remember("The staging database lives in Melbourne")
    service.new_worker().run_until_idle()
    embedder.broken = True
    return service, receipt.id


def test_vector_mode_with_a_failing_embedder_is_an_error_not_an_empty_answer(
    any_database: Path | str, clock: FakeClock
) -> None:
    service, memory_id = _broken_service(any_database, clock)
    with service:
        # Before: [] — read as "nothing similar is stored" while nothing was compared.
        with pytest.raises(EmbeddingError) as raised:
            service.search("staging database", mode="vector", min_score=0)
        assert str(raised.value) == f"recall could not search by meaning: {UNREACHABLE}"
        # Keyword mode, which needs no embedder, still answers.
        assert [hit.memory.id for hit in service.search("staging", mode="keyword")] == [memory_id]


def test_hybrid_with_nothing_by_keyword_and_a_failing_embedder_is_an_error(
    any_database: Path | str, clock: FakeClock
) -> None:
    service, _ = _broken_service(any_database, clock)
    with service:
        with pytest.raises(EmbeddingError, match="found nothing by keyword and could not search"):
            service.search("where is the server kept", min_score=0)
        # A query of stop words asks only the vectors (see HybridRetriever.pool).
        with pytest.raises(EmbeddingError) as raised:
            service.search("who is she", min_score=0)
        assert "keyword" not in str(raised.value)
        # What the keyword index finds still comes back, marked.
        hits = service.search("staging database", min_score=0)
        assert [hit.backends for hit in hits] == [["fts", VECTOR_UNAVAILABLE]]


def test_keyword_candidates_all_under_min_score_are_not_called_nothing_found(
    any_database: Path | str, clock: FakeClock
) -> None:
    # The keyword index found the memory, scored without its vector under min_score: the
    # error said "found nothing by keyword" (review of pass x62).
    service, _ = _broken_service(any_database, clock)
    with service:
        with pytest.raises(EmbeddingError) as raised:
            service.search("staging database", min_score=0.99)
        assert str(raised.value) == (
            "recall kept none of the 1 candidates found without the vectors (min_score 0.99)"
            f" and could not search by meaning: {UNREACHABLE}"
        )


def test_explain_lists_vector_unavailable_as_the_hit_does(
    any_database: Path | str, clock: FakeClock
) -> None:
    service, memory_id = _broken_service(any_database, clock)
    with service:
        hits = service.search("staging database")
        explanation = service.explain("staging database", memory_id)
        assert explanation.stage == "returned"
        # Before: ["fts"], while the hit said ["fts", "vector-unavailable"].
        assert explanation.found_by == hits[0].backends == ["fts", VECTOR_UNAVAILABLE]
        assert "embedding the query failed" in explanation.reason
        # Not found at all: the reason already named the failure, found_by stays empty.
        missing = service.explain("staging database", memory_id, mode="vector")
        assert missing.stage == "not_in_pool"
        assert missing.found_by == []
        assert "embedding the query failed" in missing.reason


def test_an_endpoint_down_from_the_start_is_named_though_no_vector_exists(
    server: FakeEmbeddingServer, any_database: Path | str, clock: FakeClock
) -> None:
    # Nothing was ever embedded, so there were no vectors to search and recall never asked
    # the endpoint: keyword hits came back unmarked and vector mode answered [].
    server.fail_with = 503
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    settings = semantic_settings(any_database, recall_catch_up=64)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("The staging database lives in Melbourne")
        hits = service.search("staging database", min_score=0)  # its catch-up meets the 503
        assert [hit.memory.id for hit in hits] == [receipt.id]
        assert hits[0].backends[-1] == VECTOR_UNAVAILABLE
        with pytest.raises(EmbedderUnavailableError, match="could not search by meaning"):
            service.search("staging database", mode="vector", min_score=0)
        asked = len(server.requests)
        server.fail_with = None  # resting: recall does not ask it until the rest is over
        with pytest.raises(EmbedderUnavailableError):
            service.search("where is the server kept", min_score=0)
        assert len(server.requests) == asked


def test_a_query_embedding_already_failing_is_awaited_with_no_vector_to_search(
    server: FakeEmbeddingServer, any_database: Path | str, clock: FakeClock
) -> None:
    # A process that never asked the endpoint (each CLI command) took it for available while
    # the query's embedding, sent by embed_soon, was still on its way to failing: nothing was
    # embedded yet, so recall did not wait for it and answered [] (review of pass x62).
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    settings = semantic_settings(any_database)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("The staging database lives in Melbourne")
        release = server.hold_post = threading.Event()  # the query's POST, then no answer
        outcome: list[object] = []

        def search() -> None:
            try:
                outcome.append(service.search("where is the server kept", min_score=0))
            except EmbeddingError as error:
                outcome.append(error)

        searching = threading.Thread(target=search)
        searching.start()
        assert server.held.wait(10)
        release.set()
        searching.join(10)
        assert len(outcome) == 1
        assert isinstance(outcome[0], EmbedderUnavailableError), outcome
        assert "could not search by meaning" in str(outcome[0])


def test_context_recall_asks_an_endpoint_it_has_not_seen_fail(
    server: FakeEmbeddingServer, any_database: Path | str, clock: FakeClock
) -> None:
    # Nothing embedded (its jobs waiting), the endpoint down but not yet asked by this
    # process (a server just restarted): the cue's text was never embedded, so context
    # recall answered [] as "nothing stored is like it" (review of pass x62).
    server.fail_with = 503
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    settings = semantic_settings(any_database)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("The staging database lives in Melbourne")
        with pytest.raises(EmbedderUnavailableError, match="could not compare the text"):
            service.recollections.recall(Cue(text="where was it moved"))
        server.fail_with = None
        asked = len(server.requests)
        with pytest.raises(EmbedderUnavailableError):  # resting: not asked again
            service.recollections.recall(Cue(text="where was it moved"))
        assert len(server.requests) == asked


def test_a_local_model_failing_from_the_start_is_named_though_no_vector_exists(
    any_database: Path | str, clock: FakeClock
) -> None:
    # A model that never loaded (a corrupt file): nothing embedded, so the query's failing
    # embedding was never read; vector mode answered [] and keyword hits were unmarked,
    # though the README promises the error for a corrupt model file (review of pass x62).
    embedder = _BrokenQueryEmbedder(EmbeddingError("the model file is corrupt"))
    embedder.broken = True
    settings = semantic_settings(any_database, recall_catch_up=64)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        # An empty store answers at once: nothing stored, nothing to compare.
        assert service.search("where is the server kept", mode="vector") == []
        receipt = service.remember("The staging database lives in Melbourne")
        with pytest.raises(EmbeddingError, match="the model file is corrupt"):
            service.search("where is the server kept", mode="vector", min_score=0)
        hits = service.search("staging database", min_score=0)
        assert [(hit.memory.id, hit.backends) for hit in hits] == [
            (receipt.id, ["fts", VECTOR_UNAVAILABLE])
        ]
        with pytest.raises(EmbeddingError, match="could not compare the text by meaning"):
            service.recollections.recall(Cue(text="where was it moved"))


def test_rest_search_answers_503_rather_than_an_empty_list(db_path: Path, clock: FakeClock) -> None:
    service, _ = _broken_service(db_path, clock)
    with (
        service,
        TestClient(
            create_app(service, service.settings), client=LOOPBACK, base_url="http://127.0.0.1"
        ) as client,
    ):
        answer = client.post("/v1/search", json={"query": "where is the server kept"})
        assert answer.status_code == 503, answer.text
        assert answer.json()["error"]["type"] == "embedding_error"
        found = client.post("/v1/search", json={"query": "staging database"})
        assert found.status_code == 200
        assert found.json()[0]["backends"] == ["fts", VECTOR_UNAVAILABLE]
        context = client.post("/v1/context/recall", json={"query": "where was it moved"})
        assert context.status_code == 503, context.text
        assert context.json()["error"]["type"] == "embedding_error"


def test_context_recall_says_its_text_was_compared_by_words_alone(
    any_database: Path | str, clock: FakeClock
) -> None:
    service, memory_id = _broken_service(any_database, clock)
    with service:
        recollections = service.recollections
        hits = recollections.recall(Cue(text="staging database"))
        assert [hit.memory.id for hit in hits] == [memory_id]
        # Before: ["context"], with the text scored by its words and nothing said.
        assert hits[0].backends == ["context", VECTOR_UNAVAILABLE]
        # Before: [] ("nothing stored is like it"), the meaning never compared.
        with pytest.raises(EmbeddingError, match="could not compare the text by meaning"):
            recollections.recall(Cue(text="where was it moved"))
        # A cue without text asks nothing of the embedder.
        assert recollections.recall(Cue(tags=("nothing",))) == []


def test_sense_fires_by_the_words_when_the_embedder_fails(
    any_database: Path | str, clock: FakeClock
) -> None:
    # Involuntary: no caller asked, so nothing to tell; the words alone may fire.
    service, memory_id = _broken_service(any_database, clock)
    with service:
        fired = service.recollections.sense(Cue(text="The staging database lives in Melbourne"))
        assert [recollection.memory.id for recollection in fired] == [memory_id]
        assert service.recollections.sense(Cue(text="where was it moved")) == []


def test_two_recalls_of_the_same_words_at_once_both_say_the_embedder_failed(
    any_database: Path | str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second recall found the first's query embedding on its way and sent none; the
    # first took it over, so the second had nothing to await and, with no vector stored,
    # answered [] (as if nothing matched) while the model was failing.
    embedder = _BrokenQueryEmbedder(EmbeddingError("the model file is corrupt"))
    embedder.broken = True
    settings = semantic_settings(any_database)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("The staging database lives in Melbourne")
        retriever = service.indexing.retriever
        second_sent = threading.Event()
        embed_soon, catch_up = retriever.embed_soon, service.indexing.catch_up

        def embed_soon_then_tell(text: str, mode: Mode) -> None:
            embed_soon(text, mode)
            if threading.current_thread().name == "second":
                second_sent.set()

        def catch_up_after_the_second(namespaces: Sequence[str]) -> int:
            # The first recall goes on only once the second has asked for the embedding.
            if threading.current_thread().name == "first":
                assert second_sent.wait(10)
            return catch_up(namespaces)

        monkeypatch.setattr(retriever, "embed_soon", embed_soon_then_tell)
        monkeypatch.setattr(service.indexing, "catch_up", catch_up_after_the_second)
        outcomes: dict[str, object] = {}

        def search() -> None:
            name = threading.current_thread().name
            try:
                outcomes[name] = service.search("where is the server kept", mode="vector")
            except EmbeddingError as error:
                outcomes[name] = error

        threads = [threading.Thread(target=search, name=name) for name in ("first", "second")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert sorted(outcomes) == ["first", "second"]
        for name, outcome in outcomes.items():
            assert isinstance(outcome, EmbeddingError), (name, outcome)
            assert "the model file is corrupt" in str(outcome)
