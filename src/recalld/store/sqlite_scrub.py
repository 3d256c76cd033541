"""Leaving no trace on disk: pending scrubs, the bounded checkpoint, the disk-full reserve.

With ``secure_delete`` (and FTS5's ``secure-delete``) a write that drops
content zeroes it in the pages it rewrites, but those pages live in the
write-ahead log until a checkpoint copies them over the database file, and
older log frames still hold the content until the log is truncated. So every
content-dropping write (forget, key overwrite, update, core-memory remove or
patch, TTL purge) records a *pending scrub* in its own transaction, and the
scrub is the checkpoint ``TRUNCATE`` that ends it:

- :func:`scrub` waits for readers at most ``wait_seconds`` (a reader on an
  older snapshot keeps the checkpoint from finishing, and while it waits new
  writers wait too, so the bound matters); when it completes, every pending
  scrub recorded before it began is done and its row is deleted;
- a pending row outlives a crash, so any process that opens the database
  later finishes the job (see :mod:`recalld.scrubbing`).

The *reserve* is a small file of zeros beside the database: when the disk is
full, releasing it makes room for a forget (which needs a few pages of log) so
that space can be freed at all; it is re-created when there is room again.
"""

from __future__ import annotations

import logging
import os
import shutil
from datetime import datetime
from pathlib import Path

import apsw

from recalld._time import to_storage
from recalld.store.file_modes import mode_beside
from recalld.store.sqlite_connection import SQLiteDatabase

__all__ = ["SQLiteScrub", "record_drop"]

logger = logging.getLogger(__name__)

# The reserve is (re-)created only when the disk has at least this many times its size free.
RESERVE_HEADROOM = 2


def record_drop(connection: apsw.Connection, reason: str, now: datetime) -> None:
    """Record, inside the caller's write transaction, that content left the database."""
    connection.execute(
        "INSERT INTO pending_scrubs(reason, recorded_at) VALUES (?, ?)", (reason, to_storage(now))
    )


class SQLiteScrub:
    """Scrubbing and the disk-full reserve of one SQLite database."""

    def __init__(self, database: SQLiteDatabase, reserve_bytes: int) -> None:
        self._database = database
        self._reserve_bytes = reserve_bytes
        in_memory = database.in_memory
        self._reserve = (
            None if in_memory or reserve_bytes <= 0 else Path(f"{database.path}-reserve")
        )

    def pending(self) -> int:
        """How many content-dropping writes still wait for their scrub (any process's)."""
        rows = self._database.read("SELECT count(*) FROM pending_scrubs")
        return int(rows[0][0])

    def scrub(self, wait_seconds: float) -> bool:
        """Checkpoint and truncate the log, waiting for readers at most ``wait_seconds``.

        Returns whether every scrub pending when it began is now done (also when
        another process's checkpoint did the work meanwhile).
        """
        database = self._database
        if database.logs_replaced():
            # Its checkpoint would fold a log no longer the database's over others' writes.
            logger.warning("not checkpointing %s: its -wal or -shm was replaced", database.path)
            return False
        rows = database.read("SELECT coalesce(max(id), 0) FROM pending_scrubs")
        mark = int(rows[0][0])
        with database.use() as connection:
            connection.set_busy_timeout(max(0, int(wait_seconds * 1000)))
            try:
                row = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finished = row is not None and row[0] == 0
            except apsw.BusyError:
                finished = False
            except apsw.Error as error:
                logger.warning("could not checkpoint %s: %s", database.path, error)
                finished = False
            finally:
                connection.set_busy_timeout(database.busy_timeout_ms)
        database.note_written()
        if finished:
            if mark:
                try:
                    database.write(
                        lambda connection: connection.execute(
                            "DELETE FROM pending_scrubs WHERE id <= ?", (mark,)
                        )
                    )
                except Exception as error:  # noqa: BLE001 - the rows are retried, not lost
                    logger.warning("scrubbed, but could not clear the pending rows: %s", error)
            self.ensure_reserve()
            return True
        left = database.read("SELECT count(*) FROM pending_scrubs WHERE id <= ?", (mark,))
        return int(left[0][0]) == 0

    def ensure_reserve(self) -> None:
        """Create the reserve file when it is missing and the disk has room to spare."""
        reserve = self._reserve
        if reserve is None or reserve.exists():
            return
        try:
            free = shutil.disk_usage(reserve.parent).free
            if free < RESERVE_HEADROOM * self._reserve_bytes:
                return
            # The database file's mode: a reserve is zeros, but a world-readable file
            # beside a private database says the directory is open to others.
            descriptor = os.open(
                reserve,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                mode_beside(self._database.path),
            )
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(b"\0" * self._reserve_bytes)
        except FileExistsError:
            return  # another process made it a moment ago: it is theirs to fill
        except OSError as error:
            logger.warning("could not create the disk-full reserve %s: %s", reserve, error)
            reserve.unlink(missing_ok=True)

    def release_reserve(self) -> bool:
        """Delete the reserve file to make room on a full disk; whether there was one."""
        reserve = self._reserve
        if reserve is None or not reserve.exists():
            return False
        try:
            os.unlink(reserve)
        except OSError as error:
            logger.warning("could not release the disk-full reserve %s: %s", reserve, error)
            return False
        logger.warning("the disk is full: released the reserve %s to make room", reserve)
        return True
