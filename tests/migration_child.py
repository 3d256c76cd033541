"""A process killed in the middle of a migration, for the interrupted-upgrade test.

Run as ``python -m tests.migration_child DB MARKER``: it opens DB, whose last migration
is pending; that migration does all its work, then MARKER is written and the process
blocks (its transaction still open, nothing committed) until the parent kills it -9.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from recalld.store.migrations import MIGRATIONS
from recalld.store.sqlite import SQLiteStore


def main() -> None:
    """Open the database with its last migration made to hang before its commit."""
    database, marker = Path(sys.argv[1]), Path(sys.argv[2])
    last = MIGRATIONS[-1]

    def hanging(execute: object) -> None:
        last(execute)  # type: ignore[arg-type]
        # Written beside the marker, then renamed: the parent never finds it empty.
        partial = marker.with_name(marker.name + ".partial")
        partial.write_text(str(len(MIGRATIONS)))
        partial.replace(marker)
        threading.Event().wait()

    MIGRATIONS[-1] = hanging
    SQLiteStore(database)
    raise AssertionError("unreachable: the migration hangs until the process is killed")


if __name__ == "__main__":
    main()
