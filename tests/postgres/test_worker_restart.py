"""A PostgreSQL restart while the worker stores a batch's vectors: the worker thread
lives on, backs off, and embeds the batch once the jobs' lease expires, with no job
failed and no text embedded one by one (review of pass d62).

These tests stop and start a PostgreSQL of their own (not the session's).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from recalld.embeddings.base import Vectors
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker import Worker
from tests.postgres_server import LocalPostgres
from tests.semantic_support import RecordingEmbedder, semantic_settings

pytestmark = pytest.mark.postgres

WAIT_SECONDS = 60.0


class RestartingEmbedder(RecordingEmbedder):
    """Stops the server on the first batch (so storing its vectors fails) and starts it
    again once the worker has failed that step."""

    def __init__(self, server: LocalPostgres) -> None:
        super().__init__()
        self.server = server
        self.stopped = threading.Event()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not self.stopped.is_set():
            self.server.stop(immediate=True)
            self.stopped.set()
        return super().embed_batch(texts)


def test_the_worker_thread_outlives_a_restart_while_storing_vectors(
    own_server: LocalPostgres,
) -> None:
    settings = semantic_settings(
        own_server.url("recalld"),
        graph_extractor="none",
        worker_lease_seconds=1.0,
        worker_poll_seconds=0.05,
        postgres_connect_timeout_seconds=2,
        postgres_pool_min=0,
    )
    embedder = RestartingEmbedder(own_server)
    pauses: list[float] = []
    failed_step = threading.Event()
    worker_stop = threading.Event()

    def pause(seconds: float) -> bool:
        pauses.append(seconds)
        failed_step.set()
        return worker_stop.wait(seconds)

    with MemoryService(open_store(settings), settings, embedder=embedder) as service:
        service.remember_many([{"content": f"memory number {index}"} for index in range(3)])
        worker = Worker(service.store, embedder, settings, pause=pause)
        worker.start()
        try:
            assert failed_step.wait(WAIT_SECONDS)  # complete_jobs failed: the step did
            own_server.start()
            assert worker.wait_until_processed(3, WAIT_SECONDS)
        finally:
            worker_stop.set()
            worker.stop()
        assert worker.report.failed_attempts == 0
        # Once: the vectors were kept and stored once the server was back (twice before
        # adversarial pass d63, the batch claimed again after its lease), never alone.
        assert len(embedder.texts) == 3
        status = service.status()
        assert status.queue["failed"] == 0
        assert status.failed_jobs == []
        assert all(pauses)  # every failed step waited before the next
