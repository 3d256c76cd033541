"""A backup put in place beside the log of the database it replaced is refused, not read
through that log (adversarial pass d69): SQLite laid the old database's newest pages over
the copy, so `cp backup.db memories.db` beside a crash's `-wal` silently served the old
memories (or a damaged mix) as if the restore had worked."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import DatabaseReplacedError, StorageError
from recalld.service import MemoryService
from recalld.store.sqlite_file import ForeignLogError
from recalld.store.sqlite_wal import committed_frames


def _settings(db: Path) -> Settings:
    return Settings(db=db, embedder="none", graph_extractor="none")


def _backup_then_crash(tmp_path: Path) -> tuple[Path, Path]:
    """A database backed up with one memory, then three more written and left in its
    ``-wal`` as a crash leaves them (the files copied while the writer has them open)."""
    live = tmp_path / "live.db"
    backup = tmp_path / "backup.db"
    db = tmp_path / "memories.db"
    with MemoryService.open(_settings(live)) as service:
        service.remember("written before the backup")
        service.backup(backup)
        for number in range(3):
            service.remember(f"written after the backup {number}")
        shutil.copyfile(live, db)
        shutil.copyfile(f"{live}-wal", f"{db}-wal")
    assert committed_frames(Path(f"{db}-wal")) > 0
    return db, backup


def test_sqlite_store_refuses_a_backup_copied_beside_the_old_log(tmp_path: Path) -> None:
    db, backup = _backup_then_crash(tmp_path)
    shutil.copyfile(backup, db)  # the restore, without moving the log away
    log_before = Path(f"{db}-wal").read_bytes()
    with pytest.raises(ForeignLogError, match=r"memories\.db-wal") as refused:
        MemoryService.open(_settings(db))
    assert isinstance(refused.value, StorageError)
    assert "nothing changed" in str(refused.value)
    assert db.read_bytes() == backup.read_bytes()  # neither file was touched
    assert Path(f"{db}-wal").read_bytes() == log_before


def test_sqlite_store_opens_the_backup_once_the_old_log_is_moved_away(tmp_path: Path) -> None:
    db, backup = _backup_then_crash(tmp_path)
    shutil.copyfile(backup, db)
    os.rename(f"{db}-wal", tmp_path / "memories.db.old-wal")
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1  # the backup's one memory, nothing of the log


def test_sqlite_store_still_recovers_its_own_log_after_a_crash(tmp_path: Path) -> None:
    db, _backup = _backup_then_crash(tmp_path)  # a database in WAL mode and its own log
    with MemoryService.open(_settings(db)) as recovered:
        assert recovered.stats().count == 4


def test_sqlite_store_opens_a_backup_beside_a_log_with_no_committed_write(
    tmp_path: Path,
) -> None:
    db, backup = _backup_then_crash(tmp_path)
    shutil.copyfile(backup, db)
    log = Path(f"{db}-wal")
    with log.open("r+b") as handle:  # the header and part of the first frame: nothing to replay
        handle.truncate(32 + 100)
    assert committed_frames(log) == 0
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1


def test_sqlite_store_refuses_a_backup_copied_over_a_file_a_process_has_open(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memories.db"
    backup = tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as running:
        running.remember("written before the backup")
        running.backup(backup)
        running.remember("written after the backup")
        shutil.copyfile(backup, db)  # `cp backup.db memories.db` under a running server
        with pytest.raises(ForeignLogError):
            MemoryService.open(_settings(db))


def test_sqlite_store_refuses_its_file_written_over_in_place_and_leaves_the_copy_whole(
    tmp_path: Path,
) -> None:
    db = tmp_path / "memories.db"
    backup = tmp_path / "backup.db"
    running = MemoryService.open(_settings(db))
    running.remember("written before the backup")
    running.backup(backup)
    for number in range(3):
        running.remember(f"written after the backup {number}")
    copy = backup.read_bytes()
    with db.open("r+b") as same_file:  # `cp backup.db memories.db`: the same inode
        same_file.write(copy)
        same_file.truncate()
    with pytest.raises(DatabaseReplacedError, match="written over in place"):
        running.remember("a write after the copy")
    with pytest.raises(DatabaseReplacedError):
        running.list_memories()  # nor read through its log
    running.close()
    assert db.read_bytes() == copy  # its log was not folded into the copy
    with pytest.raises(ForeignLogError):
        MemoryService.open(_settings(db))  # the log left beside it is named, not replayed


def test_sqlite_store_opens_a_backup_another_process_opened_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes starting on a restored backup (rollback mode): the first switched it
    to WAL mode and wrote its log between the second's reads of the header and the log,
    and the second refused the file's own log as a foreign one (review of pass d69)."""
    import apsw

    db = tmp_path / "memories.db"
    with MemoryService.open(_settings(tmp_path / "live.db")) as service:
        service.remember("in the backup")
        service.backup(db)
    other: list[apsw.Connection] = []
    counted = committed_frames

    def opened_meanwhile(log: Path) -> int:
        if not other:  # the other process, between this one's two reads
            connection = apsw.Connection(str(db))
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA wal_autocheckpoint = 0")
            connection.execute("CREATE TABLE written_by_the_other (x)")
            other.append(connection)
        return counted(log)

    monkeypatch.setattr("recalld.store.sqlite_file.committed_frames", opened_meanwhile)
    try:
        with MemoryService.open(_settings(db)) as opened:
            assert opened.stats().count == 1
        assert other
    finally:
        for connection in other:
            connection.close()


def test_sqlite_store_names_a_log_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A -wal this user may not read (another user's server) beside a backup escaped as a
    bare PermissionError, a traceback on the CLI (review of pass d69)."""
    db, backup = _backup_then_crash(tmp_path)
    shutil.copyfile(backup, db)

    def unreadable(log: Path) -> int:
        raise PermissionError(13, "Permission denied", str(log))

    monkeypatch.setattr("recalld.store.sqlite_file.committed_frames", unreadable)
    with pytest.raises(StorageError, match=r"cannot read .*memories\.db-wal: Permission denied"):
        MemoryService.open(_settings(db))
