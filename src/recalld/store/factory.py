"""Opening the store the settings name (the one place that picks an implementation)."""

from __future__ import annotations

from recalld.config import Settings
from recalld.store.base import Store

__all__ = ["open_store"]


def open_store(settings: Settings) -> Store:
    """Open (creating and migrating if needed) the database ``settings.db``."""
    from recalld.store.sqlite import SQLiteStore

    return SQLiteStore(
        settings.db,
        synchronous=settings.synchronous,
        busy_timeout_ms=settings.busy_timeout_ms,
        lock_retry_seconds=settings.lock_retry_seconds,
        fts=settings.fts,
        reserve_bytes=settings.reserve_bytes,
    )
