"""A database in a directory this process may not write (adversarial pass c63): a
read-only mount, a backup volume, a container's read-only layer. A database closed
cleanly has no ``-wal`` or ``-shm`` beside it, SQLite cannot make them there, and every
command failed with "cannot read PATH: unable to open database file", naming no cause,
while the same database with those files present said it cannot be written and what to
do. Both now say the latter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService

# What the operating system does in such a directory: a file that is not there cannot be
# made (EROFS on a read-only mount, EACCES without write permission).
REFUSED = (".db-wal", ".db-shm")


class _ReadOnlyDirectoryVFS(apsw.VFS):
    """SQLite's default file system, except that no new ``-wal``/``-shm`` can be made."""

    def __init__(self, base: str) -> None:
        self.base = base
        super().__init__("recalld-test-read-only-directory", base=base, makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:  # noqa: N802 - SQLite's name
        filename = name if isinstance(name, str) else name.filename()
        if str(filename).endswith(REFUSED) and not os.path.exists(str(filename)):
            raise apsw.CantOpenError("unable to open database file")
        return apsw.VFSFile(self.base, name, flags)

    def xFullPathname(self, name: str) -> str:  # noqa: N802 - SQLite's name
        # The unix VFS resolves a symlink and says so (SQLITE_OK_SYMLINK), which apsw's
        # Python base passes on as an error ("not an error"): resolved here as it does.
        return os.path.realpath(name)


@pytest.fixture
def closed_database(tmp_path: Path) -> Path:
    db = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("written while the directory was writable")
    assert not Path(f"{db}-wal").exists()  # a clean close leaves the file alone
    return db


@pytest.fixture
def read_only_directory(closed_database: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = str(closed_database.parent)
    access = os.access

    def refusing(path: Any, mode: int, **options: Any) -> bool:
        if str(path) == directory and mode & os.W_OK:
            return False
        return access(path, mode, **options)

    monkeypatch.setattr(os, "access", refusing)
    vfs = _ReadOnlyDirectoryVFS(apsw.vfs_names()[0])  # the default so far ("unix")
    try:
        yield closed_database
    finally:
        vfs.unregister()


def test_a_database_in_a_read_only_directory_is_named_with_what_to_do(
    read_only_directory: Path,
) -> None:
    with pytest.raises(StorageError) as refused:
        MemoryService.open(Settings(db=read_only_directory, embedder="none"))
    message = str(refused.value)
    assert str(read_only_directory) in message
    assert "cannot be written" in message, message
    assert "copy it somewhere writable" in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory")
def test_a_database_in_a_directory_without_write_permission_is_named(
    closed_database: Path,
) -> None:
    directory = closed_database.parent
    directory.chmod(0o555)
    try:
        with pytest.raises(StorageError) as refused:
            MemoryService.open(Settings(db=closed_database, embedder="none"))
    finally:
        directory.chmod(0o755)
    assert "cannot be written" in str(refused.value)


def test_a_database_reached_through_a_symlink_into_a_read_only_directory_is_named(
    read_only_directory: Path, tmp_path: Path
) -> None:
    # Review of pass c63: SQLite makes the -wal and -shm beside the file the link points
    # to, but the directory checked was the link's own (writable), so this said only
    # "cannot open PATH: unable to open database file" again.
    links = tmp_path / "links"
    links.mkdir()
    link = links / "memories.db"
    link.symlink_to(read_only_directory)
    with pytest.raises(StorageError) as refused:
        MemoryService.open(Settings(db=link, embedder="none"))
    message = str(refused.value)
    assert "cannot be written" in message, message
    assert str(link) in message
