"""Walking ``read_graph`` by ``nextCursor`` over entities of many sizes, pages ended early by
their observation text and read a few entities, then more (review of pass f64): every entity
comes once, whole, and every relation once, on the page of its subject."""

from __future__ import annotations

import random

import pytest

from recalld import knowledge as knowledge_module
from recalld.service import MemoryService
from tests.knowledge_support import any_service as any_service  # the fixture

BUDGET = 100


@pytest.mark.parametrize("limit", [1, 3, 7, 50])
def test_walking_read_graph_by_cursor_yields_each_entity_and_relation_once(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(knowledge_module, "PAGE_OBSERVATION_CHARACTERS", BUDGET)
    monkeypatch.setattr(knowledge_module, "PAGE_READ_CHUNK", 2)
    chance = random.Random(limit)
    sizes = {f"E{index:02d}": chance.choice([0, 1, 10, 60, 99, 101, 250]) for index in range(30)}
    any_service.knowledge.create_entities(
        [
            {"name": name, "entityType": "thing", "observations": ["x" * size] if size else []}
            for name, size in sizes.items()
        ]
    )
    names = sorted(sizes)
    relations = [
        {"from": names[index], "to": names[(index * 7 + 3) % len(names)], "relationType": "r"}
        for index in range(len(names))
    ]
    any_service.knowledge.create_relations(relations)
    seen: list[str] = []
    seen_relations: list[tuple[str, str, str]] = []
    cursor = None
    for _ in range(len(names) + 1):
        page = any_service.knowledge.read_graph(limit=limit, cursor=cursor)
        assert page.entities, "a page with more to read holds at least one entity"
        assert len(page.entities) <= limit
        held = sum(len(text) for entity in page.entities for text in entity.observations)
        # Past the budget only when its first entity is alone and whole.
        assert held <= BUDGET or len(page.entities) == 1
        for entity in page.entities:
            assert entity.observations == (["x" * sizes[entity.name]] if sizes[entity.name] else [])
        on_page = {entity.name for entity in page.entities}
        for relation in page.relations:
            assert relation.source in on_page
        seen += [entity.name for entity in page.entities]
        seen_relations += [(r.source, r.target, r.relation_type) for r in page.relations]
        assert page.has_more == (page.next_cursor is not None)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == names
    assert sorted(seen_relations) == sorted((r["from"], r["to"], "r") for r in relations)
