"""An embedding endpoint that stops answering is left alone for a while, not waited for by
every embedding (recall, its catch-up, the worker): see recalld.embeddings.endpoint_rest."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from recalld.embeddings.endpoint_rest import EndpointRest
from recalld.embeddings.http import HTTPEmbedder
from recalld.errors import EmbedderUnavailableError, EmbeddingError
from recalld.retrieval.hybrid import VECTOR_UNAVAILABLE
from recalld.service import MemoryService
from recalld.store.factory import open_store
from tests.conftest import FakeClock
from tests.embeddings.test_http import FakeEmbeddingServer, _url
from tests.embeddings.test_http import server as server  # the fixture
from tests.semantic_support import semantic_settings


class Monotonic:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_endpoint_rest_grows_after_each_failed_try_and_ends_with_an_answer() -> None:
    clock = Monotonic()
    rest = EndpointRest("http://e/v1/embeddings", clock)
    first = rest.enter()  # no failure yet: no gate, however many requests go at once
    second = rest.enter()
    error = rest.failed("timed out", first)
    assert isinstance(error, EmbedderUnavailableError)
    assert "timed out" in str(error)
    assert "again in 5 s" in str(error)
    assert not rest.available()
    with pytest.raises(EmbedderUnavailableError, match="asks it again in 5 s"):
        rest.enter()
    # A request sent before the first failure came back does not lengthen the rest.
    rest.failed("timed out", second)
    clock.now += 5
    assert rest.available()
    trying = rest.enter()  # the one request that tries the endpoint again
    assert not rest.available()
    with pytest.raises(EmbedderUnavailableError, match="another request is trying"):
        rest.enter()
    rest.failed("connection refused", trying)
    clock.now += 9
    with pytest.raises(EmbedderUnavailableError, match="connection refused"):
        rest.enter()  # 10 s this time
    clock.now += 1
    trying = rest.enter()
    for _ in range(6):  # 20, 40, then never longer than 60 s
        rest.failed("timed out", trying)
        clock.now += 60
        trying = rest.enter()
    rest.answered()
    assert rest.available()
    rest.enter()
    rest.enter()


def test_endpoint_rest_a_request_sent_before_the_last_answer_rests_nothing() -> None:
    # Review rx61: a slow request of the outage's first wave, failing after the endpoint
    # answered again, put it to rest again; one failing while another tried the endpoint
    # let a second request try it too; an interrupted try was taken for an answer.
    clock = Monotonic()
    rest = EndpointRest("http://e/v1/embeddings", clock)
    slow = rest.enter()
    rest.failed("timed out", rest.enter())
    clock.now += 5
    trying = rest.enter()
    rest.failed("timed out", slow)  # the first wave's: the try is still out
    clock.now += 10
    with pytest.raises(EmbedderUnavailableError, match="another request is trying"):
        rest.enter()
    rest.answered()  # the try answers
    late = rest.enter()
    rest.answered()
    error = rest.failed("timed out", late)
    assert "has answered another request since" in str(error)
    assert rest.available()
    # ^C during the try: the next request tries again, the rest stays as long.
    rest.failed("timed out", rest.enter())
    clock.now += 5
    rest.abandoned(rest.enter())
    trying = rest.enter()
    rest.failed("timed out", trying)
    clock.now += 9
    assert not rest.available()  # 10 s: the interrupted try was no answer


def test_http_embedder_asks_an_overloaded_endpoint_again_only_after_its_rest(
    server: FakeEmbeddingServer,
) -> None:
    clock = Monotonic()
    server.fail_with = 503
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=clock)
    with pytest.raises(EmbedderUnavailableError, match="503"):
        embedder.embed_batch(["first"])
    assert len(server.requests) == 1
    with pytest.raises(EmbedderUnavailableError, match="asks it again in 5 s"):
        embedder.embed_batch(["second"])
    assert len(server.requests) == 1  # not asked: it rests
    assert not embedder.available()
    server.fail_with = None
    clock.now += 5
    assert embedder.embed_batch(["third"]).shape == (1, 16)
    assert embedder.embed_batch(["fourth"]).shape == (1, 16)
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [400, 413, 500])
def test_http_embedder_a_refusal_is_an_answer_not_a_rest(
    server: FakeEmbeddingServer, status: int
) -> None:
    server.fail_with = status
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    for _ in range(2):
        with pytest.raises(EmbeddingError, match=str(status)) as caught:
            embedder.embed_batch(["a text the endpoint refuses"])
        assert not isinstance(caught.value, EmbedderUnavailableError)
    assert len(server.requests) == 2
    assert embedder.available()


def test_http_embedder_a_slow_request_failing_after_the_endpoint_answered_rests_nothing(
    server: FakeEmbeddingServer,
) -> None:
    # Review rx61: a request sent before the outage and failing after the endpoint had
    # answered again put it back to rest, so recall went keyword-only for no reason.
    clock = Monotonic()
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=clock)
    release = server.hold_post = threading.Event()
    outcome: list[BaseException] = []

    def slow() -> None:
        try:
            embedder.embed_batch(["a slow text"])
        except EmbeddingError as error:
            outcome.append(error)

    thread = threading.Thread(target=slow)
    thread.start()
    assert server.held.wait(10)  # sent while the endpoint answered
    server.fail_with = 503
    with pytest.raises(EmbedderUnavailableError, match="503"):
        embedder.embed_batch(["first"])
    server.fail_with = None
    clock.now += 5
    assert embedder.embed_batch(["again"]).shape == (1, 16)  # it answers: no rest
    release.set()  # the slow one's connection is closed without an answer
    thread.join(10)
    assert [type(error) for error in outcome] == [EmbedderUnavailableError]
    assert embedder.available()
    assert embedder.embed_batch(["later"]).shape == (1, 16)


@pytest.fixture
def silent() -> Iterator[socket.socket]:
    """A listening socket nobody accepts from: connections queue and are never answered."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    yield listener
    listener.close()


