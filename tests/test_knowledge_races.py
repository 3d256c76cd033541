"""Two knowledge writers on one entity at once, on PostgreSQL, where they are not one
writer's (SQLite's write transaction holds off every other writer): each call is as if it
ran alone (adversarial pass a62)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from recalld.config import Settings
from recalld.knowledge import KnowledgeGraph
from recalld.service import MemoryService
from recalld.store.postgres_graph_writes import PostgresGraphTransaction
from tests.conftest import FakeClock
from tests.store.postgres_interleaving import waiting_on_a_lock

pytestmark = pytest.mark.postgres


@pytest.fixture
def service(postgres_url: str, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(db=postgres_url, synchronous="NORMAL", embedder="none")
    with MemoryService.open(settings, clock=clock) as opened:
        opened.knowledge.create_entities(
            [
                {"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
                {"name": "Bob", "entityType": "person", "observations": []},
            ]
        )
        yield opened


def _race(
    first: Callable[[], object],
    second: Callable[[], object],
    held: threading.Event,
    second_done: threading.Event,
) -> None:
    """Run ``first`` until it sets ``held`` (it then holds its transaction open until the
    database says ``second`` waits for it, or ``second`` is done), and ``second`` meanwhile;
    either one's error is raised here."""

    def run_second() -> object:
        try:
            return second()
        finally:
            second_done.set()

    with ThreadPoolExecutor(max_workers=2) as pool:
        first_call = pool.submit(first)
        assert held.wait(30)
        second_call = pool.submit(run_second)
        first_call.result(60)
        second_call.result(60)


def _hold_until_waited_on(url: str, held: threading.Event, other_done: threading.Event) -> None:
    held.set()
    for _ in range(200):
        if other_done.wait(0.05) or waiting_on_a_lock(url):
            return


def test_an_observation_added_while_its_entity_is_deleted_goes_with_it(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The delete read the entity's observations before the addition committed, then
    # deleted the entity: the new observation's memory stayed, linked to nothing.
    held, deleted = threading.Event(), threading.Event()
    add = KnowledgeGraph._add_observation

    def add_then_hold(self: KnowledgeGraph, *arguments: Any) -> None:
        add(self, *arguments)
        _hold_until_waited_on(postgres_url, held, deleted)

    monkeypatch.setattr(KnowledgeGraph, "_add_observation", add_then_hold)
    knowledge = service.knowledge
    _race(
        lambda: knowledge.add_observations([{"entityName": "Alice", "contents": ["owns a kayak"]}]),
        lambda: knowledge.delete_entities(["Alice"]),
        held,
        deleted,
    )
    assert [entity.name for entity in knowledge.read_graph().entities] == ["Bob"]
    assert service.search("kayak") == []
    assert service.search("tea") == []


def test_a_relation_to_an_entity_deleted_meanwhile_does_not_bring_it_back(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The relation's ends were found, the delete committed, and declaring the end created
    # a new "unknown" entity under the deleted name: the delete was undone.
    held, deleted = threading.Event(), threading.Event()
    find = PostgresGraphTransaction.find_entity
    relating = threading.get_ident

    def find_then_hold(self: PostgresGraphTransaction, *arguments: Any) -> Any:
        found = find(self, *arguments)
        # Both ends found by the relation's writer: the delete runs now.
        ends_found = found is not None and found.name == "Alice" and relating() == writer[0]
        if ends_found and not held.is_set():
            _hold_until_waited_on(postgres_url, held, deleted)
        return found

    monkeypatch.setattr(PostgresGraphTransaction, "find_entity", find_then_hold)
    knowledge = service.knowledge

    writer: list[int] = []

    def relate() -> None:
        writer.append(threading.get_ident())
        knowledge.create_relations([{"from": "Bob", "to": "Alice", "relationType": "knows"}])

    _race(relate, lambda: knowledge.delete_entities(["Alice"]), held, deleted)
    graph = knowledge.read_graph()
    assert [entity.name for entity in graph.entities] == ["Bob"]
    assert graph.relations == []


def test_an_imported_relation_and_a_delete_of_its_end_run_one_after_the_other(
    service: MemoryService, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review of pass a62: the native import found the relation's ends, the delete
    # committed, and writing the relation broke its foreign key: the import failed with
    # the database's error. Now the delete waits for the import, as for create_relations.
    knowledge = service.knowledge
    knowledge.create_relations([{"from": "Bob", "to": "Alice", "relationType": "knows"}])
    relation_lines = [line for line in service.export() if '"relation_type"' in line]
    knowledge.delete_relations([{"from": "Bob", "to": "Alice", "relationType": "knows"}])
    held, deleted = threading.Event(), threading.Event()
    find = PostgresGraphTransaction.find_entity
    importing: list[int] = []

    def find_then_hold(self: PostgresGraphTransaction, *arguments: Any) -> Any:
        found = find(self, *arguments)
        ends_found = found is not None and found.name == "Alice" and importing
        if ends_found and threading.get_ident() == importing[0] and not held.is_set():
            _hold_until_waited_on(postgres_url, held, deleted)
        return found

    monkeypatch.setattr(PostgresGraphTransaction, "find_entity", find_then_hold)
    reports = []

    def import_relation() -> None:
        importing.append(threading.get_ident())
        reports.append(service.import_lines(relation_lines))

    _race(import_relation, lambda: knowledge.delete_entities(["Alice"]), held, deleted)
    assert reports[0].errors == []
    graph = knowledge.read_graph()
    assert [entity.name for entity in graph.entities] == ["Bob"]
    assert graph.relations == []
