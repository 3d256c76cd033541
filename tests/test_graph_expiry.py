"""The knowledge graph through the service after a memory's TTL passes, before the purge:
what only that memory said is gone from every graph view (the browser, the knowledge
tools), counts are those of live memories, and declared entities stay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError, ValidationError
from recalld.service import MemoryService
from recalld.transfer import ENTITY_LINE
from tests.conftest import FakeClock

QUAGMIRE = "Bartholomew Quagmire's bakery is in Ouagadougou."


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    # No purge while a test runs: the reads alone must hide what expired.
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        purge_interval_seconds=3600,
    )


def _names(service: MemoryService) -> dict[str, int]:
    return {entity.name: entity.mentions for entity in service.graph.entities().entities}


def _relations(service: MemoryService) -> list[tuple[str, str, str, int]]:
    return [
        (r.subject, r.predicate, r.object, r.sources) for r in service.graph.relations().relations
    ]


def test_graph_hides_an_expired_memorys_entities_and_relations(
    service: MemoryService, clock: FakeClock
) -> None:
    expiring = service.remember(QUAGMIRE, ttl_seconds=5)
    service.remember("Ouagadougou is hot in May.")
    service.new_worker().run_until_idle()
    names = _names(service)
    assert (names["Bartholomew Quagmire"], names["bakery"], names["Ouagadougou"]) == (1, 1, 2)
    assert _relations(service) == [("Bartholomew Quagmire", "has", "bakery", 1)]
    assert service.graph.entity("Bartholomew Quagmire").relations
    assert service.knowledge.open_nodes(["Bartholomew Quagmire"]).entities

    clock.advance(6)
    with pytest.raises(NotFoundError):
        service.get(expiring.id)  # hidden, not purged yet
    assert _names(service) == {"Ouagadougou": 1}  # still mentioned by a live memory
    assert _relations(service) == []
    assert service.graph.entity("Ouagadougou").entity.mentions == 1
    for name in ("Bartholomew Quagmire", "bakery"):
        with pytest.raises(NotFoundError):
            service.graph.entity(name)
        with pytest.raises(NotFoundError):
            service.graph.relations(entity=name)
        with pytest.raises(NotFoundError):
            service.graph.neighbourhood(name)
    assert service.graph.named_in("Where is Bartholomew Quagmire?", "default") == []
    read = service.knowledge.read_graph()
    assert ([e.name for e in read.entities], read.relations) == (["Ouagadougou"], [])
    assert service.knowledge.search_nodes("Quagmire").entities == []
    assert service.knowledge.open_nodes(["Bartholomew Quagmire", "bakery"]).entities == []

    # The purge changes nothing the reads show.
    shown = (_names(service), _relations(service))
    assert service.purge_expired() == 1
    assert (_names(service), _relations(service)) == shown


def test_graph_declared_entity_stays_without_its_expired_observation(
    service: MemoryService, clock: FakeClock
) -> None:
    fading = service.remember("Ada Lovelace is in Lisbon.", kind="observation", ttl_seconds=5)
    line = {
        "type": ENTITY_LINE,
        "namespace": "default",
        "name": "Ada Lovelace",
        "entity_type": "person",
        "observations": [fading.id],
    }
    service.import_lines([json.dumps(line)])
    service.knowledge.add_observations(
        [{"entityName": "Ada Lovelace", "contents": ["Ada Lovelace wrote the first program"]}]
    )
    service.new_worker().run_until_idle()
    detail = service.graph.entity("Ada Lovelace")
    assert (detail.entity.declared, detail.entity.observations) == (True, 2)
    assert service.knowledge.search_nodes("Lisbon").entities

    clock.advance(6)
    detail = service.graph.entity("Ada Lovelace")
    assert (detail.entity.declared, detail.entity.observations) == (True, 1)
    assert [o.content for o in detail.observations] == ["Ada Lovelace wrote the first program"]
    [listed] = [e for e in service.graph.entities().entities if e.name == "Ada Lovelace"]
    assert listed.observations == 1
    [node] = service.knowledge.open_nodes(["Ada Lovelace"]).entities
    assert node.observations == ["Ada Lovelace wrote the first program"]
    assert service.knowledge.search_nodes("Lisbon").entities == []
    # The knowledge writes see the observations the reads show: the expired one is neither
    # found to delete nor in the way of the same text written again.
    gone = service.knowledge.delete_observations(
        [{"entityName": "Ada Lovelace", "observations": ["Ada Lovelace is in Lisbon."]}]
    )
    assert (gone.deleted, gone.not_found) == ([], ["'Ada Lovelace': 'Ada Lovelace is in Lisbon.'"])
    [added] = service.knowledge.add_observations(
        [{"entityName": "Ada Lovelace", "contents": ["Ada Lovelace is in Lisbon."]}]
    )
    assert added.added_observations == ["Ada Lovelace is in Lisbon."]


def _refusal(
    write: Callable[[list[dict[str, Any]]], object], item: dict[str, Any]
) -> tuple[str, str]:
    with pytest.raises(ValidationError) as raised:
        write([item])
    return raised.value.field, raised.value.message


def test_graph_knowledge_writes_take_an_expired_memorys_entity_for_a_name_never_seen(
    service: MemoryService, clock: FakeClock
) -> None:
    knowledge = service.knowledge
    service.remember("Lunch with Wilhelmina Okonkwo-Baptiste about the merger.", ttl_seconds=5)
    service.new_worker().run_until_idle()
    knowledge.create_entities([{"name": "Me", "entityType": "person", "observations": []}])
    probe = [{"entityName": "Lunch", "observations": ["nothing"]}]
    assert knowledge.delete_observations(probe).not_found == ["'Lunch': 'nothing'"]  # found

    clock.advance(6)
    assert knowledge.delete_observations(probe).not_found == ["entity 'Lunch'"]
    for name in ("wilhelmina okonkwo-baptiste", "Nobody Atall"):
        relation = {"from": "Me", "to": name, "relationType": "knows"}
        assert _refusal(knowledge.create_relations, relation) == (
            "relations[0].to",
            f"no entity named {name!r}; create it with create_entities first",
        )
        addition = {"entityName": name, "contents": ["met at lunch"]}
        assert _refusal(knowledge.add_observations, addition) == (
            "observations[0].entityName",
            f"no entity named {name!r}",
        )
        line = json.dumps({"type": "relation", **relation})
        [error] = knowledge.import_jsonl([line]).errors
        assert error.error == f"to: no entity named {name!r}"
        removed = knowledge.delete_relations([relation])
        assert (removed.deleted, removed.not_found) == ([], [f"Me -[knows]-> {name}"])
    removed = knowledge.delete_entities(["Lunch", "Nobody Atall"])
    assert (removed.deleted, removed.not_found) == ([], ["Lunch", "Nobody Atall"])

    # Declared now, it is a new entity: the caller's spelling and type, created now.
    [created] = knowledge.create_entities(
        [{"name": "wilhelmina okonkwo-baptiste", "entityType": "colleague"}]
    )
    assert created.name == "wilhelmina okonkwo-baptiste"
    entity = service.graph.entity("Wilhelmina Okonkwo-Baptiste").entity
    assert (entity.name, entity.type, entity.created_at) == (
        "wilhelmina okonkwo-baptiste",
        "colleague",
        clock.now,
    )
    assert service.purge_expired() == 1
    read = knowledge.read_graph()
    assert sorted((e.name, e.entity_type) for e in read.entities) == [
        ("Me", "person"),
        ("wilhelmina okonkwo-baptiste", "colleague"),
    ]
    assert read.relations == []
