"""RECALLD_MAX_LIMIT below a default: the default follows the cap, a limit given above it is
refused (a default is not the caller's input)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.recollection import Cue
from recalld.service import MemoryService
from tests.conftest import FakeClock

CAP = 3


@pytest.fixture
def capped(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        max_limit=CAP,
    )
    with MemoryService.open(settings, clock=clock) as opened:
        for index in range(CAP + 2):
            opened.remember(f"Alice met Bob in Paris, visit {index}")
            clock.advance(1)
        opened.knowledge.create_entities(
            [{"name": f"place {index}", "entityType": "place"} for index in range(CAP + 2)]
        )
        yield opened


# (a call without a count, the same call with one above the cap, how many the first returns)
DEFAULTED: dict[str, tuple[Callable[[MemoryService], Any], Callable[[MemoryService], Any]]] = {
    "search": (lambda s: s.search("Alice"), lambda s: s.search("Alice", limit=CAP + 1)),
    "recall": (lambda s: s.recall("Alice"), lambda s: s.recall("Alice", limit=CAP + 1)),
    "list_memories": (
        lambda s: s.list_memories().memories,
        lambda s: s.list_memories(limit=CAP + 1),
    ),
    "recent": (lambda s: s.recent().memories, lambda s: s.recent(limit=CAP + 1)),
    "context recall": (
        lambda s: s.recollections.recall(Cue(text="Alice")),
        lambda s: s.recollections.recall(Cue(text="Alice"), k=CAP + 1),
    ),
    "graph entities": (
        lambda s: s.graph.entities().entities,
        lambda s: s.graph.entities(limit=CAP + 1),
    ),
    "read_graph": (
        lambda s: s.knowledge.read_graph().entities,
        lambda s: s.knowledge.read_graph(limit=CAP + 1),
    ),
}


@pytest.mark.parametrize("name", list(DEFAULTED))
def test_limit_default_held_to_a_lower_cap(capped: MemoryService, name: str) -> None:
    without, above = DEFAULTED[name]
    assert len(without(capped)) == CAP
    with pytest.raises(ValidationError) as refused:
        above(capped)
    assert refused.value.field in ("limit", "k")
    assert f"must be between 1 and {CAP}, got {CAP + 1}" in str(refused.value)


def test_limit_default_of_every_other_listing_held_to_a_lower_cap(
    capped: MemoryService,
) -> None:
    # Nothing to return here, but each used to refuse its own default (50, 100, 200, 1000).
    memory = capped.list_memories(limit=1).memories[0]
    assert capped.explain("Alice", memory.id).stage
    assert capped.recollections.pending(drain=False) == []
    assert capped.recollections.pending() == []
    assert capped.graph.relations().relations == []
    assert capped.graph.entity("place 0").entity.name == "place 0"
    assert capped.graph.neighbourhood("place 0").entity.name == "place 0"
    assert capped.conversations.turns("chat://none") == []
    assert [turn.id for turn in capped.turns(memory.id)] == [memory.id]
    with pytest.raises(ValidationError, match=f"must be between 1 and {CAP}, got {CAP + 1}"):
        capped.recollections.pending(limit=CAP + 1)
    with pytest.raises(ValidationError, match=f"must be between 1 and {CAP}, got {CAP + 1}"):
        capped.graph.relations(limit=CAP + 1)


def test_limit_default_unchanged_under_the_default_cap(service: MemoryService) -> None:
    for index in range(12):
        service.remember(f"note number {index}")
    assert len(service.recent().memories) == 10
    assert len(service.list_memories().memories) == 12
