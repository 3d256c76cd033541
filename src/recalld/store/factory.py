"""Opening the store the settings name (the one place that picks an implementation).

``settings.db`` is a file path (SQLite, the default) or a ``postgresql://``
URL (PostgreSQL with pgvector, for several servers on one database).
"""

from __future__ import annotations

from pathlib import Path

from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.store.base import Store

__all__ = ["open_store"]


def open_store(settings: Settings) -> Store:
    """Open (creating and migrating if needed) the database ``settings.db``."""
    if settings.uses_postgres:
        try:
            from recalld.store.postgres import PostgresStore
        except ImportError as error:
            raise ValidationError(
                "db",
                "a postgresql:// database needs the PostgreSQL driver:"
                f" pip install 'recalld[postgres]' ({error.name} is missing)",
            ) from None
        return PostgresStore.open(settings)
    from recalld.store.sqlite import SQLiteStore

    return SQLiteStore(
        Path(settings.db),
        synchronous=settings.synchronous,
        busy_timeout_ms=settings.busy_timeout_ms,
        lock_retry_seconds=settings.lock_retry_seconds,
        fts=settings.fts,
        reserve_bytes=settings.reserve_bytes,
    )
