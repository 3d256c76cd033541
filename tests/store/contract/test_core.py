"""Core memory: ordered entries per (namespace, target), edited atomically, versioned."""

from __future__ import annotations

import threading

import pytest

from recalld.store.base import Store
from tests.store.contract.conftest import NOW, OpenStore, record


def test_core_edit_persists_and_versions(store: Store) -> None:
    assert store.core.entries("default", "user") == []
    before = store.core.version("default")

    def add(entries: list[str]) -> str:
        entries.append("Name: Ana")
        return "ok"

    result = store.core.edit("default", "user", add, NOW)
    assert result == "ok"
    assert store.core.entries("default", "user") == ["Name: Ana"]
    assert store.core.version("default") > before
    assert store.core.entries("other", "user") == []
    unchanged = store.core.version("default")
    store.core.edit("default", "user", lambda entries: None, NOW)
    assert store.core.version("default") == unchanged


def test_core_edit_that_raises_changes_nothing(store: Store) -> None:
    store.core.edit("default", "memory", lambda entries: entries.append("kept"), NOW)

    def failing(entries: list[str]) -> None:
        entries.clear()
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        store.core.edit("default", "memory", failing, NOW)
    assert store.core.entries("default", "memory") == ["kept"]


def test_core_concurrent_batches_lose_no_update(open_another: OpenStore) -> None:
    stores = [open_another() for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def writer(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            for number in range(10):

                def add(entries: list[str], entry: str = f"{index}-{number}") -> None:
                    entries.append(entry)

                stores[index].core.edit("default", "memory", add, NOW)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(index,)) for index in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    entries = stores[0].core.entries("default", "memory")
    assert sorted(entries) == sorted(f"{i}-{n}" for i in range(len(stores)) for n in range(10))


def test_change_feed_hears_a_change_committed_by_another_store(open_another: OpenStore) -> None:
    watcher, writer = open_another(), open_another()
    feed = watcher.change_feed
    if feed is None:
        pytest.skip("this store has no pushed notifications (watchers poll)")
    seen = feed.wait(0, 0.0)
    listening = getattr(feed, "listening", None)
    if listening is not None:
        assert listening(30)
    seen = feed.wait(0, 0.0)
    writer.core.edit("default", "user", lambda entries: entries.append("pushed"), NOW)
    assert feed.wait(seen, 30) > seen
    seen = feed.wait(0, 0.0)
    with writer.transaction() as tx:
        memory = tx.insert(record(id="pending", content="queued"))
    writer.context.fire("default", [(memory.seq, 0.9, {})], NOW, NOW)
    assert feed.wait(seen, 30) > seen
