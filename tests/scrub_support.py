"""A reader holding an old snapshot, which keeps a scrub pending (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import psycopg


@contextmanager
def old_snapshot(database: str | Path) -> Iterator[None]:
    """Another connection holding a read snapshot taken now, until the block ends
    (``database``: a PostgreSQL URL, or a SQLite file's path)."""
    if isinstance(database, str) and database.startswith(("postgresql://", "postgres://")):
        with psycopg.connect(database) as connection:
            connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            connection.execute("SELECT count(*) FROM memories").fetchone()
            yield
            connection.rollback()
        return
    reader = apsw.Connection(str(database))
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()
        yield
        reader.execute("ROLLBACK")
    finally:
        reader.close()
