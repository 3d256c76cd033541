"""A database file moved or replaced under a running process (a backup restored while a
server runs): the process refuses to write rather than write into the old file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService

REPOSITORY = Path(__file__).resolve().parents[2]
ANOTHER_PROCESS = """
import sys
from pathlib import Path
from recalld.config import Settings
from recalld.service import MemoryService
settings = Settings(db=Path(sys.argv[1]), embedder="none", graph_extractor="none")
with MemoryService.open(settings) as other:
    other.remember("acknowledged by another process")
"""


def _contents(db: Path) -> list[str]:
    with MemoryService.open(Settings(db=db, embedder="none", graph_extractor="none")) as opened:
        return sorted(memory.content for memory in opened.list_memories(limit=50).memories)


def test_a_write_after_the_database_was_restored_under_the_process_is_refused(
    tmp_path: Path,
) -> None:
    # `mv db db.old; rm -f db-wal db-shm; cp backup db` while a server ran: its writes were
    # acknowledged and went into db.old, and threads that opened a connection afterwards
    # wrote into the restored file (adversarial pass d61).
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("before the backup")
        backup = service.backup(tmp_path / "backup.db").destination
        service.remember("after the backup")
        os.rename(db, tmp_path / "live.db.old")
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(backup, db)
        with pytest.raises(StorageError, match="moved, deleted or replaced"):
            service.remember("written after the restore")
        # A thread whose connection opens now (on the restored file) is refused too.
        failures: list[BaseException] = []

        def write_from_another_thread() -> None:
            try:
                service.remember("written by a new thread after the restore")
            except StorageError as error:
                failures.append(error)

        worker = threading.Thread(target=write_from_another_thread)
        worker.start()
        worker.join()
        assert len(failures) == 1
        assert "moved, deleted or replaced" in str(failures[0])
    assert _contents(db) == ["before the backup"]


def test_a_database_opened_by_a_relative_path_keeps_writing_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check above compares the file the path names now: a relative path must name the
    # file it named when opened, whatever the process's working directory is later.
    monkeypatch.chdir(tmp_path)
    settings = Settings(db=Path("relative.db"), embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("written from the first directory")
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        service.remember("written after a chdir")
    assert _contents(tmp_path / "relative.db") == [
        "written after a chdir",
        "written from the first directory",
    ]


def test_a_thread_that_first_writes_after_a_chdir_writes_into_the_database_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each thread opens a connection of its own: one opened after a chdir opened the relative
    # path in the new directory, created an empty file there and failed ("no such table")
    # (review of pass d61).
    monkeypatch.chdir(tmp_path)
    settings = Settings(db=Path("relative.db"), embedder="none", graph_extractor="none")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with MemoryService.open(settings) as service:
        service.remember("written from the first directory")
        monkeypatch.chdir(elsewhere)
        failures: list[BaseException] = []

        def write_from_a_new_thread() -> None:
            try:
                service.remember("written by a thread started after the chdir")
            except StorageError as error:
                failures.append(error)

        writer = threading.Thread(target=write_from_a_new_thread)
        writer.start()
        writer.join()
    assert failures == []
    assert list(elsewhere.iterdir()) == []
    assert _contents(tmp_path / "relative.db") == [
        "written by a thread started after the chdir",
        "written from the first directory",
    ]


def test_the_files_beside_a_database_opened_by_a_relative_path_stay_beside_it_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The disk-full reserve, vector graphs and the migration lock are named after the
    # database's path: a relative one put them in whatever directory the process was in.
    monkeypatch.chdir(tmp_path)
    settings = Settings(db=Path("relative.db"), embedder="none", graph_extractor="none")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with MemoryService.open(settings) as service:
        monkeypatch.chdir(elsewhere)
        assert service.store.index_location == tmp_path / "relative.db"
        assert service.store.location() == str((tmp_path / "relative.db").resolve())
        assert repr(service.store) == "SQLiteStore('relative.db')"  # as it was given


def test_a_write_after_the_write_ahead_log_was_deleted_under_the_process_is_refused(
    tmp_path: Path,
) -> None:
    # `rm db-wal db-shm` while a server ran (adversarial pass c63): it went on writing into
    # the unlinked log, acknowledged; a process opening the file afterwards made a log of
    # its own and saw none of it, and its own acknowledged write was undone when the
    # server's close checkpointed the old log over it.
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as server:
        server.remember("acknowledged before the delete")
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink()
        with pytest.raises(StorageError, match="-wal or -shm was deleted or replaced"):
            server.remember("would go to a log no one else reads")
        Path(f"{db}-wal").touch()  # another process's new, empty log: no way out either
        with pytest.raises(StorageError, match="-wal or -shm was deleted or replaced"):
            server.remember("still refused")
        assert server.stats().count == 1  # reads go on, from what it wrote
    assert _contents(db) == ["acknowledged before the delete"]


def test_closing_after_the_log_was_deleted_keeps_what_another_process_wrote_since(
    tmp_path: Path,
) -> None:
    # Review of pass c63: the server refused its own writes, but closing its last
    # connection still folded the deleted log it held into the file (SQLite's checkpoint
    # on close), over the pages another process had written since: that process's
    # acknowledged memory was gone (or the file damaged). A clean close with no other
    # writer still folds it in (the test above).
    db = tmp_path / "live.db"
    server = MemoryService.open(Settings(db=db, embedder="none", graph_extractor="none"))
    try:
        server.remember("only in the log deleted under the server")
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink()
        subprocess.run(
            [sys.executable, "-c", ANOTHER_PROCESS, str(db)],
            cwd=REPOSITORY,
            check=True,
            capture_output=True,
            timeout=120,
        )
        with pytest.raises(StorageError, match="-wal or -shm was deleted or replaced"):
            server.store.compact_after_forget()  # nor folded by a checkpoint of its own
        assert not server.store.scrub(0)
    finally:
        server.close()
    assert _contents(db) == ["acknowledged by another process"]
