"""A service's repr names its database and namespace (it was only an object address);
pickling or copying one is refused with what to do instead."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest

from recalld.config import Settings
from recalld.service import MemoryService


def test_repr_names_the_database_and_namespace(db_path: Path) -> None:
    service = MemoryService.open(Settings(db=db_path, embedder="none", namespace="agent-7"))
    assert repr(service) == f"MemoryService(SQLiteStore({str(db_path)!r}), namespace='agent-7')"
    service.close()
    assert repr(service).endswith("namespace='agent-7', closed)")


@pytest.mark.parametrize("how", [pickle.dumps, copy.copy, copy.deepcopy])
def test_a_service_is_not_pickled_or_copied(service: MemoryService, how: Any) -> None:
    with pytest.raises(TypeError, match=r"open it where it is used \(recalld.open\(path\)\)"):
        how(service)
    assert service.remember("still open").status == "created"
