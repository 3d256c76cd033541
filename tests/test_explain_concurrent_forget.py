"""Explain while another process forgets the memory: a 404 naming the memory, never a 500.

Explain reads the memory, then builds the query's candidate pool in a second read. With
several processes on one database (PostgreSQL behind a load balancer, or two processes on
one SQLite file) a `forget` can commit between the two; the second service here stands
for that other process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.errors import NotFoundError
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="none")


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_explain_of_a_memory_forgotten_meanwhile_is_not_found(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    with MemoryService.open(settings) as explaining, MemoryService.open(settings) as other:
        written = explaining.remember("The staging database lives in the Melbourne region")
        retriever = explaining.indexing.retriever
        build_pool = retriever.pool

        def forgotten_first(*arguments: Any, **options: Any) -> Any:
            assert other.forget(written.id).deleted
            return build_pool(*arguments, **options)

        monkeypatch.setattr(retriever, "pool", forgotten_first)
        with pytest.raises(NotFoundError) as caught:
            explaining.explain("staging database", written.id, mode=mode)  # type: ignore[arg-type]
        assert written.id in str(caught.value)
        assert "forgotten" in str(caught.value)
