"""The SQLite store's file: what opening a path means, and consistent copies of it.

Opening (:func:`check_path`): a path that does not exist (or an empty file) is
a new database, and the caller is told so, since a mistyped ``--db`` would
otherwise silently start an empty memory; a file that is not SQLite, or an
SQLite file that holds other tables and no recalld schema, is refused with a
clear error, so recalld never writes its tables into someone else's database;
a database written by a newer recalld (a schema version this one does not
know) is refused too. The parent directory is created only when the caller
allows it (the default data directory); anywhere else a missing directory is
a mistake worth an error.

Backups (:func:`backup`): SQLite's online backup API copies every page of the
database as of one read transaction, in one step, while other connections
(in this or any other process) keep writing; in WAL mode the reader blocks no
writer, and one step means the copy never restarts when they do. The copy
therefore holds every write committed before the backup began. The copy is read
through ``PRAGMA quick_check`` before it is published: a damaged database is refused
rather than copied into a backup that would fail on restore.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

import apsw

from recalld.errors import DiskFullError, StorageError
from recalld.store.base import BackupResult
from recalld.store.file_modes import PRIVATE_DIRECTORY_MODE, create_private_file
from recalld.store.sqlite_connection import storage_error, unwritable_error
from recalld.store.sqlite_wal import committed_frames, rollback_mode

__all__ = [
    "DestinationExistsError",
    "ForeignLogError",
    "check_path",
    "copy_database",
    "copy_older_schema",
    "database_file",
    "schema_versions",
]


class ForeignLogError(StorageError):
    """A database file sits beside another database's write-ahead log (a backup copied in
    place of a database whose ``-wal`` was left beside it): it was not opened."""


class DestinationExistsError(StorageError):
    """A backup's destination exists, or appeared while the copy was being made (another
    backup took the name): nothing was written."""


# A file shorter than this cannot hold an SQLite header: SQLite treats an empty file as a
# new database, and so does recalld.
SQLITE_HEADER = b"SQLite format 3\x00"
# A shell variable as a shell expands it: $NAME or ${NAME}.
_VARIABLE = re.compile(r"\$\{?[A-Za-z_]")


def check_path(path: Path, *, create_directory: bool, busy_timeout_ms: int = 5000) -> bool:
    """Check that ``path`` can be opened as a recalld database; whether it is a new one.

    Raises :class:`StorageError` for a missing directory (unless
    ``create_directory``), a file that is not SQLite, or an SQLite file that is
    not a recalld database. ``busy_timeout_ms``: how long to wait while another
    process holds the file locked (it may be creating or migrating it).
    """
    if str(path) == ":memory:":
        return True
    if path.is_dir():
        raise StorageError(f"{path} is a directory; give the path of a database file")
    if path.exists() and not path.is_file():  # SQLite only said "disk I/O error"
        raise StorageError(
            f"{path} is not a regular file (a device, pipe or socket); give the path of a"
            " database file"
        )
    if _is_new(path):
        parent = path.parent
        if not parent.exists():
            if not create_directory:
                unexpanded = _unexpanded(path)
                if unexpanded is not None:
                    raise StorageError(
                        f"the directory {parent} does not exist: {unexpanded} is taken as it"
                        " is written (no shell expanded it there); give the full path"
                    )
                raise StorageError(
                    f"the directory {parent} does not exist, so {path.name} cannot be created"
                    " there (a mistyped path?); create the directory first"
                )
            try:
                parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIRECTORY_MODE)
            except OSError as error:
                raise StorageError(f"cannot create {parent}: {error}") from error
        try:
            # Made here, owner-only, before SQLite makes it with the umask's mode (and
            # its -wal and -shm with the same): see recalld.store.file_modes. At the
            # link's target: O_EXCL does not follow a (dangling) symbolic link.
            create_private_file(Path(os.path.realpath(path)))
        except OSError as error:
            raise StorageError(f"cannot create {path}: {error.strerror or error}") from error
        return True
    header = _read_header(path)
    if header[: len(SQLITE_HEADER)] != SQLITE_HEADER and path.stat().st_size > 0:
        raise StorageError(
            f"{path} is not a recalld database (it is not an SQLite file); give another --db"
        )
    if rollback_mode(header):
        _refuse_foreign_log(path)
    tables = _tables(path, busy_timeout_ms)
    if tables and "schema_migrations" not in tables:
        shown = ", ".join(sorted(tables)[:5]) + (" ..." if len(tables) > 5 else "")
        raise StorageError(
            f"{path} is an SQLite database but not a recalld one (it holds {shown}); recalld"
            " will not write its tables into it: give another --db"
        )
    return False


def _read_header(path: Path) -> bytes:
    """The first 100 bytes of ``path``, read through SQLite's own VFS: a file descriptor
    this process closes on the database drops every POSIX lock it holds there, those of
    its SQLite connections too (another store open on the same file in this process),
    and SQLite tells by those locks whether another process uses the file (whether, on
    closing, it may fold the log in and delete it; adversarial pass d69, probed: the
    SHARED lock range was free after a second open). SQLite's VFS keeps such a close
    until its own locks go."""
    try:
        handle = apsw.VFSFile(
            "",
            os.path.realpath(path),
            [apsw.SQLITE_OPEN_MAIN_DB | apsw.SQLITE_OPEN_READONLY, 0],
        )
    except apsw.Error as error:
        # SQLite says "unable to open database file" whatever the cause.
        reason = "permission denied" if not os.access(path, os.R_OK) else str(error)
        raise StorageError(f"cannot read {path}: {reason}") from error
    try:
        return bytes(handle.xRead(100, 0))
    except apsw.Error as error:
        raise StorageError(f"cannot read {path}: {error}") from error
    finally:
        handle.xClose()


def _refuse_foreign_log(path: Path) -> None:
    """Refuse a database in rollback mode (a backup recalld wrote) beside a ``-wal`` with
    committed frames: that log is another database's (see :mod:`recalld.store.sqlite_wal`),
    and SQLite would lay its pages over this file on opening it, serving the database the
    copy replaced, or a damaged mix of the two, as if the restore had worked. Checked
    before any connection opens it, so nothing was read or changed."""
    log = Path(f"{os.path.realpath(path)}-wal")
    try:
        frames = committed_frames(log)
    except OSError as error:
        raise StorageError(f"cannot read {log}: {error.strerror or error}") from error
    if frames == 0 or not rollback_mode(_read_header(path)):
        # Read again: another process opening the file (a restored backup, in rollback
        # mode) between the two reads switched it to WAL mode and wrote its own log; the
        # file says so now (review of pass d69: refused as a foreign log).
        return
    raise ForeignLogError(
        f"{path} was put in place (a backup copied over the database?) beside {log.name},"
        f" the log of the database it replaced ({frames} pages of committed writes):"
        " SQLite would lay that log over it and serve the old database's newest writes, or"
        " a damaged mix, instead of the copy, so it was not opened and nothing changed."
        " Stop every recalld process using it (one that stops writes that log into this"
        f" file), then restore the backup again with `recalld --db {path} restore BACKUP`,"
        " which keeps the database and its log aside (<db>.old, <db>.old-wal), or finishes"
        " the restore that was interrupted here"
    )


def _unexpanded(path: Path) -> str | None:
    """The part of ``path``'s directory a shell would have expanded (``~`` or ``$HOME``
    written in an MCP client's JSON, a systemd unit or a .env file, which expand
    nothing), else None: a leading ``~`` or ``~user`` (a shell expands no other), or a
    ``$NAME`` (``${NAME}``); never the file's own name (``~notes.db``, ``price$5.db``)."""
    parts = path.parent.parts
    if parts and parts[0].startswith("~"):
        return parts[0]
    return next((part for part in parts if _VARIABLE.search(part)), None)


