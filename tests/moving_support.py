"""What the ``recalld migrate`` tests share: the settings both databases open with, a copy
from one to the other through the library, and a target on SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.moving import CopyReport, copy_store
from recalld.store.factory import open_store


def moving_settings(db: Path | str) -> Settings:
    """A database with vectors (the hashing embedder) and extracted entities, and no
    embedding on recall (what a copy brings is what the tests look at)."""
    return Settings(
        db=db, synchronous="NORMAL", embedder="hashing", graph_extractor="rules", recall_catch_up=0
    )


def copy_between(source: Path | str, target: Path | str, **options: Any) -> CopyReport:
    """``copy_store`` from ``source`` to ``target``, each opened and closed around it."""
    source_store = open_store(moving_settings(source))
    target_store = open_store(moving_settings(target))
    try:
        return copy_store(source_store, target_store, **options)
    finally:
        source_store.close()
        target_store.close()


def target_database(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """For a fixture parametrized ``sqlite``/``postgres``: the target database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return tmp_path / "target.db"
