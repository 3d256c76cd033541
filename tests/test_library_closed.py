"""A closed service starts nothing: asking it for a worker is a clear error.

Before, ``start_worker()`` after ``close()`` returned a Worker whose thread died at
once on the closed store, printing "Exception in thread recalld-worker" and its
traceback to stderr, and ``new_worker()`` handed out a worker bound to it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

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


def test_a_closed_service_builds_nothing_and_starts_no_thread(db_path: Path) -> None:
    # A recall after close() built the indexing it had not needed yet, and started its
    # query helper thread, which nothing stopped (close() had run): "nothing runs after
    # close()" did not hold.
    settings = Settings(db=db_path, embedder="hashing", graph_extractor="none")
    service = MemoryService.open(settings)
    service.close()
    before = set(threading.enumerate())
    for call in (
        lambda: service.search("kept"),
        lambda: service.recall("kept"),
        lambda: service.status(),
        lambda: service.remind("call the plumber", at="2030-01-01T09:00:00Z"),
        lambda: service.recollections.pending(),
        lambda: service.knowledge.read_graph(),
    ):
        with pytest.raises(StorageError, match="this MemoryService is closed"):
            call()
    assert set(threading.enumerate()) <= before
    built = set(vars(service))
    assert not built & {"indexing", "intentions", "recollections", "knowledge", "core"}


def test_close_waits_for_a_component_being_built(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread building the indexing while another closed the service finished after the
    # close had looked for it: the indexing (its threads, its vector index) was never closed.
    from recalld.indexing import Indexing
    from recalld.store.factory import open_store

    closed: list[Indexing] = []
    close_indexing = Indexing.close

    def recording_close(indexing: Indexing) -> None:
        closed.append(indexing)
        close_indexing(indexing)

    monkeypatch.setattr(Indexing, "close", recording_close)
    building, release = threading.Event(), threading.Event()

    def slow_embedder() -> None:
        building.set()
        assert release.wait(60)

    settings = Settings(db=db_path, embedder="none", graph_extractor="none")
    service = MemoryService(open_store(settings), settings, embedder=slow_embedder)
    built: list[Indexing] = []
    builder = threading.Thread(target=lambda: built.append(service.indexing))
    builder.start()
    assert building.wait(60)
    closer = threading.Thread(target=service.close)
    closer.start()
    release.set()
    builder.join(60)
    closer.join(60)
    assert not builder.is_alive()
    assert not closer.is_alive()
    assert service.closed
    assert len(built) == 1
    assert closed == built  # built before the close, and closed by it


def test_open_refuses_settings_that_are_not_settings(db_path: Path) -> None:
    # MemoryService.open({"db": ...}) failed with "AttributeError: 'dict' object has no
    # attribute 'uses_postgres'" (adversarial pass a66).
    from recalld.errors import ValidationError

    given: Any = {"db": str(db_path)}
    with pytest.raises(ValidationError, match=r"give a recalld\.Settings, got dict") as refused:
        MemoryService.open(given)
    assert refused.value.field == "settings"
    assert not db_path.exists()  # nothing was created
