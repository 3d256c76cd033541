"""Putting a backup in place of an SQLite database: ``recalld restore BACKUP``.

The steps `recalld backup` prints, done so that nothing is half done: the backup is
checked (a recalld database, beside no log of its own) and copied to a temporary file
beside the database, fsynced; only then is the database moved to ``<db>.old`` with its
``-wal`` as ``<db>.old-wal`` (after a crash that log holds its newest writes: the two go
together, and an earlier restore's ``<db>.old-wal`` goes first, as SQLite would read it
as the new ``<db>.old``'s log), its ``-shm`` removed (an index SQLite rebuilds), and the
copy renamed into place. A copy put beside the old ``-wal`` (``cp backup.db db``) was
read through it, the restore silently undone (adversarial pass d69).

It refuses while a process has the database open: SQLite holds a read lock on one byte
of the ``-shm`` (its "dead man switch", byte 128) for as long as a connection is open,
so a lock that cannot be taken there means one is; such a process would go on reading
and writing the moved file, and its checkpoint could write the old log into the copy.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from recalld.errors import DiskFullError, StorageError
from recalld.store.sqlite_file import check_path, database_file
from recalld.store.sqlite_wal import committed_frames

__all__ = ["DatabaseInUseError", "RestoreResult", "restore_database"]

# SQLite's WAL-index "dead man switch": each connection holds a read lock on this byte of
# the -shm while it is open (WALINDEX_LOCK_OFFSET 120 + SQLITE_SHM_NLOCK 8, os_unix.c).
_SHM_DEAD_MAN_SWITCH = 128


class DatabaseInUseError(StorageError):
    """A process has the database open: nothing was restored."""


@dataclass(frozen=True)
class RestoreResult:
    """What :func:`restore_database` did: the database now holds ``backup``'s copy; what it
    held before is at ``old`` (None if there was no database), its log at ``old_log``."""

    database: Path
    backup: Path
    old: Path | None
    old_log: Path | None


def restore_database(backup: Path, database: Path) -> RestoreResult:
    """Put a copy of ``backup`` in place of ``database`` (see the module docstring)."""
    if not backup.is_file():
        raise StorageError(f"{backup} is not a file; give the backup's path")
    if database_file(database, backup):
        raise StorageError(
            f"{backup} is the database itself or one of its own files; give the backup's path"
        )
    check_path(backup, create_directory=False)  # a recalld database, beside no foreign log
    _refuse_a_database_in_use(backup)
    if not database.parent.is_dir():
        raise StorageError(f"the directory {database.parent} does not exist")
    real = Path(os.path.realpath(database))
    wal, shm = Path(f"{real}-wal"), Path(f"{real}-shm")
    refuse_open(database, shm)
    partial = _copy_beside(backup, real)
    try:
        old: Path | None = None
        old_log: Path | None = None
        if os.path.lexists(real):
            old = Path(f"{real}.old")
            for stale in (Path(f"{old}-wal"), Path(f"{old}-shm")):
                stale.unlink(missing_ok=True)
            os.replace(real, old)
            if wal.exists():
                old_log = Path(f"{old}-wal")
                os.replace(wal, old_log)
            shm.unlink(missing_ok=True)
        os.replace(partial, real)
        _sync_directory(real.parent)
    except OSError as error:
        raise StorageError(f"the restore of {database} failed: {error}") from error
    finally:
        partial.unlink(missing_ok=True)
    return RestoreResult(database=database, backup=backup, old=old, old_log=old_log)


def _refuse_a_database_in_use(backup: Path) -> None:
    """Refuse a "backup" that is itself a database in use: opened as one (``--db``), its
    newest writes live in its ``-wal`` until a checkpoint, and a copy of the file alone
    would silently restore an older state of it."""
    real = Path(os.path.realpath(backup))
    refuse_open(backup, Path(f"{real}-shm"))
    if committed_frames(Path(f"{real}-wal")) > 0:
        raise StorageError(
            f"{backup} has writes in its {real.name}-wal (it was opened as a database, and"
            " not closed cleanly since): a copy of the file alone would miss them, so"
            f" nothing was changed. Take a backup of it first: recalld --db {backup} backup"
            " NEW, then restore NEW"
        )


def refuse_open(database: Path, shm: Path) -> None:
    """Raise :class:`DatabaseInUseError` if a process has ``database`` open (it holds the
    read lock on the ``-shm``'s dead man switch); none holds a ``-shm`` a crash left."""
    try:
        descriptor = os.open(shm, os.O_RDWR)
    except FileNotFoundError:
        return  # SQLite removes it when the last connection closes: none is open
    except OSError as error:
        raise StorageError(f"cannot tell whether {database} is in use: {error}") from error
    try:
        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _SHM_DEAD_MAN_SWITCH)
    except OSError as error:
        if error.errno not in (errno.EACCES, errno.EAGAIN):
            raise StorageError(f"cannot tell whether {database} is in use: {error}") from error
        raise DatabaseInUseError(
            f"{database} is open in another process (a server, a worker, an MCP client's"
            " recalld): stop every recalld process using it, then restore; nothing was"
            " changed (a process left running would go on using the old file, and could"
            " write its log into the restored one)"
        ) from None
    finally:
        os.close(descriptor)  # this process has no connection to it: no lock of SQLite's


def _copy_beside(backup: Path, real: Path) -> Path:
    """``backup`` copied to a new temporary file beside ``real``, fsynced."""
    try:
        handle, name = tempfile.mkstemp(
            prefix=".recalld-restore-", suffix=".partial", dir=real.parent
        )
    except OSError as error:
        raise StorageError(f"cannot write beside {real}: {error.strerror}") from error
    partial = Path(name)
    try:
        with os.fdopen(handle, "wb") as target, backup.open("rb") as source:
            shutil.copyfileobj(source, target, 1024 * 1024)
            target.flush()
            os.fsync(target.fileno())
        with contextlib.suppress(OSError):
            shutil.copymode(backup, partial)
    except OSError as error:
        partial.unlink(missing_ok=True)
        if error.errno == errno.ENOSPC:
            raise DiskFullError(
                f"the restore of {real} failed: the disk holding it is full; nothing was"
                " changed. Free space and restore again"
            ) from None
        raise StorageError(f"the restore of {real} failed: {error}; nothing was changed") from error
    return partial


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