def _is_new(path: Path) -> bool:
    """No database there yet: no file, or an empty one whose write-ahead log is empty too
    (a database another process just created may live only in its log until a checkpoint)."""
    if not path.exists():
        return True
    if path.stat().st_size > 0:
        return False
    log = Path(f"{path}-wal")
    return not log.exists() or log.stat().st_size == 0


def _tables(path: Path, busy_timeout_ms: int) -> set[str]:
    try:
        connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.CantOpenError as error:
        raise _cannot_open(path, error) from error
    except apsw.Error as error:
        raise StorageError(f"cannot open {path}: {error}") from error
    try:
        # Another process may be creating or migrating the file right now: wait for it.
        connection.set_busy_timeout(busy_timeout_ms)
        rows = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    except apsw.NotADBError:
        raise StorageError(
            f"{path} is not a recalld database (SQLite cannot read it); give another --db"
        ) from None
    except apsw.CantOpenError as error:
        raise _cannot_open(path, error) from error
    except apsw.CorruptError as error:
        # A truncated file, a bad page in its schema: named with what to do, as damage
        # found after opening is (it was "cannot read PATH: database disk image is
        # malformed", which says neither).
        raise storage_error(error, path=path) from error
    except apsw.Error as error:
        raise StorageError(f"cannot read {path}: {error}") from error
    finally:
        connection.close()
    return {str(row[0]) for row in rows}


