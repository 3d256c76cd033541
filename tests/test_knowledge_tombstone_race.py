"""An extraction running while the knowledge tools delete one of its entities, on
PostgreSQL (SQLite's write transaction holds off every other writer): the entity stays
deleted (review of pass e65). The extraction read the tombstones before the delete
committed, then its upsert waited for the deleted row and, once the delete committed,
inserted the entity anew with the memory's mention."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.postgres_graph_writes import PostgresGraphTransaction
from tests.conftest import FakeClock
from tests.test_knowledge_races import _hold_until_waited_on, _race

pytestmark = pytest.mark.postgres


@pytest.fixture
def service(postgres_url: str, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(
        db=postgres_url, synchronous="NORMAL", embedder="none", graph_extractor="rules"
    )
    with MemoryService.open(settings, clock=clock) as opened:
        opened.remember("Anna went to Oslo.")
        opened.new_worker().run_until_idle()
        yield opened


def test_an_entity_deleted_while_its_memory_is_extracted_stays_deleted(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "Anna" in {entity.name for entity in service.graph.entities().entities}
    service.graph.rebuild(None)
    held, extracted = threading.Event(), threading.Event()
    delete = PostgresGraphTransaction.delete_entity

    def delete_then_hold(self: PostgresGraphTransaction, entity_id: int) -> None:
        delete(self, entity_id)
        # Deleted and tombstoned, not committed: the extraction runs now.
        _hold_until_waited_on(postgres_url, held, extracted)

    monkeypatch.setattr(PostgresGraphTransaction, "delete_entity", delete_then_hold)
    reports: list[Any] = []
    _race(
        lambda: reports.append(service.knowledge.delete_entities(["Anna"])),
        lambda: service.new_worker().run_until_idle(),
        held,
        extracted,
    )
    assert reports[0].deleted == ["Anna"]
    names = {entity.name for entity in service.graph.entities().entities}
    # Before: Anna was back, mentioned by the memory the rebuild extracted.
    assert "Anna" not in names
    assert "Oslo" in names
    service.graph.rebuild(None)
    service.new_worker().run_until_idle()
    assert "Anna" not in {entity.name for entity in service.graph.entities().entities}
