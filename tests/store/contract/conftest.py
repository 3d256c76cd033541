"""The ``store`` fixture: one fresh database per test, for each store kind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.store.base import MemoryRecord, Store
from recalld.store.factory import open_store

STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]
NOW = datetime(2026, 10, 25, 16, 20, tzinfo=UTC)

OpenStore = Callable[[], Store]


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def database(store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Where this test's database is: a file, or a fresh PostgreSQL database."""
    if store_kind == "postgres":
        url: str = request.getfixturevalue("postgres_url")
        return url
    return tmp_path / "contract.db"


@pytest.fixture
def store_settings(database: str | Path) -> Settings:
    return Settings(db=database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


@pytest.fixture
def open_another(store_settings: Settings) -> Iterator[OpenStore]:
    """Open more stores on the same database (another process, another server)."""
    opened: list[Store] = []

    def open_one() -> Store:
        store = open_store(store_settings)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(open_another: OpenStore) -> Store:
    return open_another()


def record(**fields: Any) -> MemoryRecord:
    """A memory record with the defaults a test does not care about."""
    values: dict[str, Any] = {
        "id": f"m-{fields.get('content', 'x')[:20]}-{id(fields)}",
        "namespace": "default",
        "content": "a memory",
        "created_at": NOW,
        "updated_at": NOW,
        "index_state": "indexed",
    }
    values.update(fields)
    return MemoryRecord(**values)
