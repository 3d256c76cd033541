"""One entity's observations are bounded in all, and ``open_nodes`` in size (adversarial pass
e65): 1,000 observations a call, call after call, made an entity of any size (10,000 of
64 KiB: 640 MB), which ``open_nodes`` (and a ``read_graph`` page's first entity) returned
whole, and ``open_nodes`` of many such entities had no bound at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld import knowledge, knowledge_bounds
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.service import MemoryService
from recalld.store.sqlite_graph_writes import SQLiteGraphTransaction
from tests.knowledge_support import any_service as any_service  # the fixture


def _contents(service: MemoryService, name: str) -> list[str]:
    (entity,) = service.knowledge.open_nodes([name]).entities
    return entity.observations


def test_an_entitys_observations_are_bounded_in_all(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    tools = any_service.knowledge
    tools.create_entities([{"name": "Ada", "entityType": "person", "observations": ["a" * 20]}])
    with pytest.raises(ValidationError) as refused:
        # Before: taken, call after call, without any bound.
        tools.add_observations(
            [
                {"entityName": "Ada", "contents": ["b" * 5]},
                {"entityName": "Ada", "contents": ["c" * 6]},
            ]
        )
    assert refused.value.field == "observations[1].contents"
    assert "31 characters of observations; the limit is 30 per entity" in str(refused.value)
    # Nothing of the call was written, not even its first, fitting item.
    assert _contents(any_service, "Ada") == ["a" * 20]
    # An observation already held costs nothing again; what fits is taken.
    added = tools.add_observations([{"entityName": "Ada", "contents": ["a" * 20, "d" * 10]}])
    assert added[0].added_observations == ["d" * 10]


def test_a_new_entitys_observations_are_bounded_in_all(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    tools = any_service.knowledge
    with pytest.raises(ValidationError) as refused:
        tools.create_entities(
            [
                {"name": "Ada", "entityType": "person", "observations": ["a"]},
                {"name": "Bo", "entityType": "person", "observations": ["b" * 20, "c" * 11]},
            ]
        )
    assert refused.value.field == "entities[1].observations"
    assert tools.read_graph().entities == []


def test_an_import_line_past_the_entity_bound_is_reported_and_the_rest_imported(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    tools = any_service.knowledge
    tools.create_entities([{"name": "Ada", "entityType": "person", "observations": ["a" * 25]}])
    report = tools.import_jsonl(
        [
            '{"type": "entity", "name": "Ada", "entityType": "person", "observations": ["bbbbbb"]}',
            '{"type": "entity", "name": "Bo", "entityType": "person", "observations": ["b"]}',
        ]
    )
    assert [error.line for error in report.errors] == [1]
    assert "the limit is 30 per entity" in report.errors[0].error
    assert report.entities == 1
    assert _contents(any_service, "Ada") == ["a" * 25]
    assert _contents(any_service, "Bo") == ["b"]


def test_open_nodes_past_the_page_budget_is_refused_naming_names(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = any_service.knowledge
    tools.create_entities(
        [
            {"name": name, "entityType": "person", "observations": [name * 10]}
            for name in ("Ada", "Bo", "Cy")
        ]
    )
    monkeypatch.setattr(knowledge, "PAGE_OBSERVATION_CHARACTERS", 45)
    with pytest.raises(ValidationError) as refused:
        # Before: all of them, whatever their size.
        tools.open_nodes(["Ada", "Bo", "Cy"])
    assert refused.value.field == "names"
    assert "open fewer names (the first 1 fit)" in str(refused.value)
    assert "the limit is 45 per call" in str(refused.value)
    # One entity is always answered whole, as a read_graph page's first one.
    monkeypatch.setattr(knowledge, "PAGE_OBSERVATION_CHARACTERS", 5)
    assert [entity.name for entity in tools.open_nodes(["Bo"]).entities] == ["Bo"]


def test_an_entitys_text_is_summed_once_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 1,000 items naming one entity of 10,000 observations summed them 1,000 times (its
    # write lock held 12 s instead of 4): once a call, then counted on.
    calls: list[int] = []
    summed = SQLiteGraphTransaction.observation_characters

    def counted(self: SQLiteGraphTransaction, entity_id: int) -> int:
        calls.append(entity_id)
        return summed(self, entity_id)

    monkeypatch.setattr(SQLiteGraphTransaction, "observation_characters", counted)
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    settings = Settings(db=tmp_path / "once.db", synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings) as service:
        tools = service.knowledge
        tools.create_entities([{"name": "Ada", "entityType": "person"}])
        items = [{"entityName": "Ada", "contents": [str(number) * 5]} for number in range(5)]
        tools.add_observations(items)
        assert len(calls) == 1
        with pytest.raises(ValidationError) as refused:
            # Counted on within the call: the sixth item passes the bound.
            tools.add_observations([*items, {"entityName": "Ada", "contents": ["x" * 6]}])
        assert refused.value.field == "observations[5].contents"
        report = tools.import_jsonl(
            [
                '{"type": "entity", "name": "Bo", "entityType": "person", "observations": ["%s"]}'
                % (letter * 20)
                for letter in "ab"
            ]
        )
        assert [error.line for error in report.errors] == [2]


def test_a_recalld_import_linking_observations_past_the_entity_bound_is_refused(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass e65: recalld's own import links an entity line's memories as its
    # observations without the bound, so an export-shaped file made an entity of any size.
    tools = any_service.knowledge
    tools.create_entities(
        [{"name": "Ada", "entityType": "person", "observations": ["a" * 20, "b" * 20]}]
    )
    lines = list(any_service.export())
    tools.delete_entities(["Ada"])
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    report = any_service.import_lines(lines)
    entity_line = next(number for number, line in enumerate(lines, 1) if "recalld.entity" in line)
    assert [error.line for error in report.errors] == [entity_line]
    assert "observations" in report.errors[0].error
    assert "40 characters of observations; the limit is 30 per entity" in report.errors[0].error
    # The refused line declared nothing; the memories it named are imported as memories.
    assert tools.open_nodes(["Ada"]).entities == []
    assert len(any_service.search("aaaaaaaaaaaaaaaaaaaa")) == 1
    # Within the bound, the line links them as before.
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 40)
    assert any_service.import_lines(lines).errors == []
    assert sorted(_contents(any_service, "Ada")) == ["a" * 20, "b" * 20]


def test_an_entity_past_the_bound_still_takes_what_it_holds_already(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass e65: an entity past the bound (written before it, or under a higher
    # one) refused even a call adding nothing, so importing the same file again reported
    # its line although that adds nothing.
    tools = any_service.knowledge
    line = '{"type": "entity", "name": "Ada", "entityType": "person", "observations": ["%s"]}'
    assert tools.import_jsonl([line % ("a" * 25)]).errors == []
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 10)
    added = tools.add_observations([{"entityName": "Ada", "contents": ["a" * 25]}])
    assert added[0].added_observations == []
    again = tools.import_jsonl([line % ("a" * 25)])
    assert again.errors == []
    assert again.unchanged == 1
    with pytest.raises(ValidationError) as refused:
        tools.add_observations([{"entityName": "Ada", "contents": ["b"]}])
    assert "26 characters of observations; the limit is 10 per entity" in str(refused.value)


def test_an_edit_of_an_observation_is_held_to_the_entity_bound(
    any_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass e65: an observation is a memory, and its edit (update, an import line
    # with its id) grew the entity past the bound, edit after edit.
    monkeypatch.setattr(knowledge_bounds, "ENTITY_OBSERVATION_CHARACTERS", 30)
    tools = any_service.knowledge
    tools.create_entities(
        [{"name": "Ada", "entityType": "person", "observations": ["a" * 10, "b" * 10]}]
    )
    lines = [line for line in any_service.export() if "b" * 10 in line]
    (observation,) = [m for m in any_service.list_memories().memories if m.content == "a" * 10]
    with pytest.raises(ValidationError) as refused:
        any_service.update(observation.id, content="c" * 21)
    assert refused.value.field == "content"
    assert "an observation of entity 'Ada'" in str(refused.value)
    assert "31 characters of observations; the limit is 30 per entity" in str(refused.value)
    any_service.update(observation.id, content="c" * 20)
    # A newer line with the other observation's id: refused as the edit was.
    newer = lines[0].replace("b" * 10, "e" * 11).replace('"updated_at":"2', '"updated_at":"3')
    report = any_service.import_lines([newer])
    assert [error.line for error in report.errors] == [1]
    assert "the limit is 30 per entity" in report.errors[0].error
    assert sorted(_contents(any_service, "Ada")) == ["b" * 10, "c" * 20]
