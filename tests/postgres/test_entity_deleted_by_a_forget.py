"""``delete_entities`` while another client forgets the entity's last mention, on
PostgreSQL (adversarial pass a68): the entity is reported deleted, so it is tombstoned,
and a memory naming it whose extraction was still queued does not bring it back. The
deletion found the entity, the forget's orphan cleanup removed the row and committed,
and the deletion's own DELETE then matched no row and wrote no tombstone."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.postgres_graph_writes import PostgresGraphTransaction

pytestmark = pytest.mark.postgres


@pytest.fixture
def service(postgres_url: str) -> Iterator[MemoryService]:
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="rules", postgres_pool_min=0
    )
    with MemoryService.open(settings) as opened:
        yield opened


def names(service: MemoryService) -> set[str]:
    return {entity.name for entity in service.graph.entities().entities}


def test_an_entity_whose_last_mention_is_forgotten_meanwhile_is_tombstoned(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mentioned = service.remember("Anna went to Oslo.")
    service.new_worker().run_until_idle()
    assert "Anna" in names(service)
    # Named again, its extraction still queued when the entity is deleted.
    service.remember("Anna likes tea.")
    delete = PostgresGraphTransaction.delete_entity

    def forget_then_delete(self: PostgresGraphTransaction, entity_id: int) -> None:
        # Another client's forget of the only memory the entity was extracted from
        # commits between the deletion's find and its DELETE (it waits on no lock the
        # deletion holds: the entity has no observation, and tombstones come last).
        assert service.forget(mentioned.id).deleted
        delete(self, entity_id)

    monkeypatch.setattr(PostgresGraphTransaction, "delete_entity", forget_then_delete)
    report = service.knowledge.delete_entities(["Anna"])
    monkeypatch.undo()
    assert report.deleted == ["Anna"]
    with psycopg.connect(postgres_url) as connection:
        [(tombstones,)] = connection.execute(
            "SELECT count(*) FROM graph_entity_tombstones"
        ).fetchall()
    assert tombstones == 1
    service.new_worker().run_until_idle()
    # Before: Anna was back, extracted from the memory queued before its deletion.
    assert "Anna" not in names(service)
