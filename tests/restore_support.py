"""A backup restored under a running process, as the steps `recalld backup` prints do it:
the shared setup of the tests of a database replaced while servers run (pass c68)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService


def restore_under(db: Path, backup: Path | None = None) -> None:
    """Move ``db`` and its ``-wal``/``-shm`` to ``<db>.old…`` and copy ``backup`` in its
    place, while a process may still have the file open; without ``backup``, an empty
    database made beside ``db`` (``backup.db``) is the copy restored."""
    if backup is None:
        backup = db.with_name("backup.db")
        with MemoryService.open(Settings(db=backup, embedder="none", graph_extractor="none")):
            pass
    os.rename(db, f"{db}.old")
    for suffix in ("-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            os.rename(f"{db}{suffix}", f"{db}.old{suffix}")
    shutil.copyfile(backup, db)
