"""recalld: long-term memory for AI agents, in one SQLite file.

>>> import recalld
>>> with recalld.open("memories.db") as memory:  # doctest: +SKIP
...     memory.remember("The staging DB is in Melbourne", key="staging.region")
...     hits = memory.recall("where is staging?")

The names below are imported on first use (PEP 562), so ``import recalld`` and
commands such as ``recalld --version`` do not pay for the whole engine.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recalld._version import __version__

if TYPE_CHECKING:
    from recalld.config import Settings
    from recalld.errors import (
        ConflictError,
        DiskFullError,
        EmbeddingError,
        NotFoundError,
        PreconditionFailedError,
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
    "DiskFullError",
    "EmbeddingError",
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
    "PreconditionFailedError",
    "RecalldError",
    "Receipt",
    "Settings",
    "Stats",
    "StorageError",
    "ValidationError",
    "__version__",
    "open",
]

# Where each lazily imported public name lives.
_LAZY = {
    "Settings": "recalld.config",
    "ConflictError": "recalld.errors",
    "DiskFullError": "recalld.errors",
    "EmbeddingError": "recalld.errors",
    "NotFoundError": "recalld.errors",
    "PreconditionFailedError": "recalld.errors",
    "RecalldError": "recalld.errors",
    "StorageError": "recalld.errors",
    "ValidationError": "recalld.errors",
    "Intention": "recalld.intentions",
    "Explanation": "recalld.model",
    "Filters": "recalld.model",
    "Hit": "recalld.model",
    "ImportReport": "recalld.model",
    "Memory": "recalld.model",
    "Page": "recalld.model",
    "Place": "recalld.model",
    "Receipt": "recalld.model",
    "Stats": "recalld.model",
    "MemoryService": "recalld.service",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'recalld' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def open(db: str | Path | None = None, **settings: Any) -> MemoryService:
    """Open a memory database (default: ``recalld.db`` in the user data directory).

    ``db`` is a SQLite file path or a ``postgresql://`` URL (PostgreSQL with pgvector).

    Keyword arguments are :class:`Settings` fields (``namespace``, ``synchronous`` ...).
    """
    from recalld.config import Settings, refuse_unknown_settings
    from recalld.service import MemoryService

    # A typo would otherwise be ignored, and the default used without a word; refused as
    # Settings refuses it (naming the closest setting), before the environment is read.
    refuse_unknown_settings(settings)
    if db is not None:
        settings["db"] = db
    import logging

    from recalld.config import unknown_variables

    # A typo would otherwise leave the default silently; each named once a process.
    for line in unknown_variables(once=True):
        logging.getLogger(__name__).warning("%s", line)
    # Settings raises recalld's ValidationError, naming the setting.
    return MemoryService.open(Settings(**settings))
