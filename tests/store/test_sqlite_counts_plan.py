"""SQLite counts a scope in one pass, reading the table through when it holds most rows.

``/v1/stats`` ran three ``GROUP BY`` queries and an expired count, each reaching the rows
by the namespace index (one random row read each): 1.7-2.2 s at 50,000 memories. The
statements the store runs are recorded here and their plans asked of SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.store.base import Scope
from recalld.store.factory import open_store
from recalld.store.sqlite import SQLiteStore
from tests.store.contract.conftest import NOW, record


def _grouping_plans(store: SQLiteStore, scope: Scope, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The query plans of the ``GROUP BY`` statements ``store.counts(scope)`` runs."""
    statements: list[tuple[str, Any]] = []
    read = store._read

    def recording(sql: str, params: Any) -> list[tuple[Any, ...]]:
        statements.append((sql, params))
        return read(sql, params)

    monkeypatch.setattr(store, "_read", recording)
    store.counts(scope)
    monkeypatch.undo()
    plans = []
    for sql, params in statements:
        if "GROUP BY" in sql:
            rows = store._read(f"EXPLAIN QUERY PLAN {sql}", params)
            plans.append(" | ".join(str(row[-1]) for row in rows))
    return plans


def _store(tmp_path: Path) -> SQLiteStore:
    store = open_store(Settings(db=tmp_path / "counts.db", embedder="none"))
    assert isinstance(store, SQLiteStore)
    with store.transaction() as tx:
        for number in range(40):
            tx.insert(record(id=f"d{number}", content=f"default {number}", category="fact"))
        tx.insert(record(id="s0", content="small", namespace="small"))
    return store


def test_sqlite_counts_group_once_and_scan_a_namespace_holding_most_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    try:
        plans = _grouping_plans(store, Scope(namespaces=["default"], now=NOW), monkeypatch)
        assert len(plans) == 1, plans  # category, kind and namespace in one pass
        assert "SCAN m" in plans[0], plans
        small = _grouping_plans(store, Scope(namespaces=["small"], now=NOW), monkeypatch)
        assert len(small) == 1, small
        assert "SEARCH m USING" in small[0], small  # a small share: by the index
    finally:
        store.close()
