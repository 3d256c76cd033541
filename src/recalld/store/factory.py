"""Opening the store the settings name (the one place that picks an implementation)."""

from __future__ import annotations

from collections.abc import Callable

from recalld.config import Settings, default_db_path
from recalld.store.base import Store

__all__ = ["open_store"]


def open_store(
    settings: Settings, *, on_migration: Callable[[int, int], None] | None = None
) -> Store:
    """Open (creating and migrating if needed) the database ``settings.db``.

    Only the default data directory is created when missing: anywhere else a
    missing directory is most likely a mistyped ``--db``, and an error says so.
    ``on_migration(done, total)`` follows pending migrations (progress bars).
    """
    from recalld.store.sqlite import SQLiteStore

    return SQLiteStore(
        settings.db,
        synchronous=settings.synchronous,
        busy_timeout_ms=settings.busy_timeout_ms,
        lock_retry_seconds=settings.lock_retry_seconds,
        fts=settings.fts,
        reserve_bytes=settings.reserve_bytes,
        create_directory=_in_default_directory(settings),
        on_migration=on_migration,
    )


def _in_default_directory(settings: Settings) -> bool:
    default = default_db_path().parent
    try:
        return settings.db.expanduser().absolute().parent == default.absolute()
    except OSError:
        return False
