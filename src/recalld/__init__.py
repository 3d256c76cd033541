"""recalld: long-term memory for AI agents, in one SQLite file.

>>> import recalld
>>> with recalld.open("memories.db") as memory:  # doctest: +SKIP
...     memory.remember("The staging DB is in Melbourne", key="staging.region")
...     hits = memory.recall("where is staging?")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recalld._version import __version__
from recalld.config import Settings
from recalld.errors import (
    ConflictError,
    NotFoundError,
    RecalldError,
    StorageError,
    ValidationError,
)
from recalld.intentions import Intention
from recalld.model import (
    Explanation,
    Filters,
    Hit,
    ImportReport,
    Memory,
    Page,
    Place,
    Receipt,
    Stats,
)
from recalld.service import MemoryService

__all__ = [
    "ConflictError",
    "Explanation",
    "Filters",
    "Hit",
    "ImportReport",
    "Intention",
    "Memory",
    "MemoryService",
    "NotFoundError",
    "Page",
    "Place",
    "RecalldError",
    "Receipt",
    "Settings",
    "Stats",
    "StorageError",
    "ValidationError",
    "__version__",
    "open",
]


def open(db: str | Path | None = None, **settings: Any) -> MemoryService:
    """Open a memory database (default: ``recalld.db`` in the user data directory).

    ``db`` is a SQLite file path or a ``postgresql://`` URL (PostgreSQL with pgvector).

    Keyword arguments are :class:`Settings` fields (``namespace``, ``synchronous`` ...).
    """
    if db is not None:
        settings["db"] = db
    return MemoryService.open(Settings(**settings))
