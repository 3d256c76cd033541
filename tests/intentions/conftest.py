"""Fixtures for the intention stories: a service on a fake clock, and places around Paris."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock

PHARMACY = {"lat": 48.85300, "lon": 2.34900}
AT_THE_DOOR = {"lat": 48.85330, "lon": 2.34910}  # ~34 m from the pharmacy
DOWN_THE_STREET = {"lat": 48.85570, "lon": 2.34900}  # ~300 m north


@pytest.fixture
def clock() -> FakeClock:
    # Thursday 22 October 2026, 06:00 UTC = 08:00 in Paris (CEST, +02:00);
    # Paris leaves summer time on Sunday 25 October at 03:00.
    return FakeClock(datetime(2026, 10, 22, 6, 0, tzinfo=UTC))


@pytest.fixture
def memory(db_path: Path, clock: FakeClock) -> Iterator[MemoryService]:
    settings = Settings(
        db=db_path,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        zone="Europe/Paris",
    )
    with MemoryService.open(settings, clock=clock) as service:
        yield service


@pytest.fixture
def shared_settings(any_database: Path | str) -> Settings:
    """The stories' settings on each store (SQLite, then PostgreSQL with ``--postgres``)."""
    return Settings(
        db=any_database,
        synchronous="NORMAL",
        embedder="none",
        graph_extractor="rules",
        zone="Europe/Paris",
    )
