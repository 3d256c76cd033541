"""A PostgreSQL server that takes no writes for a while (a hot standby mid-failover,
``default_transaction_read_only`` turned on) is no fault of the batch the worker holds
(adversarial pass d65).

Its error was a plain storage error: the worker dropped the vectors it had made, the
jobs waited out their lease, and the claim after it embedded the texts again and counted
an attempt (an attempt per such window, until the memory failed for good). Now it is a
:class:`DatabaseReadOnlyError`, held through as an outage is."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.errors import DatabaseReadOnlyError, StorageError
from recalld.service import MemoryService
from recalld.store.factory import open_store
from recalld.worker_outage import is_outage
from tests.conftest import FakeClock
from tests.semantic_support import RecordingEmbedder, semantic_settings

READ_ONLY = DatabaseReadOnlyError(
    "the database at postgresql://app:***@db/recalld is read-only (cannot execute INSERT in"
    " a read-only transaction): nothing was written"
)


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
        semantic = service.store.semantic
        complete = semantic.complete_jobs
        refusals = [READ_ONLY] * 2

        def refusing(worker: str, model: str, results: Any, dimension: int, now: datetime) -> int:
            if refusals:
                raise refusals.pop()
            return complete(worker, model, results, dimension, now)

        monkeypatch.setattr(semantic, "complete_jobs", refusing)
        worker = service.new_worker()
        for _ in range(2):
            with pytest.raises(DatabaseReadOnlyError):
                worker.run_once()
            clock.advance(seconds=settings.worker_lease_seconds * 0.25)
        assert worker.run_until_idle().processed == 1
        assert embedder.texts == ["the only memory"]  # held, not embedded again
        assert service.get(receipt.id).index_state == "indexed"
        assert service.status().queue["failed"] == 0
