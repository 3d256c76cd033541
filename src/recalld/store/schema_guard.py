"""The refusal of a database a newer recalld migrated (both stores).

Each store checks the versions it read before migrating, and again inside every
migration's transaction, under the lock that serialises migrations: a process of a
newer recalld may migrate the database between the first read and the lock (a rolling
upgrade of several servers), and one that went on found every migration it knows
applied and opened a schema it does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from recalld.errors import StorageError

__all__ = ["newer_schema_error", "refuse_newer_schema"]


def refuse_newer_schema(location: object, execute: Callable[[str], Any], known: int) -> None:
    """Raise :class:`StorageError` naming both versions when ``schema_migrations`` (read
    through ``execute``) records a migration newer than the ``known`` ones."""
    row = execute("SELECT max(version) FROM schema_migrations").fetchone()
    newest = None if row is None else row[0]
    if newest is not None and int(newest) > known:
        raise newer_schema_error(location, int(newest), known)


def newer_schema_error(location: object, newest: int, known: int) -> StorageError:
    """The error for a database at schema ``newest`` opened by a recalld that knows up to
    ``known``: what to do is upgrade recalld (nothing in the database changed)."""
    return StorageError(
        f"{location} was written by a newer recalld (schema {newest}; this one knows"
        f" up to {known}): upgrade recalld to open it"
    )
