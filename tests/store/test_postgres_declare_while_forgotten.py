"""``create_entities`` declaring an entity that a forget, at the same moment on PostgreSQL,
leaves with no mention (the orphan trigger deletes it): the entity is declared, not a
500 (adversarial pass b67). The declare saw the extracted entity, then its update waited
for the forget's row lock and, once the forget committed, updated no row: ``assert
declared is not None`` failed (an ``AssertionError`` out of the knowledge tool)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.postgres_transaction import PostgresTransaction
from tests.conftest import FakeClock
from tests.store.postgres_interleaving import WAIT_SECONDS, Running, finished_or_blocked

pytestmark = pytest.mark.postgres


@pytest.fixture
def service(postgres_url: str, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(db=postgres_url, embedder="none", graph_extractor="rules")
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened


def test_an_entity_declared_while_its_last_memory_is_forgotten_is_declared(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = service.remember("Anna went to Oslo.")
    service.new_worker().run_until_idle()
    assert "Anna" in {entity.name for entity in service.graph.entities().entities}
    deleted, release = threading.Event(), threading.Event()
    original = PostgresTransaction.dropped_content

    def hold_before_commit(self: PostgresTransaction, *arguments: Any) -> None:
        original(self, *arguments)
        deleted.set()  # the memory, its mentions and (orphaned) Anna deleted, uncommitted
        assert release.wait(WAIT_SECONDS)

    monkeypatch.setattr(PostgresTransaction, "dropped_content", hold_before_commit)
    forgetting = Running(lambda: service.forget(memory.id))
    assert deleted.wait(WAIT_SECONDS)
    declaring = Running(
        lambda: service.knowledge.create_entities([{"name": "Anna", "entityType": "person"}])
    )
    try:
        assert finished_or_blocked(declaring, postgres_url) == "blocked"
    finally:
        release.set()
    assert forgetting.outcome().deleted
    declaring.outcome()  # before: AssertionError
    entities = service.graph.entities().entities
    assert [(entity.name, entity.type) for entity in entities] == [("Anna", "person")]
