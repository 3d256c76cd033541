"""Two deletions of entities in one namespace, at once, both commit on PostgreSQL (review
of pass e66): each dropped every stale tombstone of the namespace after writing its own,
so each waited for the row the other had just written, and one failed "deadlock
detected". Each drops only its own tombstone now, when no memory is left for it."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.graph import entity_key_hash
from recalld.store.postgres_graph_writes import TombstoneWork
from tests.store.postgres_interleaving import WAIT_SECONDS

NAMES = ("Xavier", "Yolanda")


@pytest.mark.postgres
def test_two_deletions_of_entities_with_stale_tombstones_both_commit(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.knowledge.create_entities(
            [{"name": name, "entityType": "person"} for name in NAMES]
        )
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            # Stale tombstones of both (no memory left before them), as an older version
            # left them when their memories were forgotten.
            for name in NAMES:
                connection.execute(
                    "INSERT INTO graph_entity_tombstones VALUES ('default', %s, 0)",
                    (entity_key_hash(name.lower()),),
                )
        both_written = threading.Barrier(len(NAMES), timeout=WAIT_SECONDS)

        original = TombstoneWork.finish

        def after_both_deleted(*arguments: Any) -> None:
            # Each has deleted its entity; both write and clean up tombstones at once now
            # (they serialise on the namespace's tombstone lock, adversarial pass b67).
            both_written.wait()
            original(*arguments)

        monkeypatch.setattr(TombstoneWork, "finish", after_both_deleted)
        errors: list[BaseException] = []

        def delete(name: str) -> None:
            try:
                service.knowledge.delete_entities([name])
            except Exception as error:  # noqa: BLE001 - reported by the assert below
                errors.append(error)

        threads = [threading.Thread(target=delete, args=(name,)) for name in NAMES]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_SECONDS * 2)
        assert errors == []
        assert service.graph.entities().entities == []
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            # No memory is in the namespace: neither tombstone protects anything.
            count = connection.execute("SELECT count(*) FROM graph_entity_tombstones").fetchone()
            assert count == (0,)
