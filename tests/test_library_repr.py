"""A service's repr names its database and namespace (it was only an object address)."""

from __future__ import annotations

from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService


def test_repr_names_the_database_and_namespace(db_path: Path) -> None:
    service = MemoryService.open(Settings(db=db_path, embedder="none", namespace="agent-7"))
    assert repr(service) == f"MemoryService(SQLiteStore({str(db_path)!r}), namespace='agent-7')"
    service.close()
    assert repr(service).endswith("namespace='agent-7', closed)")
