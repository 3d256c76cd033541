"""Putting a backup in place of an SQLite database: ``recalld restore BACKUP``.

The steps `recalld backup` prints, done so that nothing is half done: the backup is
checked (a recalld database, beside no log of its own) and copied to a temporary file
beside the database, fsynced; only then is the database hard-linked as ``<db>.old`` with
its ``-wal`` as ``<db>.old-wal`` (after a crash that log holds its newest writes: the two
go together), the copy renamed over the database, and the old ``-wal`` and ``-shm``
unlinked there. At every step a database is at the path with its own log or none, so a
restore killed midway leaves either the database as it was or the copy beside the old
log (refused on opening, :class:`~recalld.store.sqlite_file.ForeignLogError`), and a
second restore finishes or undoes it. A ``<db>.old`` already there is never overwritten.
A copy put beside the old ``-wal`` (``cp backup.db db``) was read through it, the
restore silently undone (adversarial pass d69).

It refuses while a process has the database open: SQLite holds a read lock on one byte
of the ``-shm`` (its "dead man switch", byte 128) for as long as a connection is open,
so a lock that cannot be taken there means one is; such a process would go on reading
and writing the moved file, and its checkpoint could write the old log into the copy.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import apsw

from recalld.errors import DiskFullError, StorageError
from recalld.store.schema_guard import refuse_newer_schema
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
    if not database.parent.is_dir():
        raise StorageError(f"the directory {database.parent} does not exist")
    real = Path(os.path.realpath(database))
    wal, shm = Path(f"{real}-wal"), Path(f"{real}-shm")
    old, old_wal = Path(f"{real}.old"), Path(f"{real}.old-wal")
    refuse_open(database, shm)
    # Before the backup is read: SQLite leaves an empty -wal and -shm beside a file in WAL
    # mode it opened (the <db>.old given as the backup, to undo a restore).
    _refuse_an_old_database(database, real, wal, old, old_wal)
    check_path(backup, create_directory=False)  # a recalld database, beside no foreign log
    _refuse_a_database_in_use(backup)
    _refuse_a_newer_schema(backup)
    partial = _copy_beside(backup, real)
    try:
        refuse_open(database, shm)  # again, once the copy is made: one may have started
        kept = kept_log = None
        # Linked, not moved: at every step there is a database at the path, and the old
        # one's log is never apart from it (review of pass d69: moved first, a crash left
        # no database, the next start created an empty one and SQLite deleted the log
        # beside it, the old database's newest writes).
        if os.path.lexists(real):
            os.link(real, old)
            kept = old
            if os.path.lexists(wal):
                os.link(wal, old_wal)
                kept_log = old_wal
            _sync_directory(real.parent)
        # A crash from here on leaves the copy beside the old log (still at .old-wal):
        # refused on opening (ForeignLogError), and a second restore finishes this one.
        os.replace(partial, real)
        _sync_directory(real.parent)
        wal.unlink(missing_ok=True)
        shm.unlink(missing_ok=True)
    except OSError as error:
        raise StorageError(
            f"the restore of {database} failed: {error.strerror or error} (the database"
            " is at its path, as it was or as the backup; the one it replaced, if any, is"
            f" {old.name} with its log)"
        ) from error
    finally:
        partial.unlink(missing_ok=True)
    return RestoreResult(database=database, backup=backup, old=kept, old_log=kept_log)


def _refuse_an_old_database(
    database: Path, real: Path, wal: Path, old: Path, old_wal: Path
) -> None:
    """Refuse to overwrite a ``<db>.old`` or ``<db>.old-wal`` already there (an earlier
    restore's: the database as it was before it, perhaps the only copy of its memories;
    review of pass d69: it was silently replaced). What an interrupted restore left is
    taken back: links to the database and its log (it stopped before the copy was put in
    place), or the log left beside the copy it put in place (it is at ``<db>.old-wal``)."""
    if _same(real, old):  # stopped before the copy went in: its links, undone (the log's
        old_wal.unlink(missing_ok=True)  # too: folded in since, its pages are stale)
        old.unlink()
    if not os.path.lexists(old) and committed_frames(old_wal) == 0:
        # Nothing to lose: the empty log SQLite left beside a <db>.old it opened, which
        # was moved away since (restored from, say), and the index beside it.
        for leftover in (old_wal, Path(f"{old}-shm")):
            leftover.unlink(missing_ok=True)
    done = f"nothing was changed, {database} is as it was"
    if _same(wal, old_wal) and not _same(real, old):
        # Stopped after the copy went in: the log beside it is the old one's, kept at
        # .old-wal; unlinked here, the copy opens.
        wal.unlink()
        done = f"the earlier restore was finished: {database} holds its backup"
    for name in (old, old_wal):
        if os.path.lexists(name):
            raise StorageError(
                f"{name} exists (the database an earlier restore replaced, or its log?):"
                " move it somewhere safe, or delete it if it is not needed, then restore"
                f" again; {done}"
            )


def _refuse_a_newer_schema(backup: Path) -> None:
    """Refuse a backup a newer recalld wrote: put in place, this recalld could not open it
    (review of pass d69: it was, and the database it replaced was moved aside)."""
    from recalld.store.migrations import MIGRATIONS

    try:
        connection = apsw.Connection(str(backup), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error as error:
        raise StorageError(f"cannot open {backup}: {error}") from error
    try:
        refuse_newer_schema(backup, connection.execute, len(MIGRATIONS))
    except apsw.Error as error:
        raise StorageError(f"cannot read {backup}: {error}") from error
    finally:
        connection.close()


def _same(first: Path, second: Path) -> bool:
    """Whether both exist and are one file (a hard link of the other)."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


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
        _keep_mode_and_owner(partial, real if os.path.lexists(real) else backup)
    except OSError as error:
        partial.unlink(missing_ok=True)
        if error.errno == errno.ENOSPC:
            raise DiskFullError(
                f"the restore of {real} failed: the disk holding it is full; nothing was"
                " changed. Free space and restore again"
            ) from None
        raise StorageError(f"the restore of {real} failed: {error}; nothing was changed") from error
    return partial


def _keep_mode_and_owner(partial: Path, model: Path) -> None:
    """Give the copy the mode of the database it replaces (or the backup's, for a new
    one), and, run as root, its owner: the copy of a root shell was root's own, 0600,
    and the server running as the database's owner could not open it (review of pass
    d69)."""
    status = model.stat()
    os.chmod(partial, status.st_mode & 0o7777)
    if os.geteuid() == 0 and (status.st_uid, status.st_gid) != (0, 0):
        os.chown(partial, status.st_uid, status.st_gid)


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
