"""Two forgets at once of the last memories of a namespace, on PostgreSQL (two servers,
or two threads of one): no entity tombstone outlives them (adversarial pass b67). Each
forget dropped the tombstones no memory needs any more as it saw the namespace in its own
transaction, with the other's memory not yet deleted, so neither dropped the tombstone
that protected both, and the hash of the deleted entity's name stayed in the database
after every memory it protected against was gone ("forget leaves no trace")."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.postgres_graph_writes import TombstoneWork
from recalld.store.postgres_transaction import PostgresTransaction
from tests.store.postgres_interleaving import WAIT_SECONDS, Running

pytestmark = pytest.mark.postgres


def _count(url: str, table: str) -> int:
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


def test_two_forgets_of_the_last_memories_at_once_leave_no_tombstone(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        first = service.remember("Xavier went to Oslo.").id
        second = service.remember("Xavier came back.").id
        service.knowledge.create_entities([{"name": "Xavier", "entityType": "person"}])
        service.knowledge.delete_entities(["Xavier"])
        assert _count(postgres_url, "graph_entity_tombstones") == 1  # protects both memories
        both_deleted = threading.Barrier(2, timeout=WAIT_SECONDS)
        original = PostgresTransaction.dropped_content

        def after_both_deleted(*arguments: Any) -> None:
            both_deleted.wait()  # each has deleted its memory, neither has committed
            original(*arguments)

        monkeypatch.setattr(PostgresTransaction, "dropped_content", after_both_deleted)
        errors: list[BaseException] = []

        def forget(memory_id: str) -> None:
            try:
                assert service.forget(memory_id).deleted
            except BaseException as error:  # noqa: BLE001 - reported by the assert below
                errors.append(error)

        threads = [
            threading.Thread(target=forget, args=(memory_id,)) for memory_id in (first, second)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_SECONDS * 2)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        assert _count(postgres_url, "memories") == 0
        # Before: the tombstone stayed, protecting no memory.
        assert _count(postgres_url, "graph_entity_tombstones") == 0


def test_an_entity_deleted_while_the_last_memory_is_forgotten_leaves_no_tombstone(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        last = service.remember("Yolanda went to Rome.").id
        service.knowledge.create_entities([{"name": "Yolanda", "entityType": "person"}])
        both_deleted = threading.Barrier(2, timeout=WAIT_SECONDS)
        original = PostgresTransaction.dropped_content

        def after_both_deleted(*arguments: Any) -> None:
            both_deleted.wait()  # the memory and the entity deleted, neither committed
            original(*arguments)

        monkeypatch.setattr(PostgresTransaction, "dropped_content", after_both_deleted)
        errors: list[BaseException] = []

        def run(call: Callable[[], Any]) -> None:
            try:
                call()
            except BaseException as error:  # noqa: BLE001 - reported by the assert below
                errors.append(error)

        threads = [
            threading.Thread(target=run, args=(lambda: service.forget(last),)),
            threading.Thread(
                target=run, args=(lambda: service.knowledge.delete_entities(["Yolanda"]),)
            ),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_SECONDS * 2)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        assert _count(postgres_url, "memories") == 0
        # Before: the deletion's tombstone stayed (it saw the memory not yet forgotten).
        assert _count(postgres_url, "graph_entity_tombstones") == 0


def test_an_entity_deleted_while_its_memories_are_replaced_leaves_no_tombstone(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The deletion's tombstone covers the memories up to the newest when it deleted the
    # entity; a later memory committed and the one it covered forgotten before the
    # deletion's end: the tombstone protected nothing, yet stayed while the later memory
    # lived, and once that one was forgotten too no forget ever dropped it (a forget
    # drops only the tombstones at or after its memory) (review of pass b67).
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        covered = service.remember("Zeno went to Oslo.").id
        service.knowledge.create_entities([{"name": "Zeno", "entityType": "person"}])
        deleting, release = threading.Event(), threading.Event()
        original = TombstoneWork.finish

        def held_at_the_end(self: TombstoneWork, *arguments: Any) -> None:
            if self._entities:  # the deletion's own: the forget's and the write's go on
                deleting.set()
                assert release.wait(WAIT_SECONDS)
            original(self, *arguments)

        monkeypatch.setattr(TombstoneWork, "finish", held_at_the_end)
        deletion = Running(lambda: service.knowledge.delete_entities(["Zeno"]))
        try:
            assert deleting.wait(WAIT_SECONDS)
            later = service.remember("A later note.").id
            assert service.forget(covered).deleted
        finally:
            release.set()
        assert deletion.outcome().deleted == ["Zeno"]
        # Before: 1, protecting no memory (the later one is after it).
        assert _count(postgres_url, "graph_entity_tombstones") == 0
        assert service.forget(later).deleted
        assert _count(postgres_url, "graph_entity_tombstones") == 0
