"""A database file that may not grow, or not be written, says why.

SQLite reports a write refused by the operating system as a bare "disk I/O error"
unless it sees SQLITE_FULL; recalld now reads the connection's errno and says
"file size limit" (EFBIG; RLIMIT_FSIZE stands in for a full disk). Nothing is
written, and once the limit is lifted the same write goes through. A database
this process may not write names its file instead of "attempt to write a
readonly database".
"""

from __future__ import annotations

import errno
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from recalld.errors import DiskFullError, StorageError
from recalld.service import MemoryService
from recalld.store.sqlite_connection import DISK_FULL_MESSAGE, storage_error

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs resource")


@contextmanager
def _file_size_limit(size: int) -> Iterator[None]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the process is killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_a_file_at_the_size_limit_is_named_and_nothing_is_written(
    service: MemoryService, db_path: Path
) -> None:
    service.remember("kept before the limit")
    wal = db_path.with_name(db_path.name + "-wal")
    limit = max(db_path.stat().st_size, wal.stat().st_size) + 4096
    failure: StorageError | None = None
    with _file_size_limit(limit):
        for number in range(200):  # the log outgrows the limit within a few writes
            try:
                service.remember(f"memory {number} " + "padding " * 6000)
            except StorageError as error:
                failure = error
                break
        assert failure is not None
        count = service.stats().count
    assert "file size limit" in str(failure), failure
    assert not isinstance(failure, DiskFullError)  # freeing the disk's reserve cannot help
    assert service.stats().count == count  # the refused write left nothing
    # Lifted, the same database takes writes again, and every earlier one is there.
    assert service.remember("written after the limit").status == "created"
    assert service.stats().count == count + 1
    assert service.recall("kept before the limit")


def test_an_io_error_for_want_of_space_is_a_full_disk() -> None:
    import apsw

    error = apsw.IOError("disk I/O error")
    full = storage_error(error, errno.ENOSPC)
    assert isinstance(full, DiskFullError)
    assert str(full) == DISK_FULL_MESSAGE
    assert type(storage_error(error, errno.EIO)) is StorageError


def test_a_database_this_process_cannot_write_is_named(
    service: MemoryService, db_path: Path
) -> None:
    service.remember("written while writable")
    store = service.store
    connection = store._database.connection()  # type: ignore[attr-defined]
    # SQLite's own read-only switch stands in for a read-only file (the tests run as
    # root, whom file permissions do not stop): the same ReadOnlyError either way.
    connection.execute("PRAGMA query_only = ON")
    try:
        with pytest.raises(StorageError) as refused:
            service.remember("refused")
    finally:
        connection.execute("PRAGMA query_only = OFF")
    message = str(refused.value)
    assert str(db_path) in message, message
    assert "cannot be written" in message
    assert "read-only" in message
    assert [memory.content for memory in service.list_memories().memories] == [
        "written while writable"
    ]
