"""Opening the store the settings name (the one place that picks an implementation).

``settings.db`` is a file path (SQLite, the default) or a ``postgresql://``
URL (PostgreSQL with pgvector, for several servers on one database).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from recalld.config import Settings, default_db_path
from recalld.errors import ValidationError
from recalld.store.base import Store

__all__ = ["open_store"]


def open_store(
    settings: Settings, *, on_migration: Callable[[int, int], None] | None = None
) -> Store:
    """Open (creating and migrating if needed) the database ``settings.db``.

    Only the default data directory is created when missing: anywhere else a
    missing directory is most likely a mistyped ``--db``, and an error says so.
    ``on_migration(done, total)`` follows pending migrations (progress bars),
    on either store.
    """
    if settings.uses_postgres:
        try:
            from recalld.store.postgres import PostgresStore
        except ImportError as error:
            raise ValidationError(
                "db",
                "a postgresql:// database needs the PostgreSQL driver:"
                f" pip install 'recalld[postgres]' ({error.name} is missing)",
            ) from None
        return PostgresStore.open(settings, on_migration=on_migration)
    from recalld.store.sqlite import SQLiteStore

    return SQLiteStore(
        Path(settings.db),
        synchronous=settings.synchronous,
        busy_timeout_ms=settings.busy_timeout_ms,
        lock_retry_seconds=settings.lock_retry_seconds,
        fts=settings.fts,
        reserve_bytes=settings.reserve_bytes,
        create_directory=_in_default_directory(settings),
        on_migration=on_migration,
    )


def _in_default_directory(settings: Settings) -> bool:
    # As given, not expanded: SQLite opens "~/.local/share/recalld/recalld.db" (from an
    # MCP client's JSON, which no shell expands) as a path under a directory named "~" in
    # the working directory, which was created there, with a new empty memory in it.
    try:
        default = default_db_path().parent
    except ValidationError:
        return False  # no home, so no default directory (settings.db was given)
    try:
        return Path(settings.db).absolute().parent == default.absolute()
    except OSError:
        return False