def _cannot_open(path: Path, error: apsw.CantOpenError) -> StorageError:
    """SQLite's "unable to open database file" for a file that exists and was just read.

    A database in WAL mode is read through its ``-wal`` and ``-shm`` files, made beside it
    on first use: in a directory this process may not write (a read-only mount, a backup
    volume, a container's read-only layer) they cannot be, and SQLite names no cause. As
    the read-only file itself is, that is said with what to do. Beside the file a symlink
    names: SQLite makes them there, not in the link's own directory."""
    directory = Path(os.path.realpath(path)).parent
    if not os.access(directory, os.W_OK):
        return unwritable_error(path)
    return StorageError(f"cannot open {path}: {error}")


def schema_versions(connection: apsw.Connection) -> set[int]:
    """The migration numbers recorded in ``schema_migrations`` (empty for a new database)."""
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return set()
    return {int(row[0]) for row in connection.execute("SELECT version FROM schema_migrations")}


def copy_database(
    source: apsw.Connection, destination: Path, configured: Path | None = None
) -> BackupResult:
    """Copy the database behind ``source`` to a new file ``destination`` (see the module
    docstring); the copy is fsynced before this returns.

    The copy is written to a fresh temporary file of its own beside ``destination`` and
    linked into place only when complete: no other file is ever opened, overwritten or
    removed (not a file that happens to be called ``<destination>.partial``, nor the live
    database), a ``destination`` that appears meanwhile is not replaced, and a failure
    (a full disk) leaves nothing behind. The copy gets the live file's permissions.
    ``configured``: the database's path as given (a symlink's): recalld keeps some of its
    own files beside it, SQLite keeps its journals beside the file it resolves to."""
    if os.path.lexists(destination):
        raise DestinationExistsError(f"{destination} already exists; give a new file name")
    if not destination.parent.is_dir():
        raise StorageError(f"the directory {destination.parent} does not exist")
    _refuse_own_file(source, destination, configured)
    try:
        handle, name = tempfile.mkstemp(
            prefix=".recalld-backup-", suffix=".partial", dir=destination.parent
        )
    except OSError as error:
        raise StorageError(f"cannot create {destination}: {error.strerror}") from error
    os.close(handle)
    partial = Path(name)
    try:
        pages, memories, versions = _copy_pages(source, partial, destination)
        _match_mode(source, partial)
        with partial.open("rb") as copy:
            os.fsync(copy.fileno())
        _publish(partial, destination)
        # The temporary name goes before the directory is synced: a crash after this
        # returns leaves the copy under one name only.
        partial.unlink(missing_ok=True)
        directory = os.open(destination.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise DiskFullError(
                f"the backup to {destination} failed: the disk holding it is full; give"
                " another place or free space"
            ) from None
        raise StorageError(f"the backup to {destination} failed: {error}") from error
    finally:
        partial.unlink(missing_ok=True)
        Path(f"{partial}-journal").unlink(missing_ok=True)
    return BackupResult(
        destination=destination,
        bytes=destination.stat().st_size,
        pages=pages,
        memories=memories,
        schema_version=max(versions, default=0),
    )


def copy_older_schema(
    path: Path, destination: Path, known: int, busy_timeout_ms: int = 5000
) -> BackupResult | None:
    """Back up the database at ``path`` as it is when an older recalld wrote it (it lacks
    some of this one's ``known`` migrations); None when its schema is current (or newer,
    or it is new), for the caller to open the store as usual.

    Opening the store migrates: the "backup" of a database not yet upgraded was a copy of
    the upgraded one, and the database itself was upgraded by it, so nothing was left that
    the recalld that wrote it could open again (to go back after a failed upgrade). Copied
    without migrating, and so without the purge of expired memories (it needs the
    current schema)."""
    check_path(path, create_directory=False, busy_timeout_ms=busy_timeout_ms)
    try:
        connection = apsw.Connection(str(path))
    except apsw.Error as error:
        raise StorageError(f"cannot open {path}: {error}") from error
    try:
        connection.set_busy_timeout(busy_timeout_ms)
        try:
            versions = schema_versions(connection)
        except apsw.Error as error:
            raise StorageError(f"cannot read {path}: {error}") from error
        if not versions or max(versions) > known or versions >= set(range(1, known + 1)):
            return None
        return copy_database(connection, destination, path)
    finally:
        connection.close()


# The files a database keeps beside itself (``<db>`` then one of these): SQLite's journals
# and super-journals, recalld's disk-full reserve, vector graphs and migration lock.
_OWN_SUFFIX = re.compile(r"-(?:wal|shm|journal|mj[0-9A-Fa-f]*|reserve|vectors-.*|migrate\.lock)")


def database_file(database: Path, candidate: Path) -> bool:
    """Whether writing ``candidate`` would overwrite the SQLite database ``database`` or one
    of its own files (``<db>-wal``, ``-shm``, ``-journal``, ``-reserve``, ``-vectors-…``,
    ``-migrate.lock``), under any spelling: beside the path given or beside the file it
    resolves to, through a symlink or a hard link."""
    if str(database) in ("", ":memory:"):
        return False
    real = Path(os.path.realpath(candidate))
    for place in {database, Path(os.path.realpath(database))}:
        if real == Path(os.path.realpath(place)):
            return True
        same_place = os.path.realpath(place.parent) == os.path.realpath(real.parent)
        prefix, name = place.name, real.name
        if same_place and name.startswith(prefix) and _OWN_SUFFIX.fullmatch(name[len(prefix) :]):
            return True
        with contextlib.suppress(OSError):  # either missing: not the same file
            if os.path.samefile(database, candidate):
                return True
    return False


def _refuse_own_file(source: apsw.Connection, destination: Path, configured: Path | None) -> None:
    """Refuse a name one of the database's own files takes (``<db>-wal``, ``-shm``,
    ``-journal``, ``-reserve``, ``-vectors-…``, ``-migrate.lock``) even before it exists:
    recalld or SQLite would later overwrite or delete it. Other names beside the database
    (``notes.db-2026-12-06``) are fine. Both the file SQLite opened and the path recalld was
    given count: through a symlink, SQLite's journals sit beside the file it resolves to,
    recalld's reserve and vector files beside the link."""
    given = (source.filename, configured)
    lives = {Path(path) for path in given if path is not None and str(path) not in ("", ":memory:")}
    name = destination.name
    for live_path in lives:
        same_place = os.path.realpath(destination.parent) == os.path.realpath(live_path.parent)
        prefix = live_path.name
        if same_place and name.startswith(prefix) and _OWN_SUFFIX.fullmatch(name[len(prefix) :]):
            raise StorageError(
                f"{destination} is the name of one of the database's own files (<db>-wal,"
                " -shm, -journal, -reserve, -vectors-..., -migrate.lock), which recalld or"
                f" SQLite may overwrite or delete; give another name, e.g."
                f" {live_path.stem}-backup.db"
            )


def _copy_pages(
    source: apsw.Connection, partial: Path, destination: Path
) -> tuple[int, int, set[int]]:
    """Every page of ``source`` into the (empty) file ``partial``: pages, memories, schema."""
    try:
        target = apsw.Connection(str(partial))
    except UnicodeEncodeError:
        raise StorageError(
            f"cannot back up into {destination.parent}: SQLite needs a directory whose path"
            " is UTF-8; give another directory"
        ) from None
    except apsw.Error as error:
        raise StorageError(f"cannot create {destination}: {error}") from error
    try:
        with target.backup("main", source, "main") as step:
            # One step (-1): every page under one read transaction, so writers of other
            # processes cannot make it restart and the copy is one consistent snapshot.
            step.step(-1)
            pages = int(step.pagecount)
        _refuse_damaged(target, source, destination)
        counted = target.execute("SELECT count(*) FROM memories").fetchone()
        memories = 0 if counted is None else int(counted[0])
        versions = schema_versions(target)
        # A plain rollback-journal file: the copy is one self-contained file to move around.
        target.execute("PRAGMA journal_mode = DELETE")
    except apsw.CorruptError as error:
        # A page the count or the schema read could not parse (quick_check found nothing).
        raise _damaged(source, destination, str(error)) from None
    except apsw.FullError:
        raise DiskFullError(
            f"the backup to {destination} failed: the disk holding it is full; nothing was"
            " left there. Free space or give another place"
        ) from None
    except apsw.Error as error:
        raise StorageError(f"the backup to {destination} failed: {error}") from error
    finally:
        target.close()
    return pages, memories, versions


def _refuse_damaged(copy: apsw.Connection, source: apsw.Connection, destination: Path) -> None:
    """Refuse to publish a copy of a damaged database: the backup API copies pages as they
    are, so a damaged page made a damaged "backup" reported as a success, found only when
    it was needed. ``PRAGMA quick_check`` reads every page of the copy (about a quarter of
    the copy's own time); an index that disagrees with its table is left to
    ``integrity_check``, which would cost several times more."""
    problems = [str(row[0]) for row in copy.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        found = "; ".join(problem.splitlines()[-1] for problem in problems if problem.strip())
        raise _damaged(source, destination, found)


def _damaged(source: apsw.Connection, destination: Path, problem: str) -> StorageError:
    live = source.filename or "the database"
    return StorageError(
        f"{live} is damaged ({problem}): a copy of it would be damaged too, so no backup was"
        f" written to {destination}. Stop the servers, copy the file itself, and try"
        " `sqlite3 COPY .recover` on that copy"
    )


def _match_mode(source: apsw.Connection, partial: Path) -> None:
    """Give the copy the live database file's permissions (a temporary file starts 0600)."""
    live = source.filename
    if live:
        with contextlib.suppress(OSError):
            os.chmod(partial, stat.S_IMODE(os.stat(live).st_mode))


# What os.link answers on a file system that has no hard links (FAT, some network mounts).
_NO_HARD_LINKS = frozenset(
    {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK}
)


def _publish(partial: Path, destination: Path) -> None:
    """Put the finished copy at ``destination`` without replacing anything there."""
    try:
        os.link(partial, destination)
    except FileExistsError:
        raise DestinationExistsError(
            f"{destination} already exists; give a new file name"
        ) from None
    except OSError as error:
        if error.errno not in _NO_HARD_LINKS:
            raise
        # A file system without hard links: check again, then rename.
        if os.path.lexists(destination):
            raise DestinationExistsError(
                f"{destination} already exists; give a new file name"
            ) from None
        partial.rename(destination)
