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
