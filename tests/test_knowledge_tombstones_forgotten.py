"""A graph tombstone goes with the last memory it protects against (adversarial pass e66):
it kept the hash of a deleted entity's key after every memory written before the deletion
was forgotten or purged, so a guessed name's hash confirmed the entity had existed, though
forgetting leaves no trace. And it stays while they do: adding observations to the entity a
later memory brought back lifted it, and a rebuild brought the old mentions back."""

from __future__ import annotations

from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.tables import COPIED_TABLES
from tests.conftest import FakeClock

TOMBSTONES = next(item for item in COPIED_TABLES if item.name == "graph_entity_tombstones")


def _settings(database: Path | str) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def test_a_tombstone_goes_when_its_memories_are_forgotten(any_database: Path | str) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        first = service.remember("Zebulon went to Oslo.").id
        second = service.remember("Zebulon came back from Oslo.").id
        other = service.remember("Zebulon went to Rome.", namespace="elsewhere").id
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Zebulon"])
        service.knowledge.delete_entities(["Zebulon"], namespace="elsewhere")
        later = service.remember("Ines went to Oslo.").id  # written after: protects nothing
        assert service.store.tables.count(TOMBSTONES) == 2
        service.forget(first)
        # One memory written before the deletion is left: its extraction must stay out.
        assert service.store.tables.count(TOMBSTONES) == 2
        service.forget(second)
        assert service.store.tables.count(TOMBSTONES) == 1  # the other namespace's stays
        service.forget(later)
        service.forget(other, namespace="elsewhere")
        assert service.store.tables.count(TOMBSTONES) == 0


def test_a_tombstone_goes_when_its_memories_expire_and_are_purged(
    any_database: Path | str, clock: FakeClock
) -> None:
    with MemoryService.open(_settings(any_database), clock=clock) as service:
        service.remember("Zebulon went to Oslo.", ttl_seconds=60)
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Zebulon"])
        kept = service.remember("Ines went to Oslo.").id
        assert service.store.tables.count(TOMBSTONES) == 1
        clock.advance(300)
        assert service.store.purge_expired(clock()) == 1
        assert service.store.tables.count(TOMBSTONES) == 0
        assert service.get(kept).content == "Ines went to Oslo."


def test_an_entity_deleted_with_its_only_memories_leaves_no_tombstone(
    any_database: Path | str,
) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        service.knowledge.create_entities(
            [{"name": "Quentin", "entityType": "person", "observations": ["likes tea"]}]
        )
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Quentin"])  # forgets its observation too
        assert service.list_memories(limit=10).memories == []
        assert service.store.tables.count(TOMBSTONES) == 0


def test_observations_on_an_entity_a_later_memory_named_keep_its_tombstone(
    any_database: Path | str,
) -> None:
    with MemoryService.open(_settings(any_database)) as service:
        service.remember("Anna went to Oslo.")
        service.new_worker().run_until_idle()
        service.knowledge.delete_entities(["Anna"])
        service.remember("Anna came back from Oslo.")
        service.new_worker().run_until_idle()
        service.knowledge.add_observations([{"entityName": "Anna", "contents": ["likes tea"]}])
        service.graph.rebuild()
        service.new_worker().run_until_idle()
        # Before: adding the observation lifted the tombstone, and the rebuild brought back
        # the mention of the memory written before the delete.
        lines = [mention.prompt_line for mention in service.graph.entity("Anna").mentions]
        assert not any(line.endswith("went to Oslo.") for line in lines)
        assert any(line.endswith("came back from Oslo.") for line in lines)
        assert service.store.tables.count(TOMBSTONES) == 1
