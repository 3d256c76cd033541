"""A batch the database keeps cutting (a ``statement_timeout``, a lock another client
holds past ``RECALLD_LOCK_RETRY_SECONDS``) counts its attempts (adversarial pass b64).

It was a ``DatabaseUnavailableError``, an outage: the worker held the vectors, handed
the jobs back without counting the attempt and tried the same too-slow write again,
for ever. A :class:`~recalld.errors.DatabaseBusyError` is no outage: the batch is left
to its lease and fails for good after ``RECALLD_WORKER_MAX_ATTEMPTS``, with the error."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseBusyError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker_outage import is_outage
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

TIMED_OUT = "postgresql://u:***@h/db cut the statement before it finished (statement timeout)"


def test_a_busy_database_is_no_outage() -> None:
    assert not is_outage(DatabaseBusyError(TIMED_OUT))


def test_a_batch_the_database_keeps_cutting_fails_after_its_attempts(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = semantic_settings(db_path, worker_max_attempts=2, graph_extractor="none")
    with MemoryService(
        open_store(settings), settings, clock=clock, embedder=RecordingEmbedder()
    ) as service:
        receipt = service.remember("a memory whose vectors take too long to store")

        def cut(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            raise DatabaseBusyError(TIMED_OUT)

        monkeypatch.setattr(service.store.semantic, "complete_jobs", cut)
        worker = service.new_worker()
        for _ in range(2):
            with pytest.raises(DatabaseBusyError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds + 1)
        assert worker.run_once() == 0  # nothing left to claim: no endless retry
        status = service.status()
        assert status.queue["failed"] == 1, status.queue
        assert service.get(receipt.id).index_state == "failed"
