"""The knowledge graph's version, which the ``memory://knowledge-graph`` resource's watchers
poll (adversarial pass f64): it moves with the namespace's graph and its memories, and not
with another namespace's."""

from __future__ import annotations

from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.knowledge_support import any_service as any_service  # the fixture


def test_the_graph_version_moves_with_its_namespace_only(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    start = knowledge.version()
    assert knowledge.version() == start
    knowledge.create_entities([{"name": "Ada", "entityType": "person", "observations": []}])
    created = knowledge.version()
    assert created != start
    # Another namespace's graph and memories are no change here.
    knowledge.create_entities(
        [{"name": "Bo", "entityType": "person", "observations": ["elsewhere"]}], namespace="other"
    )
    any_service.remember("Caroline met Bo in Paris.", namespace="other")
    any_service.new_worker().run_until_idle()
    assert knowledge.version() == created
    knowledge.add_observations([{"entityName": "Ada", "contents": ["engineer"]}])
    observed = knowledge.version()
    assert observed != created
    knowledge.create_entities([{"name": "Cy", "entityType": "person", "observations": []}])
    knowledge.create_relations([{"from": "Ada", "to": "Cy", "relationType": "knows"}])
    related = knowledge.version()
    assert related != observed
    knowledge.delete_relations([{"from": "Ada", "to": "Cy", "relationType": "knows"}])
    assert knowledge.version() != related
    unrelated = knowledge.version()
    knowledge.delete_observations([{"entityName": "Ada", "observations": ["engineer"]}])
    assert knowledge.version() != unrelated


def test_the_graph_version_moves_when_another_process_retypes_an_entity(
    any_service: MemoryService, any_database: Path | str, clock: FakeClock
) -> None:
    # Review of pass f64: SQLite counted again only when a new row or a drop showed in the
    # file, so claiming an extracted entity (its type changed by an UPDATE, nothing added)
    # moved nothing and a subscriber of memory://knowledge-graph was never told.
    any_service.remember("Caroline met Bo in Paris.")
    any_service.new_worker().run_until_idle()
    knowledge = any_service.knowledge
    before = knowledge.version()
    clock.advance(1)
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings, clock=clock) as other:
        other.knowledge.create_entities([{"name": "Paris", "entityType": "city"}])
    [paris] = knowledge.open_nodes(["Paris"]).entities
    assert paris.entity_type == "city"
    assert knowledge.version() != before


def test_the_graph_version_moves_when_a_memory_expires(
    any_service: MemoryService, clock: FakeClock
) -> None:
    # Review of pass f64: an expiry writes nothing (the purge comes later, if ever in a
    # quiet server), so the version did not move when the only memory naming an entity
    # expired and took it out of the graph: its subscribers were never told.
    any_service.remember("Caroline met Bo in Paris.", ttl_seconds=60)
    any_service.remember("Dora stayed home.")
    any_service.new_worker().run_until_idle()
    knowledge = any_service.knowledge
    assert "Paris" in [entity.name for entity in knowledge.read_graph().entities]
    before = knowledge.version()
    clock.advance(30)
    assert knowledge.version() == before
    clock.advance(31)
    assert "Paris" not in [entity.name for entity in knowledge.read_graph().entities]
    expired = knowledge.version()
    assert expired != before
    clock.advance(3600)
    assert knowledge.version() == expired


def test_the_graph_version_moves_when_an_extraction_only_mentions_an_entity(
    any_service: MemoryService, clock: FakeClock
) -> None:
    # A memory that names only entities already there adds no entity nor relation, but
    # shows in memory://knowledge-graph (its text among the entity's observations): its
    # extraction moves the version again after its write did, or a subscriber told of the
    # write, reading the graph before the extraction, would never be told of the mention
    # (the leftover of stop 64, found to hold in adversarial pass c65: the mention's
    # upsert stamps the entity's updated_at, which the version reads).
    any_service.remember("Caroline met Bo in Paris.")
    any_service.new_worker().run_until_idle()
    knowledge = any_service.knowledge
    clock.advance(1)
    any_service.remember("I saw Bo today.")
    written = knowledge.version()
    [bo] = knowledge.open_nodes(["Bo"]).entities
    assert not any("I saw Bo today." in observation for observation in bo.observations)
    clock.advance(1)
    any_service.new_worker().run_until_idle()
    [bo] = knowledge.open_nodes(["Bo"]).entities
    assert any("I saw Bo today." in observation for observation in bo.observations)
    assert len(knowledge.read_graph().entities) == 3  # Caroline, Bo, Paris: nothing new
    assert knowledge.version() != written
