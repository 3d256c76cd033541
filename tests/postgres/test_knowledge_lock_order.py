"""``delete_entities`` and ``create_entities`` take the entity rows in key order (a delete
after the observation memories), as an extraction takes them (adversarial pass a68): they
took them in the order given, so a call naming Bob before Alice held Bob's row while it
waited for Alice's, which an extraction upserting Alice then Bob held: a deadlock, one
of the two rolled back."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.store.postgres_interleaving import Running, finished_or_blocked, held_elsewhere

pytestmark = pytest.mark.postgres

ENTITY_ROW = "SELECT 1 FROM graph_entities WHERE key = %s"


@pytest.fixture
def service(postgres_url: str) -> Iterator[MemoryService]:
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="none", postgres_pool_min=0
    )
    with MemoryService.open(settings) as opened:
        opened.knowledge.create_entities(
            [
                {"name": "Alice", "entityType": "person", "observations": ["Rows a boat"]},
                {"name": "Bob", "entityType": "person", "observations": ["Bakes bread"]},
            ]
        )
        yield opened


def test_delete_entities_holds_no_later_entity_while_it_waits_for_an_earlier_one(
    service: MemoryService, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url) as extraction:
        # As an extraction upserting Alice, then Bob (their keys' order): Alice is held.
        extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
        deleting = Running(lambda: service.knowledge.delete_entities(["Bob", "Alice"]))
        assert finished_or_blocked(deleting, postgres_url) == "blocked"
        # Before: Bob's row was deleted (held) while the call waited for Alice's, and the
        # extraction's next upsert would wait for it: a deadlock.
        assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
        extraction.rollback()
        report = deleting.outcome()
    assert report.deleted == ["Bob", "Alice"]
    assert service.knowledge.read_graph().entities == []


def test_create_entities_holds_no_later_entity_while_it_waits_for_an_earlier_one(
    postgres_url: str,
) -> None:
    # Known from a memory only (not declared): declaring them takes their rows.
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="rules", postgres_pool_min=0
    )
    with MemoryService.open(settings) as service:
        service.remember("Alice met Bob in Oslo.")
        service.new_worker().run_until_idle()
        with psycopg.connect(postgres_url) as extraction:
            extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
            declaring = Running(
                lambda: service.knowledge.create_entities(
                    [
                        {"name": "Bob", "entityType": "person", "observations": ["Bakes"]},
                        {"name": "Alice", "entityType": "person", "observations": ["Rows"]},
                    ]
                )
            )
            assert finished_or_blocked(declaring, postgres_url) == "blocked"
            # Before: Bob's row was declared (held) while the call waited for Alice's.
            assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
            extraction.rollback()
            created = declaring.outcome()
        assert [entity.name for entity in created] == ["Bob", "Alice"]
        assert [entity.observations for entity in created] == [["Bakes"], ["Rows"]]


@pytest.fixture
def known_from_memories(postgres_url: str) -> Iterator[MemoryService]:
    """Alice and Bob known from a memory only (not declared): declaring them takes their
    rows, as create_relations and add_observations do."""
    settings = Settings(
        db=postgres_url, embedder="none", graph_extractor="rules", postgres_pool_min=0
    )
    with MemoryService.open(settings) as opened:
        opened.remember("Alice met Bob in Oslo.")
        opened.new_worker().run_until_idle()
        yield opened


def test_create_relations_holds_no_later_entity_while_it_waits_for_an_earlier_one(
    known_from_memories: MemoryService, postgres_url: str
) -> None:
    service = known_from_memories
    with psycopg.connect(postgres_url) as extraction:
        extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
        relating = Running(
            lambda: service.knowledge.create_relations(
                [{"from": "Bob", "to": "Alice", "relationType": "knows"}]
            )
        )
        assert finished_or_blocked(relating, postgres_url) == "blocked"
        # Before: Bob's row was declared (held) while the call waited for Alice's
        # (review of pass a68).
        assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
        extraction.rollback()
        created = relating.outcome()
    assert [(relation.source, relation.target) for relation in created] == [("Bob", "Alice")]
    graph = service.knowledge.open_nodes(["Alice", "Bob"])
    assert [(relation.source, relation.target) for relation in graph.relations] == [
        ("Bob", "Alice")
    ]


def test_add_observations_holds_no_later_entity_while_it_waits_for_an_earlier_one(
    known_from_memories: MemoryService, postgres_url: str
) -> None:
    service = known_from_memories
    with psycopg.connect(postgres_url) as extraction:
        extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
        adding = Running(
            lambda: service.knowledge.add_observations(
                [
                    {"entityName": "Bob", "contents": ["Bakes bread"]},
                    {"entityName": "Alice", "contents": ["Rows a boat"]},
                    {"entityName": "bob", "contents": ["Sings"]},
                ]
            )
        )
        assert finished_or_blocked(adding, postgres_url) == "blocked"
        # Before: Bob's row was declared (held) while the call waited for Alice's
        # (review of pass a68).
        assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
        extraction.rollback()
        added = adding.outcome()
    assert [(item.entity_name, item.added_observations) for item in added] == [
        ("Bob", ["Bakes bread"]),
        ("Alice", ["Rows a boat"]),
        ("bob", ["Sings"]),
    ]
    entities = {
        entity.name: entity.observations for entity in service.knowledge.read_graph().entities
    }
    # Each entity's own, after what the memory naming it says.
    assert entities["Bob"][:2] == ["Bakes bread", "Sings"]
    assert entities["Alice"][:1] == ["Rows a boat"]


def test_import_jsonl_holds_no_later_entity_while_it_waits_for_an_earlier_one(
    known_from_memories: MemoryService, postgres_url: str
) -> None:
    service = known_from_memories
    lines = [
        '{"type": "entity", "name": "Bob", "entityType": "person", "observations": ["Bakes"]}',
        '{"type": "entity", "name": "Alice", "entityType": "person", "observations": ["Rows"]}',
    ]
    with psycopg.connect(postgres_url) as extraction:
        extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
        importing = Running(lambda: service.knowledge.import_jsonl(lines))
        assert finished_or_blocked(importing, postgres_url) == "blocked"
        # Before: Bob's row was declared (held) while the import waited for Alice's
        # (adversarial pass c69).
        assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
        extraction.rollback()
        report = importing.outcome()
    # Known from a memory only, each becomes declared: created, as create_entities counts it.
    assert (report.entities, report.observations, report.errors) == (2, 2, [])
    entities = {
        entity.name: entity.observations for entity in service.knowledge.read_graph().entities
    }
    assert "Bakes" in entities["Bob"]
    assert "Rows" in entities["Alice"]


def test_import_jsonl_relations_hold_no_later_entity_while_waiting_for_an_earlier_one(
    known_from_memories: MemoryService, postgres_url: str
) -> None:
    service = known_from_memories
    lines = ['{"type": "relation", "from": "Bob", "to": "Alice", "relationType": "trusts"}']
    with psycopg.connect(postgres_url) as extraction:
        extraction.execute(f"{ENTITY_ROW} FOR UPDATE", ("alice",))
        importing = Running(lambda: service.knowledge.import_jsonl(lines))
        assert finished_or_blocked(importing, postgres_url) == "blocked"
        assert not held_elsewhere(postgres_url, ENTITY_ROW, ("bob",))
        extraction.rollback()
        report = importing.outcome()
    assert (report.relations, report.errors) == (1, [])
