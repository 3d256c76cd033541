"""A neighbourhood's co-mentioned entities come in one order on both stores: most
memories first, then by name (the stores list a memory's mentions in no set order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def test_graph_co_mentioned_ties_go_by_name(service: MemoryService) -> None:
    service.remember("Grace Hopper met Ada Lovelace in London.")
    service.remember("Grace Hopper worked in Arlington with Alan Turing.")
    service.remember("Grace Hopper wrote to Alan Turing.")
    service.new_worker().run_until_idle()
    around = service.graph.neighbourhood("Grace Hopper")
    assert [(item.name, item.memories) for item in around.co_mentioned] == [
        ("Alan Turing", 2),
        ("Ada Lovelace", 1),
        ("Arlington", 1),
        ("London", 1),
    ]
    assert [
        item.name for item in service.graph.neighbourhood("Grace Hopper", limit=2).co_mentioned
    ] == [
        "Alan Turing",
        "Ada Lovelace",
    ]


def _pair_with_predicates(service: MemoryService, count: int) -> None:
    service.knowledge.create_entities(
        [{"name": name, "entityType": "thing", "observations": []} for name in ("Anvil", "Bell")]
    )
    service.knowledge.create_relations(
        [{"from": "Anvil", "to": "Bell", "relationType": f"rings_{n}"} for n in range(count)]
    )


def test_graph_neighbourhood_cut_relations_say_truncated(service: MemoryService) -> None:
    # limit 2 reads 8 relations a hop: the ninth and later were dropped with truncated false.
    _pair_with_predicates(service, 12)
    around = service.graph.neighbourhood("Anvil", limit=2)
    assert [entity.name for entity in around.entities] == ["Bell"]
    assert len(around.relations) == 8
    assert around.truncated


def test_graph_neighbourhood_whole_at_the_relation_cap_is_not_truncated(
    service: MemoryService,
) -> None:
    _pair_with_predicates(service, 8)
    around = service.graph.neighbourhood("Anvil", limit=2)
    assert len(around.relations) == 8
    assert not around.truncated


def test_graph_neighbourhood_survives_an_end_deleted_meanwhile(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    _pair_with_predicates(service, 1)
    graph_type = type(service.store.graph)
    read_entities = graph_type.entities_by_key

    def deleted_first(self: Any, namespace: str, keys: list[str], now: Any) -> Any:
        # Another client deletes Bell between the read of the relations and of their ends
        # (the first read of entities finds the centre, Anvil, alone).
        if "bell" in keys:
            monkeypatch.setattr(graph_type, "entities_by_key", read_entities)
            service.knowledge.delete_entities(["Bell"])
        return read_entities(self, namespace, keys, now)

    monkeypatch.setattr(graph_type, "entities_by_key", deleted_first)
    around = service.graph.neighbourhood("Anvil")
    assert around.entities == []
    assert around.relations == []


def test_graph_neighbourhood_second_hop_is_not_filled_by_the_first_hops_relations(
    service: MemoryService,
) -> None:
    # limit 3 reads 12 relations a hop. The second hop (from Bell) read the twelve
    # Anvil-Bell relations again, so Bell-Cat was never seen: Cat was missing, yet
    # three entities fit, and the answer said truncated.
    _pair_with_predicates(service, 12)
    service.knowledge.create_entities([{"name": "Cat", "entityType": "thing", "observations": []}])
    service.knowledge.create_relations([{"from": "Bell", "to": "Cat", "relationType": "wakes"}])
    around = service.graph.neighbourhood("Anvil", depth=2, limit=3)
    assert [entity.name for entity in around.entities] == ["Bell", "Cat"]
    assert len(around.relations) == 13
    assert not around.truncated


def test_graph_entity_detail_says_when_it_has_more_relations(any_database: Path | str) -> None:
    settings = Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_page_size=2)
    with MemoryService.open(settings) as service:
        _pair_with_predicates(service, 2)
        whole = service.graph.entity("Anvil")
        assert len(whole.relations) == 2
        assert whole.relations_cursor is None
        service.knowledge.create_relations(
            [{"from": "Bell", "to": "Anvil", "relationType": "answers"}]
        )
        # Three relations, two shown: the detail said nothing of the third.
        detail = service.graph.entity("Anvil")
        assert [relation.predicate for relation in detail.relations] == ["rings_0", "rings_1"]
        assert detail.relations_cursor is not None
        rest = service.graph.relations(entity="Anvil", cursor=detail.relations_cursor)
        assert [relation.predicate for relation in rest.relations] == ["answers"]
        assert rest.next_cursor is None
