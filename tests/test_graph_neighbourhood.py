"""A neighbourhood's co-mentioned entities come in one order on both stores: most
memories first, then by name (the stores list a memory's mentions in no set order)."""

from __future__ import annotations

from pathlib import Path

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
