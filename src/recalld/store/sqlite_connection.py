"""Connections to one SQLite file: one per thread, lock waits retried, write transactions.

The SQLite store and its companions (semantic, context, core memory, graph,
intentions) all run their SQL through one :class:`SQLiteDatabase`: reads with
:meth:`SQLiteDatabase.read` or :meth:`SQLiteDatabase.run`, writes with
:meth:`SQLiteDatabase.write` (one ``BEGIN IMMEDIATE`` transaction). WAL,
``synchronous=FULL`` by default (fsync per commit), ``busy_timeout``, and a
bounded retry with backoff around lock waits, so several processes can share
one file and no caller sees ``database is locked``.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import logging
import os
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import apsw

from recalld.errors import (
    DatabaseLockedError,
    DatabaseReplacedError,
    DiskFullError,
    StorageError,
)
from recalld.store.process import OpeningProcess
from recalld.store.sqlite_wal import FileHeader

__all__ = [
    "DISK_FULL_MESSAGE",
    "LOCK_ERRORS",
    "SKIPPABLE_LOCK_WAIT_SECONDS",
    "SQLiteDatabase",
    "storage_error",
    "unwritable_error",
    "writing_briefly",
]

T = TypeVar("T")
logger = logging.getLogger(__name__)
LOCK_ERRORS = (apsw.BusyError, apsw.LockedError)
# close() waits at most this long for statements other threads are running (a thread
# that outlived its stop's timeout, a request still being answered).
CLOSE_WAIT_SECONDS = 10.0
# A connection refreshes the planner's statistics after this many rows changed, then
# each time its changed rows double (see SQLiteDatabase.after_commit).
FIRST_STATISTICS_REFRESH = 5_000
# How long at most a write a reader may skip (see SQLiteDatabase.run_once) waits for the
# lock (busy_timeout when shorter). Not at all, a recall beside any other write of this
# process or another (a worker storing a batch, a server's other requests) skipped its
# catch-up, the memory just written not found by its meaning: a quarter of the recalls
# beside a busy writer thread.
SKIPPABLE_LOCK_WAIT_SECONDS = 1.0
DISK_FULL_MESSAGE = (
    "the disk holding the database is full; nothing was written. Free space, or forget"
    " memories (forget still works on a full disk)"
)
FILE_LIMIT_MESSAGE = (
    "the database file reached this process's file size limit (RLIMIT_FSIZE, `ulimit -f`);"
    " nothing was written. Raise the limit, or keep the database where it may grow"
)
# What the operating system said when SQLite's write failed as a plain I/O error.
_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def storage_error(
    error: apsw.Error, system_errno: int = 0, path: Path | None = None
) -> StorageError:
    """The recalld error for a database failure (a full disk, or a file at the process's
    size limit, says so).

    ``system_errno`` is the connection's ``system_errno`` after the failure: SQLite
    reports a write refused for want of space (``ENOSPC``, a quota) or over the file size
    limit (``EFBIG``) as a bare "disk I/O error" unless it saw it as ``SQLITE_FULL``.
    ``path`` (the database file) is named when the file cannot be written at all or is
    damaged.
    """
    if isinstance(error, apsw.ReadOnlyError) and path is not None:
        return unwritable_error(path)
    if isinstance(error, apsw.FullError):
        return DiskFullError(DISK_FULL_MESSAGE)
    if isinstance(error, apsw.CorruptError | apsw.NotADBError) and path is not None:
        # Found after opening (a page read later): say which file, and what to do.
        return StorageError(
            f"{path} is damaged ({error}): restore a backup (recalld backup), or try"
            " `sqlite3 FILE .recover` on a copy"
        )
    if isinstance(error, apsw.IOError):
        if system_errno in _DISK_FULL_ERRNOS:
            return DiskFullError(DISK_FULL_MESSAGE)
        if system_errno == errno.EFBIG:
            # Not DiskFullError: releasing the disk's reserve (forget does) would not help.
            return StorageError(FILE_LIMIT_MESSAGE)
    return StorageError(f"{type(error).__name__}: {error}")


def unwritable_error(path: Path) -> StorageError:
    """The error for a database file this process may not write (recalld writes on open)."""
    return StorageError(
        f"{path} cannot be written (the file, its directory or its file system is"
        " read-only to this process): recalld writes to its database, on open too;"
        " make it writable, or copy it somewhere writable and open the copy"
    )


_brief = threading.local()


@contextlib.contextmanager
def writing_briefly() -> Iterator[None]:
    """Within it, this thread's SQLite writes wait for another connection's lock as
    :meth:`SQLiteDatabase.run_once` does (a second at most), then raise
    :class:`DatabaseLockedError`: for a recall's catch-up, a read that must not wait out
    another process's long write. Its vectors' commit and the flush of vectors it held
    waited ``RECALLD_LOCK_RETRY_SECONDS`` each, so once a catch-up had held vectors every
    later recall waited that long while the lock stayed held (review of pass a64)."""
    previous = getattr(_brief, "on", False)
    _brief.on = True
    try:
        yield
    finally:
        _brief.on = previous


def _looking_every_millisecond(deadline: float) -> Callable[[int], bool]:
    """A busy handler that looks at the lock again every millisecond until ``deadline``
    (a :func:`time.monotonic` instant), then gives up."""

    def look_again(_count: int) -> bool:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)
        return True

    return look_again


class _ThreadEnd:
    """Kept in a thread's local storage beside its connection: dropped when the thread ends,
    it hands that connection to its database to close (see :meth:`SQLiteDatabase._leave`).

    It only queues it, taking no lock: it runs wherever the thread's storage goes (the
    ending thread, a ``close()``, a garbage collection in any thread, which may hold the
    database's lock), and closing there races a ``close()`` of the database. The database
    is held weakly: a service dropped without ``close()`` is freed, its connections with it
    (a finalizer holding the database kept every such one open for ever) (review of pass
    a66)."""

    __slots__ = ("_connection", "_database")

    def __init__(self, database: SQLiteDatabase, connection: apsw.Connection) -> None:
        self._database = weakref.ref(database)
        self._connection = connection

    def __del__(self) -> None:
        database = self._database()
        if database is not None:
            database._ended.append(self._connection)  # a deque: safe from any thread


class SQLiteDatabase:
    """Per-thread connections to ``path`` and the retry loop every statement runs in."""

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str = "FULL",
        busy_timeout_ms: int = 5_000,
        lock_retry_seconds: float = 30.0,
    ) -> None:
        self.path = path
        self._synchronous = synchronous
        self.busy_timeout_ms = busy_timeout_ms
        self.lock_retry_seconds = lock_retry_seconds
        self._local = threading.local()
        self._connections: list[apsw.Connection] = []
        self._connections_lock = threading.Lock()
        # Connections of threads that have ended, closed by the next operation's _leave.
        self._ended: collections.deque[apsw.Connection] = collections.deque()
        self._closed = False
        # Operations under way (run() and use()), so close() can wait for them.
        self._running = 0
        self._idle = threading.Condition(self._connections_lock)
        self._opener = OpeningProcess(str(path))
        # The file opened first (device, inode): every write checks the path still names it.
        # Absolute as of now, and every connection opens it: a later chdir changes neither.
        self._identity: tuple[int, int] | None = None
        # The file's header on disk, to notice it written over in place (see FileHeader),
        # and whether it was: then the log this process holds is not folded into it.
        self._header: FileHeader | None = None
        self._written_over = False
        # The damage SQLite reported reading this file, once it has: every write is
        # refused from then on (see begin).
        self._damaged: str | None = None
        # The (device, inode) of its -wal and -shm at the first write (see _check_same_logs).
        self._logs: tuple[tuple[int, int] | None, ...] | None = None
        # The file's (size, mtime) as this process's last commit or checkpoint left it: changed
        # since, another process wrote it (see close).
        self._left: tuple[int, int] | None = None
        self._absolute = os.path.abspath(path) if not self.private else ""

    @property
    def in_memory(self) -> bool:
        """Whether this is SQLite's private ``:memory:`` database (no file)."""
        return str(self.path) == ":memory:"

    @property
    def private(self) -> bool:
        """Whether each connection opens a database of its own (``:memory:``, or SQLite's
        temporary database for an empty path): nothing is shared between threads."""
        return self.in_memory or str(self.path) in ("", ".")

    def connection(self) -> apsw.Connection:
        """This thread's connection (opened with the durability pragmas on first use)."""
        try:
            return self._connect()
        except LOCK_ERRORS as error:
            raise StorageError(f"cannot open {self.path}: {error}") from error

    def _connect(self) -> apsw.Connection:
        # As connection(), but a lock wait while opening is raised as is, for run() to retry.
        self._opener.check()
        if self._closed:
            raise StorageError("the store is closed")
        self._check_still_there()
        connection: apsw.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            try:
                # The absolute path: a thread whose connection opened after a chdir opened
                # (and created) a file of that name in the new working directory.
                connection = apsw.Connection(self._absolute or str(self.path))
            except apsw.Error as error:
                raise StorageError(f"cannot open {self.path}: {error}") from error
            try:
                connection.set_busy_timeout(self.busy_timeout_ms)
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute(f"PRAGMA synchronous = {self._synchronous}")
                connection.execute("PRAGMA secure_delete = ON")
                connection.execute("PRAGMA foreign_keys = ON")
            except LOCK_ERRORS:
                # Another process holds the file (its migrations, its WAL recovery) past the
                # busy handler: run() waits and opens again (seen with two servers starting).
                connection.close()
                raise
            except apsw.Error as error:
                connection.close()
                raise StorageError(f"cannot open {self.path}: {error}") from error
            if self._identity is None and not self.private:
                self._identity = self._file_identity()
                self._header = FileHeader(os.path.realpath(self._absolute))
            if not self.private and (self._logs is None or None in self._logs):
                # This connection read through them (journal_mode): held open from now on,
                # SQLite deletes neither, so a change after this was someone else's.
                self._logs = self._log_identities()
                self.note_written()
            self._local.connection = connection
            self._local.refresh_at = FIRST_STATISTICS_REFRESH
            # Dropped with the thread's local storage when the thread ends: see _close_ended.
            self._local.ending = _ThreadEnd(self, connection)
            with self._connections_lock:
                self._connections.append(connection)
        return connection

    def _close_ended(self) -> None:
        """Close the connections of threads that have ended, but the last one open.

        Each thread got its own connection, kept until close(): a program starting a
        thread per call (a framework's tool call, a pool made per request) held one more
        connection, two file descriptors and its page cache, per thread it ever ran, until
        "too many open files". The last one stays open: SQLite deletes the -wal and -shm
        when the process's last connection closes, and a log that changed identity is taken
        for one deleted by someone else (see _check_same_logs). Called by an operation still
        counted as running, so close() waits for it: a connection closed here after close()
        closed the others would be the last, and checkpoint a log close() leaves unread."""
        closing: list[apsw.Connection] = []
        with self._connections_lock:
            kept: list[apsw.Connection] = []
            while self._ended:
                connection = self._ended.popleft()
                if connection not in self._connections:
                    continue  # close() has closed it
                if len(self._connections) > 1:
                    self._connections.remove(connection)
                    closing.append(connection)
                else:
                    kept.append(connection)  # closed once another connection is open
            self._ended.extend(kept)
        for connection in closing:
            try:
                connection.close()
            except apsw.Error:
                # Its thread has ended, so nothing runs on it; the operation that found it
                # queued is not failed for it.
                logger.warning("%s: closing an ended thread's connection failed", self.path)

    def run(
        self,
        operation: Callable[[apsw.Connection], T],
        *,
        lock_wait_seconds: float | None = None,
    ) -> T:
        """Run ``operation``, retrying lock waits with jittered backoff for at most
        ``lock_wait_seconds`` (``lock_retry_seconds`` by default), then raising
        :class:`DatabaseLockedError`.

        Each attempt's ``busy_timeout`` is capped at what is left of that bound: the first
        waited the whole ``busy_timeout`` (5 s) before the bound was looked at, so a
        ``RECALLD_LOCK_RETRY_SECONDS`` of 2 failed after 6.6 s (review of pass a64).
        """
        brief = lock_wait_seconds is None and getattr(_brief, "on", False)
        if brief:
            lock_wait_seconds = min(self.busy_timeout_ms / 1000, SKIPPABLE_LOCK_WAIT_SECONDS)
        budget = self.lock_retry_seconds if lock_wait_seconds is None else lock_wait_seconds
        deadline = time.monotonic() + budget
        delay = 0.005
        while True:
            local = self._enter()
            try:
                connection = self._connect()
                left_ms = max(int((deadline - time.monotonic()) * 1000), 0)
                capped = left_ms < self.busy_timeout_ms
                if brief:
                    # As run_once: a brief write's second is spent looking at the lock every
                    # millisecond. SQLite's own handler sleeps up to 100 ms between looks and
                    # a thread writing without pause kept the lock at nearly every look: a
                    # recall's vectors missed their commit for the whole second (CI, stop 65).
                    connection.set_busy_handler(_looking_every_millisecond(deadline))
                elif capped:
                    connection.set_busy_timeout(left_ms)
                try:
                    return operation(connection)
                finally:
                    if capped or brief:
                        connection.set_busy_timeout(self.busy_timeout_ms)
            except LOCK_ERRORS as error:
                locked = error
            except apsw.Error as error:
                raise self._failure(error) from error
            finally:
                self._leave(local)
            # Waited out of the count: close() does not wait for a backoff.
            if time.monotonic() >= deadline:
                raise DatabaseLockedError(
                    f"{self.path} stayed locked for {budget:g} s"
                    + (
                        " (RECALLD_LOCK_RETRY_SECONDS)"
                        if lock_wait_seconds is None
                        else f" (a write this waits at most {budget:g} s for)"
                    )
                    + " by another connection's write (another"
                    f" recalld process, or a tool holding it open): {locked}; nothing was"
                    " written. Retry once that write is done, or wait longer by raising"
                    " RECALLD_LOCK_RETRY_SECONDS"
                ) from locked
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.25)

    def run_once(self, operation: Callable[[apsw.Connection], T]) -> T:
        """Run ``operation``, waiting for a lock another connection holds at most
        ``busy_timeout`` or :data:`SKIPPABLE_LOCK_WAIT_SECONDS`, whichever is shorter,
        then raising :class:`DatabaseLockedError`. For a write a reader may skip, such as
        a recall's catch-up claim: a read must not wait out another process's long write
        (``RECALLD_LOCK_RETRY_SECONDS``, and fail), yet an ordinary write (milliseconds: a
        worker's batch, another request of this server) is waited for, not taken for one
        (review of pass a64).

        The lock is looked at every millisecond: SQLite's own busy handler sleeps up to
        100 ms between looks, and a writer that begins again right after its commit (a
        busy server) kept the lock at nearly every look, for seconds."""
        wait = min(self.busy_timeout_ms / 1000, SKIPPABLE_LOCK_WAIT_SECONDS)
        deadline = time.monotonic() + wait
        local = self._enter()
        try:
            connection = self._connect()
            connection.set_busy_handler(_looking_every_millisecond(deadline))
            try:
                return operation(connection)
            finally:
                connection.set_busy_timeout(self.busy_timeout_ms)
        except LOCK_ERRORS as error:
            raise DatabaseLockedError(
                f"{self.path} stayed locked for {wait:g} s by another connection's write:"
                f" {error}; nothing was written"
            ) from error
        except apsw.Error as error:
            raise self._failure(error) from error
        finally:
            self._leave(local)

    def _failure(self, error: apsw.Error) -> StorageError:
        failure = storage_error(error, self.system_errno(), self.path)
        if isinstance(error, apsw.CorruptError):
            self._damaged = str(failure)
        return failure

    def read(
        self, sql: str, params: dict[str, Any] | tuple[Any, ...] = ()
    ) -> list[tuple[Any, ...]]:
        """Every row of one query (outside any write transaction)."""
        return self.run(lambda connection: connection.execute(sql, params).fetchall())

    def write(
        self,
        operation: Callable[[apsw.Connection], T],
        *,
        durable: bool = True,
        wait: bool = True,
    ) -> T:
        """Run ``operation`` in one ``BEGIN IMMEDIATE`` transaction, lock waits retried.

        With ``wait=False`` a write lock another connection holds past ``busy_timeout``
        (a second at most) raises :class:`DatabaseLockedError` (see :meth:`run_once`).

        With ``durable=False`` the commit does not wait for the disk (``synchronous =
        NORMAL`` for this transaction only; the connection's setting is read at commit):
        a crash may lose it, never an earlier durable commit, and the file stays whole.
        The next durable commit of any connection makes it durable too.
        """

        def step(connection: apsw.Connection) -> T:
            try:  # BEGIN inside: an interrupt just after it still rolls back
                self.begin(connection)
                result = operation(connection)
                connection.execute("COMMIT")
            except BaseException:
                if not connection.get_autocommit():
                    connection.execute("ROLLBACK")
                raise
            finally:
                self.writing_done()
            self.after_commit(connection)
            return result

        run = self.run if wait else self.run_once
        if durable or self._synchronous.upper() not in ("FULL", "EXTRA"):
            return run(step)

        def relaxed(connection: apsw.Connection) -> T:
            try:
                connection.execute("PRAGMA synchronous = NORMAL")
                return step(connection)
            finally:
                connection.execute(f"PRAGMA synchronous = {self._synchronous}")

        return run(relaxed)

    def begin(self, connection: apsw.Connection) -> None:
        """``BEGIN IMMEDIATE`` on this thread's ``connection``, for a write that commits or
        rolls back, then calls :meth:`writing_done` in a ``finally``.

        A transaction still open on it that no write of this thread is running was left by
        an interrupted one (a ``KeyboardInterrupt`` between its ``BEGIN`` and its rollback):
        it held the file's write lock, so every other writer waited, and made every later
        write of this thread fail ("cannot start a transaction within a transaction").
        It is rolled back first.
        """
        if not connection.get_autocommit() and not getattr(self._local, "writing", False):
            logger.warning(
                "%s: rolled back a transaction an interrupted write left open", self.path
            )
            connection.execute("ROLLBACK")
        if self._damaged is not None:
            # SQLite writes into a damaged file as into any other, and a write touching a
            # damaged page spreads the damage a restore or `.recover` would have to undo.
            raise StorageError(f"{self._damaged}; nothing was written")
        self._local.writing = True
        connection.execute("BEGIN IMMEDIATE")
        self._check_same_file()

    def _file_identity(self) -> tuple[int, int] | None:
        try:
            found = os.stat(self._absolute)
        except OSError:
            return None
        return (found.st_dev, found.st_ino)

    def _check_still_there(self) -> None:
        """Refuse every operation, a read too, once the path no longer names the file this
        process opened (see :meth:`_check_same_file`).

        Only writes were refused: after a backup was restored under a running server, it
        went on answering every search, recall and listing from the moved (or deleted)
        file, for as long as it ran, while each new process read the restored one: the
        restore looked as if it had not worked, and what it was meant to take away was
        still recalled (adversarial pass c68). A ``stat``, about a microsecond."""
        if self._identity is not None and self._file_identity() != self._identity:
            raise DatabaseReplacedError(
                f"{self.path} was moved, deleted or replaced while this process had it open"
                " (a backup restored while recalld ran?): nothing was read or written, as"
                " this process still has the old file. Stop every recalld process using it"
                " and start them again"
            )
        self._check_not_written_over()

    def _check_not_written_over(self) -> None:
        """Refuse every operation once the file was written over in place (see
        :class:`~recalld.store.sqlite_wal.FileHeader`): this process would read the copy
        through its own log, and write that log into it (adversarial pass d69)."""
        if self._header is None:
            return
        try:
            written_over = self._written_over or self._header.written_over()
        except apsw.Error as error:
            raise StorageError(f"cannot read {self.path}: {error}") from error
        if written_over:
            self._written_over = True
            raise DatabaseReplacedError(
                f"{self.path} was written over in place (a backup copied over it?) while this"
                " process had it open: nothing was read or written, as this process would"
                " read it through its own log and write that log into it. Stop every recalld"
                " process using it (this one leaves its log unread), then restore the backup"
                " again with `recalld restore BACKUP`"
            )

    def _check_same_file(self) -> None:
        """Refuse a write once the path no longer names the file this process opened.

        Restoring a backup while a server runs (``mv db db.old; cp backup db``) left the
        server writing into the moved file: every write was acknowledged and none was in
        the restored database; threads that opened a connection afterwards used the new
        file, so one process wrote to two databases. Checked with the write lock held (a
        ``stat``, about a microsecond), so no write lands in the old file after this."""
        if self._identity is None:
            return
        if self._file_identity() != self._identity:
            raise DatabaseReplacedError(
                f"{self.path} was moved, deleted or replaced while this process had it open"
                " (a backup restored while recalld ran?): nothing was written, as it would"
                " have gone to the old file. Stop every recalld process using it and start"
                " them again"
            )
        self._check_not_written_over()  # with the write lock held: no write lands in it
        self._check_same_logs()

    def _log_identities(self) -> tuple[tuple[int, int] | None, ...]:
        # Beside the file the path resolves to, where SQLite keeps them.
        resolved = os.path.realpath(self._absolute)
        identities: list[tuple[int, int] | None] = []
        for suffix in ("-wal", "-shm"):
            try:
                found = os.stat(resolved + suffix)
            except OSError:
                identities.append(None)
            else:
                identities.append((found.st_dev, found.st_ino))
        return tuple(identities)

    def _check_same_logs(self) -> None:
        """Refuse a write once the ``-wal`` or ``-shm`` this process uses was deleted.

        Deleted while a server ran (by hand, a cleanup script, an older recalld's restore
        hint), SQLite goes on writing into the unlinked log it holds open, acknowledged,
        while every process opening the database afterwards makes a new log and sees none
        of it; each then wrote its own log, and the first one to checkpoint overwrote the
        other's acknowledged writes (probed: a CLI `remember` answered "created" and was
        gone once the server stopped). SQLite deletes neither while any connection is
        open, and this process holds its connections open until close, so a log that
        changed under the write lock was removed by someone else. Recorded at the first
        write with both in place (a new database has neither before it)."""
        if self._logs is None or None in self._logs:
            self._logs = self._log_identities()
            return
        self.check_logs()

    def note_written(self) -> None:
        """Record the file as this process's commit or checkpoint just left it."""
        if not self.private:
            with contextlib.suppress(OSError):
                found = os.stat(self._absolute)
                self._left = (found.st_size, found.st_mtime_ns)

    def _others_wrote(self) -> bool:
        # Since this process's last commit: a log of theirs with frames, or the file changed.
        try:
            found = os.stat(self._absolute)
        except OSError:
            return True
        try:
            logged = os.stat(f"{os.path.realpath(self._absolute)}-wal").st_size > 0
        except OSError:
            logged = False
        return logged or (found.st_size, found.st_mtime_ns) != self._left

    def logs_replaced(self) -> bool:
        """Whether the ``-wal`` or ``-shm`` this process reads the database through was
        deleted or replaced since it opened them (see :meth:`_check_same_logs`)."""
        return (
            self._logs is not None
            and None not in self._logs
            and self._log_identities() != self._logs
        )

    def check_logs(self) -> None:
        """Raise :class:`StorageError` once :meth:`logs_replaced`: a write, or a checkpoint
        of the log this process still holds, would write over what others wrote since."""
        if self.logs_replaced():
            raise DatabaseReplacedError(
                f"{self.path}-wal or -shm was deleted or replaced while this process had the"
                " database open: a write now would reach no other process and could undo"
                " theirs, so nothing was written. Stop every recalld process using it and"
                " start them again; never delete a database's -wal or -shm while it is open"
            )

    def writing_done(self) -> None:
        """The write :meth:`begin` started on this thread has committed or rolled back."""
        self._local.writing = False

    def refresh_statistics_on_open(self) -> None:
        """Refresh the planner's statistics where they are missing or stale (cheap).

        ``PRAGMA optimize`` with ``0x10002`` is SQLite's recommended call on open:
        it runs ``ANALYZE`` only on tables whose size changed a lot since their
        last analysis (or were never analysed), bounded by ``analysis_limit``
        rows per index, so it costs a few milliseconds even at 1M memories.
        """
        if self.in_memory:
            return
        try:
            with self.use() as connection:
                # Nor busy_timeout: that held every open 5 s behind such a writer.
                self.refresh_statistics(connection, wait=False)
        except LOCK_ERRORS:
            # Another process holds the write lock (a long import): the statistics are a
            # hint, refreshed after this process's commits; retried here, every command
            # waited behind that writer and failed "the database stayed locked".
            logger.debug("%s: planner statistics not refreshed on open (locked)", self.path)
        except apsw.Error as error:
            raise storage_error(error, self.system_errno(), self.path) from error

    def refresh_statistics(self, connection: apsw.Connection, *, wait: bool = True) -> None:
        """``PRAGMA optimize``: ``ANALYZE`` the tables that grew a lot since their last
        analysis (or never had one), at most 400 rows per index (a few milliseconds).

        With ``wait=False`` a write lock another connection holds raises ``BusyError`` at
        once instead of after ``busy_timeout``: a table that never had statistics (an
        empty one) makes it want the write lock on every call."""
        connection.execute("PRAGMA analysis_limit = 400")
        if wait:
            connection.execute("PRAGMA optimize = 0x10002")
            return
        connection.set_busy_timeout(0)
        try:
            connection.execute("PRAGMA optimize = 0x10002")
        finally:
            connection.set_busy_timeout(self.busy_timeout_ms)

    def after_commit(self, connection: apsw.Connection) -> None:
        """Keep the planner's statistics in step with a file this process fills.

        Statistics taken when the file was new say its tables hold a few rows;
        a process that then writes 100,000 memories kept planning with them, and
        FTS5's own range deletes became table scans: ingest fell from 5,600 to
        250 memories/s by 300k (quadratic). So each connection refreshes them
        after 5,000 changed rows and then each time its changed rows double. A
        lock held by another process defers the refresh to a later commit; the
        commit itself has already succeeded.
        """
        if self.in_memory or not connection.get_autocommit():
            return
        self.note_written()
        changed = int(connection.total_changes())
        if changed < getattr(self._local, "refresh_at", FIRST_STATISTICS_REFRESH):
            return
        try:
            # Not waiting busy_timeout (5 s) for the lock: the write is acknowledged, and its
            # caller (a CLI remember, a REST request) was held that long behind another
            # process's write for a hint a later commit refreshes as well.
            self.refresh_statistics(connection, wait=False)
        except LOCK_ERRORS:
            return
        except apsw.Error as error:
            # The write is committed; only the statistics are stale (e.g. a full disk).
            logger.warning("could not refresh the planner's statistics: %s", error)
            return
        self._local.refresh_at = 2 * changed

    def changes(self, sql: str, params: dict[str, Any] | tuple[Any, ...] = ()) -> int:
        """Run one write statement in its own transaction; returns the rows it changed."""

        def step(connection: apsw.Connection) -> int:
            connection.execute(sql, params)
            return int(connection.changes())

        return self.write(step)

    @contextlib.contextmanager
    def use(self) -> Iterator[apsw.Connection]:
        """This thread's connection, for statements :meth:`close` waits for (as
        :meth:`run` does; only opening the connection is retried, as there)."""
        local = self._enter()
        try:
            # Through run(): a thread's first connection can meet another process's lock
            # (its migrations, its WAL recovery), raised as a bare apsw.BusyError otherwise.
            yield self.run(lambda connection: connection)
        finally:
            self._leave(local)

    def system_errno(self) -> int:
        """The operating system's error number behind this thread's last failed SQLite
        call (0 when none, or before the thread has a connection)."""
        connection: apsw.Connection | None = getattr(self._local, "connection", None)
        return 0 if connection is None else int(connection.system_errno)

    def _enter(self) -> threading.local:
        # One more operation under way (in this thread, and in all). Checked before the lock:
        # another thread of the parent may have held it at the fork, for ever in the child.
        self._opener.check()
        with self._connections_lock:
            if self._closed:
                raise StorageError("the store is closed")
            self._running += 1
        local = self._local
        local.running = getattr(local, "running", 0) + 1
        return local

    def _leave(self, local: threading.local) -> None:
        local.running -= 1
        try:
            if self._ended:
                self._close_ended()
        finally:
            with self._connections_lock:
                self._running -= 1
                self._idle.notify_all()

    def close(self) -> None:
        """Close every thread's connection; later use raises :class:`StorageError`.

        Operations other threads are running (:meth:`run`, :meth:`use`) finish first, for
        at most :data:`CLOSE_WAIT_SECONDS`, and none starts meanwhile; a connection still
        busy after that is left to its thread (logged) rather than closed under it.
        In a process forked after opening, nothing is closed: the connections are the
        parent's (see :mod:`recalld.store.process`), only this copy stops working.
        """
        if self._opener.forked:
            self._closed = True
            return
        with self._connections_lock:
            self._closed = True
        self._wait_for_statements(CLOSE_WAIT_SECONDS)
        with self._connections_lock:
            connections, self._connections = self._connections, []
        # The log it holds is no longer the database's (deleted under it): SQLite folds it
        # into the file on closing the last connection, right when no one wrote the file
        # since, but over what another process wrote since if one did (its acknowledged
        # writes undone, or the file left damaged): then the log is left unread.
        stale = self.logs_replaced() and self._others_wrote()
        # A file written over in place (a backup copied over it) is another database: the
        # log this process holds is the old one's, and folded in it would undo the copy.
        if not stale and self._header is not None:
            with contextlib.suppress(apsw.Error):  # unreadable: the checkpoint says so
                stale = self._written_over or self._header.written_over()
        for connection in connections:
            try:
                if stale:
                    connection.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
                connection.close()
            except apsw.ThreadingViolationError:
                logger.warning(
                    "%s: a thread was still running a statement %g s after close began;"
                    " its connection closes when that thread lets it go",
                    self.path,
                    CLOSE_WAIT_SECONDS,
                )
        self._local = threading.local()  # its threads' storage goes: each queues its connection
        self._ended.clear()  # closed above, or left to a thread still running on it
        if self._header is not None:
            self._header.close()

    def _wait_for_statements(self, timeout: float) -> bool:
        """Wait until no other thread runs a statement (True), at most ``timeout`` s
        (statements of the closing thread itself, e.g. close() from inside run(), aside)."""
        own = getattr(self._local, "running", 0)
        with self._idle:
            return self._idle.wait_for(lambda: self._running <= own, timeout)
