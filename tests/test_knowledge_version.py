"""The knowledge graph's version, which the ``memory://knowledge-graph`` resource's watchers
poll (adversarial pass f64): it moves with the namespace's graph and its memories, and not
with another namespace's."""

from __future__ import annotations

from recalld.service import MemoryService
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