def _waiting(listener: socket.socket) -> int:
    """How many connections reached ``listener`` since the last call (accepted and closed)."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def test_http_embedder_waits_for_a_hung_endpoint_once_not_at_every_embedding(
    silent: socket.socket,
) -> None:
    port = silent.getsockname()[1]
    embedder = HTTPEmbedder(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        dimension=16,
        timeout_seconds=0.3,
        clock=Monotonic(),
    )
    with pytest.raises(EmbedderUnavailableError, match="timed out"):
        embedder.embed_batch(["a query"])
    assert _waiting(silent) == 1
    for text in ("another query", "a third"):
        with pytest.raises(EmbedderUnavailableError, match="asks it again"):
            embedder.embed_batch([text])
    assert _waiting(silent) == 0  # neither connected: each failed at once


def test_worker_tries_no_text_alone_and_claims_nothing_while_the_endpoint_rests(
    server: FakeEmbeddingServer, any_database: Path | str, clock: FakeClock
) -> None:
    server.fail_with = 503
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    settings = semantic_settings(any_database)  # failed jobs are due again at once
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        for number in range(3):
            service.remember(f"note {number} about the staging database")
        worker = service.new_worker()
        worker.run_once()
        # One request for the batch; each text alone would have waited as long again.
        assert len(server.requests) == 1
        assert worker.report.failed_attempts == 3
        worker.run_once()  # due again, but the endpoint rests: no attempt used
        assert worker.report.failed_attempts == 3
        assert len(server.requests) == 1


def test_recall_while_the_endpoint_rests_answers_by_keyword_without_asking_it(
    server: FakeEmbeddingServer, any_database: Path | str, clock: FakeClock
) -> None:
    # Both stores: PostgreSQL searches the vectors in the database (DatabaseVectors).
    embedder = HTTPEmbedder(base_url=_url(server), model="m", dimension=16, clock=Monotonic())
    settings = semantic_settings(any_database, recall_catch_up=64)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        first = service.remember("The staging database lives in Melbourne")
        service.new_worker().run_until_idle()
        server.fail_with = 503
        second = service.remember("The staging database moved its backups")  # queued
        before = len(server.requests)
        asked = []
        for query in ("staging database", "where is the staging database"):
            hits = service.search(query)
            assert {hit.memory.id for hit in hits} == {first.id, second.id}
            assert all(hit.backends[-1] == VECTOR_UNAVAILABLE for hit in hits)
            asked.append(len(server.requests) - before)
        # The first recall's query and its catch-up may go out together (one wait, not
        # two) and find the endpoint down; the second recall asked it nothing.
        assert asked[0] in (1, 2)
        assert asked[1] == asked[0]
