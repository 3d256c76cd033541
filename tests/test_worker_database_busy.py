"""A batch the database keeps cutting with a ``statement_timeout`` counts its attempts
(adversarial pass b64); a lock another client holds does not (review of pass b64).

It was a ``DatabaseUnavailableError``, an outage: the worker held the vectors, handed
the jobs back without counting the attempt and tried the same too-slow write again,
for ever. A :class:`~recalld.errors.StatementTimeoutError` is no outage: the batch is
left to its lease and fails for good after ``RECALLD_WORKER_MAX_ATTEMPTS``, with the
error. Another client's lock held past ``RECALLD_LOCK_RETRY_SECONDS`` (or every pooled
connection in use) is no fault of the batch, as SQLite's lock is not: the vectors are
held and stored once the lock is gone, no attempt counted."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseBusyError, DatabaseLockedError, StatementTimeoutError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker_outage import is_outage, until_idle_delay
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

TIMED_OUT = "postgresql://u:***@h/db cut the statement before it finished (statement timeout)"
LOCKED = "postgresql://u:***@h/db kept a lock recalld needed held by another client"


def test_a_statement_timeout_is_no_outage() -> None:
    assert not is_outage(StatementTimeoutError(TIMED_OUT))


def test_another_clients_lock_is_an_outage() -> None:
    assert is_outage(DatabaseBusyError(LOCKED))


def test_until_idle_waits_out_a_busy_database_but_not_a_statement_timeout() -> None:
    # At the merge of passes a64 and b64: `--until-idle` waits out every busy error (a
    # lock, SQLite's or another client's; a full pool) and ends at once on a statement
    # timeout, which waiting would not cure.
    assert until_idle_delay(1, DatabaseLockedError("locked"), 1.0, stopping=False) == 2.0
    assert until_idle_delay(1, DatabaseBusyError("pool in use"), 1.0, stopping=False) == 2.0
    with pytest.raises(StatementTimeoutError):
        until_idle_delay(1, StatementTimeoutError("cut"), 1.0, stopping=False)


def test_a_batch_the_database_keeps_cutting_fails_after_its_attempts(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = semantic_settings(db_path, worker_max_attempts=2, graph_extractor="none")
    with MemoryService(
        open_store(settings), settings, clock=clock, embedder=RecordingEmbedder()
    ) as service:
        receipt = service.remember("a memory whose vectors take too long to store")

        def cut(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            raise StatementTimeoutError(TIMED_OUT)

        monkeypatch.setattr(service.store.semantic, "complete_jobs", cut)
        worker = service.new_worker()
        for _ in range(2):
            with pytest.raises(StatementTimeoutError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds + 1)
        assert worker.run_once() == 0  # nothing left to claim: no endless retry
        status = service.status()
        assert status.queue["failed"] == 1, status.queue
        assert service.get(receipt.id).index_state == "failed"


def test_a_batch_another_clients_lock_kept_out_is_stored_once_it_is_gone(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = semantic_settings(db_path, worker_max_attempts=2, graph_extractor="none")
    embedder = RecordingEmbedder()
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("a memory whose row another client keeps locked")
        semantic = service.store.semantic
        complete = semantic.complete_jobs
        locked = [True]

        def wait(worker_id: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            if locked[0]:
                raise DatabaseBusyError(LOCKED)
            return complete(worker_id, model, results, dimension, now)

        monkeypatch.setattr(semantic, "complete_jobs", wait)
        worker = service.new_worker()
        for _ in range(3):  # past RECALLD_WORKER_MAX_ATTEMPTS: no attempt counted
            with pytest.raises(DatabaseBusyError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds + 1)
        locked[0] = False
        worker.run_until_idle()
        assert service.status().queue.get("failed", 0) == 0
        assert service.get(receipt.id).index_state == "indexed"
