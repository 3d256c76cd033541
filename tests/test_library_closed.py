"""A closed service starts nothing: asking it for a worker is a clear error.

Before, ``start_worker()`` after ``close()`` returned a Worker whose thread died at
once on the closed store, printing "Exception in thread recalld-worker" and its
traceback to stderr, and ``new_worker()`` handed out a worker bound to it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService


@pytest.mark.parametrize("ask", ["start_worker", "new_worker"])
def test_a_closed_service_gives_no_worker(db_path: Path, ask: str) -> None:
    settings = Settings(db=db_path, embedder="hashing", graph_extractor="none")
    service = MemoryService.open(settings)
    service.remember("waiting for its vector")
    service.close()
    before = set(threading.enumerate())
    with pytest.raises(StorageError, match="this MemoryService is closed"):
        getattr(service, ask)()
    assert set(threading.enumerate()) <= before  # no thread was started
    assert service.worker is None


def test_a_closed_service_says_so_on_either_store(any_database: Path | str) -> None:
    settings = Settings(db=any_database, embedder="hashing", graph_extractor="none")
    service = MemoryService.open(settings)
    receipt = service.remember("kept")
    service.close()
    service.close()  # twice is harmless
    for call in (
        lambda: service.remember("after close"),
        lambda: service.get(receipt.id),
        lambda: service.recall("kept"),
        lambda: service.list_memories(),
        lambda: service.forget(receipt.id),
        lambda: service.stats(),
        lambda: service.core.apply("user", [{"action": "add", "content": "a fact"}]),
    ):
        with pytest.raises(StorageError, match="closed"):
            call()
