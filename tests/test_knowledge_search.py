"""``search_nodes`` matches what ``read_graph`` shows as an entity's observations: its
declared observations and the lines of the newest live memories written elsewhere that
mention it (their title and content), within the namespace; an expired or forgotten
memory's line matches nothing. On both stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.knowledge import MENTIONS_AS_OBSERVATIONS
from recalld.service import MemoryService
from tests.conftest import FakeClock

ADOPTED = "Caroline: I adopted a dog named Biscuit."


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    # No purge while a test runs: the reads alone must hide what expired.
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        purge_interval_seconds=3600,
    )


def _found(service: MemoryService, query: str, namespace: str | None = None) -> list[str]:
    """The names ``search_nodes`` answers, each checked against the observations it shows:
    an entity is found for what its node says (name, type or an observation line)."""
    page = service.knowledge.search_nodes(query, namespace=namespace)
    lowered = query.lower()
    for entity in page.entities:
        said = [entity.name, entity.entity_type, *entity.observations]
        assert any(lowered in text.lower() for text in said), (entity, query)
    return [entity.name for entity in page.entities]


def test_knowledge_search_nodes_matches_an_extracted_entitys_mention_lines(
    service: MemoryService,
) -> None:
    service.remember(ADOPTED)
    service.remember("Quarterly report", title="Caroline's ledger")
    service.new_worker().run_until_idle()
    [caroline] = service.knowledge.open_nodes(["Caroline"]).entities
    assert any("adopted" in line for line in caroline.observations)
    assert "Caroline" in _found(service, "ADOPTED")
    assert "Caroline" in _found(service, "ledger")  # a title is part of the line
    assert _found(service, "nothing like it") == []


def test_knowledge_search_nodes_reads_mention_lines_through_the_wider_pattern(
    service: MemoryService,
) -> None:
    # A query holding a sigma is checked candidate by candidate (recalld.graph.matching):
    # the mention lines are among what is checked.
    service.remember("Caroline ordered σουβλάκι for lunch.")
    service.new_worker().run_until_idle()
    assert "Caroline" in _found(service, "ΣΟΥΒΛΆΚΙ")
    assert "Caroline" in _found(service, "σουβλάκι")


def test_knowledge_search_nodes_mention_lines_stay_in_their_namespace(
    service: MemoryService,
) -> None:
    service.remember(ADOPTED, namespace="alice")
    service.remember("Caroline likes green tea.", namespace="bob")
    service.new_worker().run_until_idle()
    assert "Caroline" in _found(service, "adopted", namespace="alice")
    assert _found(service, "adopted", namespace="bob") == []
    assert _found(service, "green tea", namespace="alice") == []


def test_knowledge_search_nodes_skips_expired_and_forgotten_mention_lines(
    service: MemoryService, clock: FakeClock
) -> None:
    service.remember(ADOPTED, ttl_seconds=5)
    forgotten = service.remember("Caroline sold her piano.")
    service.remember("Caroline likes green tea.")
    service.new_worker().run_until_idle()
    assert "Caroline" in _found(service, "adopted")
    assert "Caroline" in _found(service, "piano")

    assert service.forget(forgotten.id).deleted
    clock.advance(6)
    assert _found(service, "adopted") == []
    assert _found(service, "piano") == []
    assert _found(service, "green tea") == ["Caroline"]  # still shown, by a live memory


def test_knowledge_search_nodes_matches_only_the_lines_it_shows(
    service: MemoryService, clock: FakeClock
) -> None:
    # Only the newest memories mentioning an entity are its observation lines (as
    # read_graph shows them): an older one's words find nothing there.
    service.remember("Caroline found a fossil.")
    for number in range(MENTIONS_AS_OBSERVATIONS):
        clock.advance(1)
        service.remember(f"Caroline walked {number + 1} miles.")
    service.new_worker().run_until_idle()
    [caroline] = service.knowledge.open_nodes(["Caroline"]).entities
    assert not any("fossil" in line for line in caroline.observations)
    assert _found(service, "fossil") == []
    assert "Caroline" in _found(service, "miles")


def test_knowledge_search_nodes_ignores_another_entitys_observations_as_lines(
    service: MemoryService,
) -> None:
    # An observation is its own entity's: it mentions Caroline, but is no line of hers.
    service.knowledge.create_entities(
        [{"name": "Hilde", "entityType": "person", "observations": ["Argues with Caroline"]}]
    )
    service.remember("Caroline likes green tea.")
    service.new_worker().run_until_idle()
    assert _found(service, "argues") == ["Hilde"]
