"""The fixture the knowledge tests share: a service on each store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def any_service(any_database: Path | str, clock: FakeClock) -> Iterator[MemoryService]:
    """A service on each store (SQLite, then PostgreSQL with ``pytest --postgres``)."""
    settings = Settings(
        db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules"
    )
    with MemoryService.open(settings, clock=clock) as opened:
        yield opened
