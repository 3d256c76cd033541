"""No silent duplicates: the same content again (after whitespace normalisation) in the same
namespace, without a key, writes nothing and answers the stored memory's receipt."""

from __future__ import annotations

from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


@pytest.fixture
def settings(any_database: Path | str) -> Settings:
    """The keyword-only settings of tests/conftest.py, on SQLite and on PostgreSQL."""
    return Settings(db=any_database, synchronous="NORMAL", embedder="none", graph_extractor="rules")


def test_duplicate_content_returns_the_existing_receipt(service: MemoryService) -> None:
    first = service.remember("The staging database runs in Sydney", tags=["infra"])
    again = service.remember("  The staging   database runs\nin Sydney ")
    assert again.status == "duplicate"
    assert again.id == first.id
    assert service.stats().count == 1


def test_duplicate_is_per_namespace(service: MemoryService) -> None:
    first = service.remember("Deploys happen on Tuesdays")
    other = service.remember("Deploys happen on Tuesdays", namespace="elsewhere")
    assert other.status == "created"
    assert other.id != first.id


def test_different_text_is_not_a_duplicate(service: MemoryService) -> None:
    service.remember("Deploys happen on Tuesdays")
    assert service.remember("Deploys happen on Wednesdays").status == "created"


def test_keyed_write_is_an_upsert_not_a_duplicate(service: MemoryService) -> None:
    service.remember("Sydney")
    keyed = service.remember("Sydney", key="staging.region")
    assert keyed.status == "created"
    assert service.stats().count == 2


def test_duplicate_of_a_forgotten_memory_is_written_again(service: MemoryService) -> None:
    first = service.remember("Temporary note")
    service.forget(first.id)
    assert service.remember("Temporary note").status == "created"
