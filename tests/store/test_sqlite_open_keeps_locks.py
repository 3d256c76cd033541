"""Opening a second store on a database this process has open keeps SQLite's locks on it
(adversarial pass d69): the header check read the file with a descriptor of its own, and
closing it dropped every POSIX lock the process held on the file, its open connections'
too, so another process could take itself for the only one using the database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from recalld.config import Settings
from recalld.service import MemoryService

# Whether SQLite's SHARED lock range on the database file (PENDING_BYTE + 2, 510 bytes)
# is held by another process: a write lock on it cannot be taken then.
PROBE = """
import fcntl, os, sys
descriptor = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000000 + 2)
except OSError:
    print("held")
else:
    print("free")
"""


def _shared_lock(db: Path) -> str:
    probed = subprocess.run(
        [sys.executable, "-c", PROBE, str(db)], capture_output=True, text=True, check=True
    )
    return probed.stdout.strip()


def test_sqlite_store_opened_twice_keeps_the_first_ones_locks(tmp_path: Path) -> None:
    db = tmp_path / "memories.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as first:
        first.remember("held open")
        assert _shared_lock(db) == "held"
        with MemoryService.open(settings) as second:
            assert second.stats().count == 1
        assert _shared_lock(db) == "held"
        assert first.stats().count == 1
