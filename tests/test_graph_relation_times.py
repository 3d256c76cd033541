"""A relation's ``at`` is its source memories' ``at`` as they are now: an update that only
moves a memory in time moves its relations at once, without extracting it again. On both
stores."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def _relations(service: MemoryService) -> list[tuple[str, str, str, datetime | None]]:
    return [(r.subject, r.predicate, r.object, r.at) for r in service.graph.relations().relations]


def test_graph_relation_takes_its_memorys_new_at(service: MemoryService) -> None:
    anna = service.remember("Anna is a nurse.", at="2020-01-01T00:00:00Z")
    service.remember("Bob is a pilot.", at="2021-01-01T00:00:00Z")
    service.new_worker().run_until_idle()
    assert _relations(service) == [
        ("Anna", "is_a", "nurse", datetime(2020, 1, 1, tzinfo=UTC)),
        ("Bob", "is_a", "pilot", datetime(2021, 1, 1, tzinfo=UTC)),
    ]

    service.update(anna.id, at="2024-06-01T09:30:00+02:00")
    moved = [
        ("Anna", "is_a", "nurse", datetime(2024, 6, 1, 7, 30, tzinfo=UTC)),
        ("Bob", "is_a", "pilot", datetime(2021, 1, 1, tzinfo=UTC)),
    ]
    assert _relations(service) == moved  # at once, with no graph job queued
    status = service.status().graph
    assert status is not None
    assert status.jobs["queued"] == 0
    service.update(anna.id, at=None)
    assert _relations(service)[0] == ("Anna", "is_a", "nurse", None)
