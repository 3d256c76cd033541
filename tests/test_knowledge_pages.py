"""A page of ``read_graph`` or ``search_nodes`` is bounded by its entities' observation text,
not only by their number (adversarial pass f64): an entity gathers any number of
observations, 1,000 a call, and a default page of 100 such entities was one answer of tens
of megabytes."""

from __future__ import annotations

from recalld.knowledge import PAGE_OBSERVATION_CHARACTERS
from recalld.service import MemoryService
from tests.knowledge_support import any_service as any_service  # the fixture

# Three entities of 0.6 budgets each: any two together pass one page's budget.
LONG = 60_000
PER_ENTITY = PAGE_OBSERVATION_CHARACTERS * 6 // 10 // LONG


def _big_entities(service: MemoryService) -> None:
    service.knowledge.create_entities(
        [
            {
                "name": name,
                "entityType": "person",
                "observations": [f"{name} {number} " + "x" * LONG for number in range(PER_ENTITY)],
            }
            for name in ("Ada", "Bo", "Cy")
        ]
    )
    service.knowledge.create_relations(
        [
            {"from": "Ada", "to": "Bo", "relationType": "knows"},
            {"from": "Bo", "to": "Cy", "relationType": "knows"},
        ]
    )


def test_read_graph_ends_a_page_before_its_observations_pass_the_budget(
    any_service: MemoryService,
) -> None:
    _big_entities(any_service)
    knowledge = any_service.knowledge
    page = knowledge.read_graph()
    # Before: all three (1.8 budgets of text) in one page, hasMore false.
    assert [entity.name for entity in page.entities] == ["Ada"]
    assert len(page.entities[0].observations) == PER_ENTITY  # an entity is never cut
    assert [(r.source, r.target) for r in page.relations] == [("Ada", "Bo")]
    assert page.has_more
    assert page.next_cursor is not None
    names = ["Ada"]
    while page.next_cursor is not None:
        page = knowledge.read_graph(cursor=page.next_cursor)
        names += [entity.name for entity in page.entities]
    assert names == ["Ada", "Bo", "Cy"]
    assert page.has_more is False


def test_search_nodes_keeps_to_the_budget_and_says_it_has_more(
    any_service: MemoryService,
) -> None:
    _big_entities(any_service)
    found = any_service.knowledge.search_nodes("xxx")
    assert [entity.name for entity in found.entities] == ["Ada"]
    assert found.has_more is True
    assert [(r.source, r.target) for r in found.relations] == [("Ada", "Bo")]


def test_small_entities_fill_a_page_as_before(any_service: MemoryService) -> None:
    any_service.knowledge.create_entities(
        [
            {"name": f"Person {number}", "entityType": "person", "observations": ["likes tea"]}
            for number in range(5)
        ]
    )
    page = any_service.knowledge.read_graph(limit=5)
    assert len(page.entities) == 5
    assert page.has_more is False
    assert page.next_cursor is None
