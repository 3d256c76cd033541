"""Shared fixtures: a temporary database, a clock the test controls, and the service.

Two fixtures apply to every test: the environment holds no ``RECALLD_*`` variable
(so a developer's settings cannot change a result, in this process or in the
servers it starts), and every :class:`MemoryService` a test opens is closed by
the end of it (a test that leaves one open fails, after it is closed for it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

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


@pytest.fixture(autouse=True)
def _no_recalld_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("RECALLD_"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _every_service_closed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    opened: list[MemoryService] = []
    initialise = MemoryService.__init__

    def tracked(self: MemoryService, *arguments: Any, **options: Any) -> None:
        initialise(self, *arguments, **options)
        opened.append(self)

    monkeypatch.setattr(MemoryService, "__init__", tracked)
    yield
    left_open = [service for service in opened if not service.closed]
    for service in left_open:
        service.close()
    assert not left_open, f"the test left {len(left_open)} MemoryService(s) open"


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
