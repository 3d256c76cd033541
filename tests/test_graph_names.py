"""An extracted entity's name and type are those of the memories that still mention it:
when the memory whose spelling (or type) the entity took is forgotten, updated or purged,
the entity takes those of the earliest memory still naming it, in every read; a declared
entity keeps what was declared. On both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

SAID = "I like green tea."  # said by "ZEDEKIAH": a person, in capitals
NAMED = "Zedekiah is a chess player."  # names "Zedekiah", of the generic type "name"


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    # No purge while a test runs: the test purges when it means to.
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        purge_interval_seconds=3600,
    )


def _build(service: MemoryService) -> None:
    service.new_worker().run_until_idle()


def _shown(service: MemoryService) -> set[tuple[str, str]]:
    """Every (name, type) the reads give the entity whose key is "zedekiah", and the names
    its relations show."""
    detail = service.graph.entity("zedekiah")
    shown = {(detail.entity.name, detail.entity.type)}
    shown |= {(e.name, e.type) for e in service.graph.entities(query="zedekiah").entities}
    nodes = service.knowledge.open_nodes(["zedekiah"]).entities
    shown |= {(e.name, e.entity_type) for e in nodes}
    shown |= {
        (e.name, e.entity_type)
        for e in service.knowledge.search_nodes("zedekiah").entities
        if e.name.lower() == "zedekiah"
    }
    for relation in service.graph.relations(entity="zedekiah").relations:
        for end in (relation.subject, relation.object):
            if end.lower() == "zedekiah":
                shown.add((end, detail.entity.type))
    return shown


@pytest.mark.parametrize("how", ["forget", "update", "purge"])
def test_graph_entity_takes_the_name_and_type_of_the_memories_left(
    service: MemoryService, clock: FakeClock, how: str
) -> None:
    first = service.remember(SAID, speaker="ZEDEKIAH", ttl_seconds=5 if how == "purge" else None)
    service.remember(NAMED)
    _build(service)
    assert _shown(service) == {("ZEDEKIAH", "person")}

    if how == "forget":
        assert service.forget(first.id).deleted
    elif how == "update":
        service.update(first.id, speaker="Ottoline")
    else:
        clock.advance(6)
        assert service.purge_expired() == 1
    assert _shown(service) == {("Zedekiah", "name")}
    _build(service)
    assert _shown(service) == {("Zedekiah", "name")}


def test_graph_declared_entity_keeps_its_declared_name_and_type(service: MemoryService) -> None:
    first = service.remember("I like green tea with QUENTIN.", speaker="ZEDEKIAH")
    service.remember(f"{NAMED} Quentin is a judge.")
    _build(service)
    service.knowledge.create_entities([{"name": "zedekiah", "entityType": "grandmaster"}])
    assert service.forget(first.id).deleted
    assert _shown(service) == {("zedekiah", "grandmaster")}
    # The undeclared entity the same memory named first is renamed.
    assert service.graph.entity("quentin").entity.name == "Quentin"


def test_graph_declaring_after_expiry_keeps_no_spelling_of_the_expired_memory(
    service: MemoryService, clock: FakeClock
) -> None:
    service.remember(SAID, speaker="ZEDEKIAH", ttl_seconds=5)
    service.remember(NAMED)
    _build(service)
    service.knowledge.create_entities([{"name": "Me", "entityType": "person"}])
    clock.advance(6)
    # Declared through a relation: under the caller's spelling (a memory's would stay
    # once that memory is forgotten), with the type the purge leaves, not the expired
    # memory's.
    service.knowledge.create_relations([{"from": "Me", "to": "zedekiah", "relationType": "knows"}])
    assert service.purge_expired() == 1
    assert _shown(service) == {("zedekiah", "name")}
    assert service.graph.entity("zedekiah").entity.declared


def test_graph_an_entity_declared_through_a_relation_keeps_no_forgotten_spelling(
    service: MemoryService,
) -> None:
    # Declared under the memory's spelling, the entity kept "ZORBLAX" once that memory
    # was forgotten (a declared name no longer follows the mentions).
    said = service.remember("Quarterly numbers: ZORBLAX Industries is a shell company.")
    _build(service)
    service.knowledge.create_entities([{"name": "Me", "entityType": "person"}])
    service.knowledge.create_relations(
        [{"from": "Me", "to": "zorblax industries", "relationType": "audits"}]
    )
    assert service.forget(said.id).deleted
    assert service.graph.entity("zorblax industries").entity.name == "zorblax industries"


@pytest.mark.spacy
def test_an_extracted_name_with_control_characters_can_be_opened(
    any_database: Path | str,
) -> None:
    # Text as a terminal log or a spoofed file name writes it: an ANSI colour code, a
    # right-to-left override. spaCy kept them in the names, which were listed and then
    # refused when opened (422: control and invisible characters are not allowed).
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        service.remember("Saw \x1b[31mMarguerite\x1b[0m at the \u202eLouvre\u202c gate.")
        service.remember("Meeting with \u202eAnna Schmidt\u202c in Berlin.")
        _build(service)
        listed = [entity.name for entity in service.graph.entities(limit=100).entities]
        assert {"Louvre gate", "Berlin"} <= set(listed), listed
        for name in listed:
            assert service.graph.entity(name).entity.name == name
