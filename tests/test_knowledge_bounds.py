"""The knowledge operations' lists of observations are bounded per call like every other list
(adversarial pass a62)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from recalld import knowledge_bounds
from recalld.errors import ValidationError
from recalld.knowledge_bounds import MAX_ITEMS, MAX_OBSERVATIONS
from recalld.service import MemoryService
from tests.knowledge_support import any_service as any_service  # the fixture


def _entity(name: str, *observations: str) -> dict[str, object]:
    return {"name": name, "entityType": "person", "observations": list(observations)}


def test_an_entitys_observations_are_bounded_per_call(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    many = [f"fact {number}" for number in range(MAX_ITEMS + 1)]
    with pytest.raises(ValidationError) as refused:
        knowledge.create_entities([_entity("Alice", "one"), _entity("Bob", *many)])
    assert refused.value.field == "entities[1].observations"
    assert f"{MAX_ITEMS + 1} items; the limit is {MAX_ITEMS}" in str(refused.value)
    # Nothing of the call was written, not even the entity before it.
    assert knowledge.read_graph().entities == []
    assert any_service.search("fact") == []


def test_observations_to_add_are_bounded_per_call(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice")])
    many = [f"fact {number}" for number in range(MAX_ITEMS + 1)]
    with pytest.raises(ValidationError) as refused:
        knowledge.add_observations([{"entityName": "Alice", "contents": many}])
    assert refused.value.field == "observations[0].contents"
    [alice] = knowledge.open_nodes(["Alice"]).entities
    assert alice.observations == []


def test_observations_to_delete_are_bounded_per_call(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice", "fact 0")])
    many = [f"fact {number}" for number in range(MAX_ITEMS + 1)]
    with pytest.raises(ValidationError) as refused:
        knowledge.delete_observations([{"entityName": "Alice", "observations": many}])
    assert refused.value.field == "deletions[0].observations"
    [alice] = knowledge.open_nodes(["Alice"]).entities
    assert alice.observations == ["fact 0"]


def test_observations_up_to_the_bound_are_written(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    many = [f"fact {number}" for number in range(MAX_ITEMS)]
    [created] = knowledge.create_entities([_entity("Alice", *many)])
    assert len(created.observations) == MAX_ITEMS


# A call's observations in all (adversarial pass f64): 1,000 items of 1,000 each were a
# million memories written in one transaction, every other writer waiting minutes.
TOO_MANY_ITEMS = MAX_OBSERVATIONS // MAX_ITEMS + 1


def test_a_calls_observations_are_bounded_in_all(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    many = [f"fact {number}" for number in range(MAX_ITEMS)]
    with pytest.raises(ValidationError) as refused:
        knowledge.create_entities([_entity(f"P{index}", *many) for index in range(TOO_MANY_ITEMS)])
    assert refused.value.field == "entities"
    assert f"the limit is {MAX_OBSERVATIONS} per call" in str(refused.value)
    assert knowledge.read_graph().entities == []
    knowledge.create_entities([_entity("Alice", "fact 0")])
    with pytest.raises(ValidationError) as refused:
        knowledge.add_observations(
            [{"entityName": "Alice", "contents": many} for _ in range(TOO_MANY_ITEMS)]
        )
    assert refused.value.field == "observations"
    with pytest.raises(ValidationError) as refused:
        knowledge.delete_observations(
            [{"entityName": "Alice", "observations": ["fact 0", *many[1:]]}]
            + [{"entityName": "Alice", "observations": many} for _ in range(TOO_MANY_ITEMS - 1)]
        )
    assert refused.value.field == "deletions"
    [alice] = knowledge.open_nodes(["Alice"]).entities
    assert alice.observations == ["fact 0"]


def test_a_calls_observations_up_to_the_bound_in_all_are_taken(any_service: MemoryService) -> None:
    knowledge = any_service.knowledge
    knowledge.create_entities([_entity("Alice", "kept")])
    absent = [f"absent {number}" for number in range(MAX_ITEMS)]
    report = knowledge.delete_observations(
        [{"entityName": "Alice", "observations": absent}] * (MAX_OBSERVATIONS // MAX_ITEMS)
    )
    assert report.deleted == []
    assert len(report.not_found) == MAX_ITEMS  # each text answered once


def test_one_list_past_both_bounds_is_refused_naming_the_list(
    any_service: MemoryService,
) -> None:
    # Review of pass f64: one entity of 10,001 observations was refused naming the whole
    # call (`entities`, "10000 per call"): split into calls, it was still refused, at 1,000.
    knowledge = any_service.knowledge
    many = [f"fact {number}" for number in range(MAX_OBSERVATIONS + 1)]
    with pytest.raises(ValidationError) as refused:
        knowledge.create_entities([_entity("Alice", *many)])
    assert refused.value.field == "entities[0].observations"
    assert f"the limit is {MAX_ITEMS}" in str(refused.value)
    knowledge.create_entities([_entity("Alice")])
    with pytest.raises(ValidationError) as refused:
        knowledge.add_observations([{"entityName": "Alice", "contents": many}])
    assert refused.value.field == "observations[0].contents"
    with pytest.raises(ValidationError) as refused:
        knowledge.delete_observations([{"entityName": "Alice", "observations": many}])
    assert refused.value.field == "deletions[0].observations"


def test_an_import_writes_a_transaction_per_bounded_batch_of_observations(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass f64: an import wrote 500 entities a transaction whatever they held, so
    # a reference file (or a REST import) of 500 entities of 1,000 observations each was
    # half a million memories in one write, every other writer waiting minutes for it.
    monkeypatch.setattr(knowledge_bounds, "MAX_OBSERVATIONS", 10)
    store = any_service.store
    transactions = []
    opened = store.transaction

    def counted() -> Any:
        transactions.append(1)
        return opened()

    monkeypatch.setattr(store, "transaction", counted)
    lines = [
        json.dumps(
            {"type": "entity", "name": f"P{index}", "entityType": "person", "observations": obs}
        )
        for index, obs in enumerate(
            [[f"a{n}" for n in range(6)], [f"b{n}" for n in range(6)], ["c"], [], ["d"] * 12]
        )
    ]
    report = any_service.knowledge.import_jsonl(lines)
    assert report.errors == []
    assert report.entities == 5
    # 6 | 6 + 1 + 0 | 12 (an entity is never split): three writes, not one.
    assert len(transactions) == 3
    assert len(any_service.knowledge.read_graph().entities) == 5
    [many] = any_service.knowledge.open_nodes(["P4"]).entities
    assert many.observations == ["d"]
