"""A worker stopping while another process holds the database's write lock (adversarial
pass c63): its last heartbeat ("stopped") cannot be written, which ended the worker thread
with "Exception in thread recalld-worker" and a traceback, and made ``recalld worker
--until-idle`` fail after draining the queue. It is logged instead."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker import Worker
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


@pytest.fixture
def service(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    settings = semantic_settings(db_path, busy_timeout_ms=0, lock_retry_seconds=0.01)
    with MemoryService(open_store(settings), settings, clock=clock) as opened:
        opened.remember("Ada wrote the first program.")
        yield opened


def _lock(db_path: Path) -> apsw.Connection:
    """Another process's connection holding the write lock (a long import, say)."""
    other = apsw.Connection(str(db_path))
    other.execute("BEGIN IMMEDIATE")
    return other


def test_a_worker_drained_while_the_database_is_locked_reports_its_work(
    service: MemoryService, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    worker = service.new_worker()
    held: list[apsw.Connection] = []

    def stop() -> bool:
        held.append(_lock(db_path))
        return True

    with caplog.at_level(logging.WARNING, logger="recalld.worker"):
        report = worker.run_until_idle(stop=stop)
    held[0].execute("ROLLBACK")
    assert report.processed == 0  # stopped before its first batch
    assert "could not record that worker" in caplog.text
    assert "stayed locked" in caplog.text


def test_a_worker_thread_stopping_on_a_locked_database_ends_without_raising(
    service: MemoryService, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    worker = service.new_worker()
    held: list[apsw.Connection] = []

    def step_then_stop(self: Worker = worker) -> int:
        held.append(_lock(db_path))
        self.stop()
        return 0

    worker.run_once = step_then_stop  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="recalld.worker"):
        worker.run_forever()  # the worker thread's body: it raised here
    held[0].execute("ROLLBACK")
    assert "could not record that worker" in caplog.text
    assert service.remember("written once the lock is gone").created
