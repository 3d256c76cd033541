"""Shared fixtures: a temporary database, a clock the test controls, and the service."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


class FakeClock:
    """A clock that only moves when the test says so."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 10, 25, 16, 20, tzinfo=UTC))


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memories.db"


@pytest.fixture
def settings(db_path: Path) -> Settings:
    # Keyword-only (embedder "none"): these tests pin the keyword engine, whose memories
    # are indexed at once. Semantic tests build their own settings with an embedder.
    # The rule-based graph extractor: tests that need spaCy carry the `spacy` marker.
    return Settings(db=db_path, synchronous="NORMAL", embedder="none", graph_extractor="rules")


@pytest.fixture
def service(settings: Settings, clock: FakeClock) -> Iterator[MemoryService]:
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened
