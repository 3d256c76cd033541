"""The knowledge deletes given one thing twice in a call (adversarial pass a62)."""

from __future__ import annotations

from recalld.service import MemoryService
from tests.knowledge_support import any_service as any_service  # the fixture


def _entity(name: str, *observations: str) -> dict[str, object]:
    return {"name": name, "entityType": "person", "observations": list(observations)}


def test_deleting_an_entity_named_twice_reports_it_deleted_only(
    any_service: MemoryService,
) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice", "likes tea")])
    report = knowledge.delete_entities(["Alice", "alice", "Alice"])
    # It was deleted: saying it was also not found contradicts that.
    assert report.deleted == ["Alice"]
    assert report.not_found == []
    assert report.message == "Entities deleted successfully"
    assert knowledge.read_graph().entities == []


def test_deleting_an_observation_named_twice_reports_it_deleted_only(
    any_service: MemoryService,
) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice", "likes tea", "lives in Oslo")])
    report = knowledge.delete_observations(
        [
            {"entityName": "Alice", "observations": ["likes tea", "likes tea"]},
            {"entityName": "alice", "observations": ["likes tea"]},
        ]
    )
    assert report.deleted == ["'Alice': 'likes tea'"]
    assert report.not_found == []
    assert report.success is True
    [alice] = knowledge.open_nodes(["Alice"]).entities
    assert alice.observations == ["lives in Oslo"]


def test_deleting_a_relation_named_twice_reports_it_deleted_only(
    any_service: MemoryService,
) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice"), _entity("Bob")])
    relation = {"from": "Alice", "to": "Bob", "relationType": "knows"}
    knowledge.create_relations([relation])
    report = knowledge.delete_relations(
        [relation, relation, {"from": "alice", "to": "BOB", "relationType": "knows"}]
    )
    assert report.deleted == ["Alice -[knows]-> Bob"]
    assert report.not_found == []
    assert knowledge.read_graph().relations == []


def test_an_unknown_name_given_twice_is_reported_once(any_service: MemoryService) -> None:
    report = any_service.knowledge.delete_entities(["Nobody", "nobody"])
    assert report.not_found == ["Nobody"]
    assert report.message == "Deleted 0 entities; not found: Nobody"


# Texts the database must tell apart exactly as Python's == does (review of pass f64: the
# writes compare the given observations in the database now, where a collation could differ).
NEAR = [
    "café",
    "cafe\u0301",
    "trail ",
    "trail",
    "Case",
    "case",
    "emoji 😀 here",
    "x" * 60_000,
    "x" * 59_999 + "y",
    "ß",
    "ss",
    "İ",
    "i\u0307",
]


def test_observations_are_compared_exactly_in_the_database(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice", *NEAR)])
    [added] = knowledge.add_observations([{"entityName": "Alice", "contents": NEAR}])
    assert added.added_observations == []
    remaining = list(NEAR)
    for text in NEAR:
        report = knowledge.delete_observations([{"entityName": "Alice", "observations": [text]}])
        assert report.not_found == []
        remaining.remove(text)
        [alice] = knowledge.open_nodes(["Alice"]).entities
        assert alice.observations == remaining
