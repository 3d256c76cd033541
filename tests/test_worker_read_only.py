"""A PostgreSQL server that takes no writes for a while (a hot standby mid-failover,
``default_transaction_read_only`` turned on) is no fault of the batch the worker holds
(adversarial pass d65).

Its error was a plain storage error: the worker dropped the vectors it had made, the
jobs waited out their lease, and the claim after it embedded the texts again and counted
an attempt (an attempt per such window, until the memory failed for good). Now it is a
:class:`DatabaseReadOnlyError`, held through as an outage is."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseReadOnlyError, StorageError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker import Worker
from recalld.worker_outage import is_outage, until_idle_delay
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

READ_ONLY = DatabaseReadOnlyError(
    "the database at postgresql://app:***@db/recalld is read-only (cannot execute INSERT in"
    " a read-only transaction): nothing was written"
)


def _refuse_storing(service: MemoryService, monkeypatch: pytest.MonkeyPatch, times: int) -> None:
    """The store's ``complete_jobs`` refused as read-only ``times`` times, then as it is."""
    semantic = service.store.semantic
    complete = semantic.complete_jobs
    refusals = [READ_ONLY] * times

    def refusing(worker: str, model: str, results: Any, dimension: int, now: datetime) -> int:
        if refusals:
            raise refusals.pop()
        return complete(worker, model, results, dimension, now)

    monkeypatch.setattr(semantic, "complete_jobs", refusing)


def test_a_read_only_database_is_an_outage_and_a_storage_error() -> None:
    assert is_outage(READ_ONLY)
    assert isinstance(READ_ONLY, StorageError)


def test_vectors_a_read_only_database_refused_are_stored_once_it_takes_writes(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = RecordingEmbedder()
    settings = semantic_settings(db_path, graph_extractor="none", worker_max_attempts=2)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("the only memory")
        _refuse_storing(service, monkeypatch, times=2)
        worker = service.new_worker()
        for _ in range(2):
            with pytest.raises(DatabaseReadOnlyError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds * 0.25)
        assert worker.run_until_idle().processed == 1
        assert embedder.texts == ["the only memory"]  # held, not embedded again
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0


def test_until_idle_waits_out_a_database_that_turned_read_only(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass d65: `recalld worker --until-idle` raised the first read-only refusal
    # (a failover's standby phase) at once, handing back what it held (refused too: the
    # vectors were dropped), where a server away is waited for a few minutes; now it is
    # waited out the same way, its log saying read-only, and the held vector is stored.
    embedder = RecordingEmbedder()
    settings = semantic_settings(db_path, graph_extractor="none", worker_max_attempts=2)
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        receipt = service.remember("the only memory")
        _refuse_storing(service, monkeypatch, times=2)
        delays: list[float] = []
        worker = Worker(service.store, embedder, settings, clock=clock, pause=delays.append)
        assert worker.run_until_idle().processed == 1
        assert len(delays) == 2
        assert embedder.texts == ["the only memory"]  # held, not embedded again
        assert service.get(receipt.id).index_state == "indexed"


def test_until_idle_says_read_only_while_it_waits(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="recalld.worker_outage"):
        assert until_idle_delay(1, READ_ONLY, 1.0, stopping=False) == 2.0
    assert "the database is read-only (1 in a row)" in caplog.text


def test_a_search_answers_while_the_database_takes_no_writes(
    db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass d65: a search's catch-up (embedding what waits, a write) on a server
    # read-only for a while (a failover's standby phase) failed the search, a read, with
    # the read-only error; it answers from what is indexed, as under another's lock.
    settings = semantic_settings(db_path, graph_extractor="none", recall_catch_up=10)
    embedder = RecordingEmbedder()
    with MemoryService(open_store(settings), settings, clock=clock, embedder=embedder) as service:
        service.remember("Alice lives in Paris")

        def refused(*arguments: Any) -> Any:
            raise READ_ONLY

        monkeypatch.setattr(service.store.semantic, "claim_for_recall", refused)
        hits = service.search("Alice")
        assert [hit.memory.content for hit in hits] == ["Alice lives in Paris"]
        assert service.get(hits[0].memory.id).index_state == "queued"  # nothing stored
