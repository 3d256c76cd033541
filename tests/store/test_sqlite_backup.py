"""Backups: a consistent copy while another process writes, holding every write acknowledged
before it began; and the refusals (an existing file, a missing directory)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import apsw
import pytest

from recalld.config import Settings
from recalld.errors import DiskFullError, StorageError, ValidationError
from recalld.service import MemoryService
from tests.conftest import FakeClock
from tests.scrub_support import old_snapshot
from tests.store.sqlite_damage import damage_a_memories_leaf

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from recalld.config import Settings
    from recalld.service import MemoryService

    settings = Settings(db=Path(sys.argv[1]), embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        index = 0
        while not Path(sys.argv[2]).exists():
            service.remember(f"background write {index}")
            if index == 0:
                print("ready", flush=True)  # one write of its own is committed
            index += 1
    """
)


@pytest.mark.slow
def test_backup_while_another_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    stop = tmp_path / "stop"
    with MemoryService.open(settings) as service:
        acknowledged = [service.remember(f"acknowledged {index}").id for index in range(50)]
        with subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
        ) as writer:
            try:
                assert writer.stdout is not None
                # The writer says when its first write is committed; the backup runs while
                # it keeps writing.
                assert writer.stdout.readline().strip() == "ready"
                result = service.backup(tmp_path / "copy.db")
            finally:
                stop.touch()
                writer.wait(timeout=60)
    assert writer.returncode == 0
    assert result.memories >= len(acknowledged)
    with MemoryService.open(Settings(db=result.destination, embedder="none")) as copy:
        for memory_id in acknowledged:
            assert copy.get(memory_id).content.startswith("acknowledged")


def test_backup_refuses_an_existing_file(service: MemoryService, tmp_path: Path) -> None:
    service.remember("something")
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"")
    with pytest.raises(StorageError, match="already exists"):
        service.backup(taken)


def test_backup_refuses_a_missing_directory(service: MemoryService, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="does not exist"):
        service.backup(tmp_path / "missing" / "copy.db")


def test_backup_never_touches_a_file_named_like_its_work_file(
    service: MemoryService, tmp_path: Path
) -> None:
    # The copy used to be written to `<destination>.partial`, opened as it was: someone's
    # file of that name was overwritten and then deleted when the backup failed on it.
    service.remember("something")
    theirs = tmp_path / "copy.db.partial"
    theirs.write_bytes(b"not ours to touch")
    result = service.backup(tmp_path / "copy.db")
    assert theirs.read_bytes() == b"not ours to touch"
    assert result.memories == 1
    assert sorted(path.name for path in tmp_path.iterdir() if "copy" in path.name) == [
        "copy.db",
        "copy.db.partial",
    ]


def test_backup_never_writes_over_the_live_database(tmp_path: Path) -> None:
    # A database whose name is the backup's name plus ".partial" was the work file: the
    # backup wrote into the live database and then deleted it.
    settings = Settings(db=tmp_path / "memories.partial", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        kept = service.remember("must survive the backup")
        result = service.backup(tmp_path / "memories")
    assert result.memories == 1
    with MemoryService.open(settings) as reopened:
        assert reopened.get(kept.id).content == "must survive the backup"


def test_backup_refuses_a_dangling_symlink(service: MemoryService, tmp_path: Path) -> None:
    service.remember("something")
    link = tmp_path / "link.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(StorageError, match="already exists"):
        service.backup(link)
    assert not (tmp_path / "elsewhere.db").exists()
    assert link.is_symlink()


def test_backup_on_a_full_disk_says_so_and_leaves_nothing(
    service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(20):
        service.remember(f"memory {index} " + "x" * 2000)
    opened = apsw.Connection

    def tiny_disk(filename: str) -> apsw.Connection:
        connection = opened(filename)
        connection.execute("PRAGMA max_page_count = 3")  # SQLITE_FULL past three pages
        return connection

    target = tmp_path / "out"
    target.mkdir()
    monkeypatch.setattr(apsw, "Connection", tiny_disk)
    with pytest.raises(DiskFullError, match="full"):
        service.backup(target / "copy.db")
    assert list(target.iterdir()) == []


def test_backup_into_a_directory_sqlite_cannot_name(service: MemoryService, tmp_path: Path) -> None:
    try:
        directory = Path(os.fsdecode(os.fsencode(tmp_path) + b"/d\xff"))
        directory.mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system does not take a name that is not UTF-8")
    with pytest.raises(StorageError, match="UTF-8"):
        service.backup(directory / "copy.db")
    assert list(directory.iterdir()) == []


def test_backup_holds_no_trace_of_a_forgotten_memory_even_while_its_scrub_is_pending(
    service: MemoryService, db_path: Path, tmp_path: Path
) -> None:
    for index in range(10):
        service.remember(f"filler {index}")
    done = service.remember("QWXDONESECRET " * 40)
    assert service.forget(done.id).scrub == "done"
    after = service.backup(tmp_path / "after.db").destination
    assert b"QWXDONESECRET" not in after.read_bytes()

    pending = service.remember("QWXPENDINGSECRET " * 40)
    with old_snapshot(db_path):
        assert service.forget(pending.id).scrub == "pending"
        copy = service.backup(tmp_path / "pending.db").destination
        # The text is still in the live files (the scrub waits for the reader)...
        live = b"".join(
            path.read_bytes()
            for path in db_path.parent.iterdir()
            if path.name.startswith("memories")
        )
        assert b"QWXPENDINGSECRET" in live
    # ...but never in the copy, which takes each page's newest version.
    assert b"QWXPENDINGSECRET" not in copy.read_bytes()
    with MemoryService.open(Settings(db=copy, embedder="none")) as restored:
        assert restored.stats().count == 10


def test_backup_holds_no_memory_whose_ttl_has_passed(db_path: Path, tmp_path: Path) -> None:
    # The purge inside reads runs at most every purge_interval_seconds: an expired memory
    # not purged yet was copied whole into a backup taken meanwhile.
    clock = FakeClock(datetime(2026, 12, 6, 12, 0, tzinfo=UTC))
    settings = Settings(db=db_path, embedder="none", purge_interval_seconds=3600)
    with MemoryService.open(settings, clock=clock) as service:
        for index in range(10):
            service.remember(f"filler {index}")
        service.remember("QWXEXPIREDSECRET " * 40, ttl_seconds=60)
        clock.advance(120)
        copy = service.backup(tmp_path / "after-expiry.db").destination
    assert b"QWXEXPIREDSECRET" not in copy.read_bytes()
    with MemoryService.open(Settings(db=copy, embedder="none")) as restored:
        assert restored.stats().count == 10


def test_backup_on_a_full_disk_still_purges_and_copies(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The purge before the copy is a write: on a full disk it failed, and with it the
    # backup, which reads the database and writes elsewhere and worked before the purge
    # came (review rj57). As forget does, the reserve beside the database makes room.
    clock = FakeClock(datetime(2026, 12, 6, 12, 0, tzinfo=UTC))
    settings = Settings(db=db_path, embedder="none", purge_interval_seconds=3600)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember("kept")
        service.remember("QWXEXPIREDSECRET " * 40, ttl_seconds=60)
        clock.advance(120)
        store = service.store
        purge, release = store.purge_expired, store.release_reserve
        released: list[bool] = []

        def full_until_released(now: datetime) -> int:
            if not released:
                raise DiskFullError("the disk holding the database is full")
            return purge(now)

        def release_reserve() -> bool:
            released.append(release())
            return released[-1]

        monkeypatch.setattr(store, "purge_expired", full_until_released)
        monkeypatch.setattr(store, "release_reserve", release_reserve)
        result = service.backup(tmp_path / "copy.db")
    assert released == [True]
    assert result.memories == 1
    assert b"QWXEXPIREDSECRET" not in result.destination.read_bytes()


def test_backup_refuses_a_name_of_the_database_own_files(
    service: MemoryService, db_path: Path
) -> None:
    # Not there yet, but recalld writes (the vector graph, the reserve) or deletes (a legacy
    # vector file) files of these names beside the database: a backup there would be lost.
    service.remember("something")
    for name in ("-vectors-hashing-256.graph.npz", "-vectors-old.npz", "-journal"):
        destination = db_path.parent / f"{db_path.name}{name}"
        with pytest.raises(StorageError, match="own files"):
            service.backup(destination)
        assert not destination.exists()
    # Review 56f: other names beside the database are the user's to take (a dated copy).
    for name in ("-2026-12-06", "-backup.db", "-walrus.db"):
        result = service.backup(db_path.parent / f"{db_path.name}{name}")
        assert result.memories == 1


def test_backup_refuses_the_own_file_names_beside_a_symlinked_database(tmp_path: Path) -> None:
    # Through a symlink SQLite keeps its journals beside the file the link resolves to, and
    # recalld its reserve and vector files beside the link: names of both are refused.
    (tmp_path / "real").mkdir()
    (tmp_path / "link").mkdir()
    real = tmp_path / "real" / "m.db"
    link = tmp_path / "link" / "m.db"
    link.symlink_to(real)
    settings = Settings(db=link, synchronous="NORMAL", embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("something")
        for destination in (
            tmp_path / "link" / "m.db-vectors-old.npz",
            tmp_path / "link" / "m.db-vectors-hashing-256.graph.npz",
            tmp_path / "real" / "m.db-journal",
        ):
            with pytest.raises(StorageError, match="own files"):
                service.backup(destination)
            assert not destination.exists()
        assert service.backup(tmp_path / "link" / "m.db-2026-12-06").memories == 1


def test_backup_leaves_one_name_with_the_live_files_mode(
    service: MemoryService, db_path: Path, tmp_path: Path
) -> None:
    service.remember("something")
    os.chmod(db_path, 0o640)
    target = tmp_path / "out"
    target.mkdir()
    service.backup(target / "copy.db")
    copy = target / "copy.db"
    assert [path.name for path in target.iterdir()] == ["copy.db"]  # no temporary name left
    assert copy.stat().st_nlink == 1
    assert copy.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize(
    ("failure", "published"), [(errno.EPERM, True), (errno.ENOTSUP, True), (errno.EIO, False)]
)
def test_backup_renames_only_where_hard_links_are_missing(
    service: MemoryService,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    failure: int,
    published: bool,
) -> None:
    # Review 56f: any failure of os.link fell back to rename; an I/O error is a failure.
    service.remember("something")

    def no_link(source: object, target: object) -> None:
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(os, "link", no_link)
    target = tmp_path / "out"
    target.mkdir()
    if published:
        assert service.backup(target / "copy.db").memories == 1
        assert [path.name for path in target.iterdir()] == ["copy.db"]
    else:
        with pytest.raises(StorageError, match="failed"):
            service.backup(target / "copy.db")
        assert list(target.iterdir()) == []


def test_backup_that_runs_out_of_disk_after_the_copy_says_so(
    service: MemoryService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An fsync refused for space (review 56f) was a StorageError, not a DiskFullError.
    service.remember("something")
    synced = os.fsync

    def full(descriptor: int) -> None:
        if os.path.isfile(os.readlink(f"/proc/self/fd/{descriptor}")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        synced(descriptor)

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "out"
    target.mkdir()
    with pytest.raises(DiskFullError, match="full"):
        service.backup(target / "copy.db")
    assert list(target.iterdir()) == []


def test_backup_of_a_damaged_database_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    # The backup API copies pages as they are: a damaged page of the memories table made a
    # damaged copy, reported as "backed up ... N memories", found only at restore time
    # (adversarial pass d61).
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as service:
        for index in range(300):
            service.remember(f"memory {index} " + "x" * 500)
    damage_a_memories_leaf(db)
    target = tmp_path / "out"
    target.mkdir()
    with MemoryService.open(settings) as service, pytest.raises(StorageError) as refused:
        service.backup(target / "copy.db")
    message = str(refused.value)
    assert f"{db} is damaged" in message
    assert "no backup was written" in message
    assert list(target.iterdir()) == []


def test_backup_to_a_path_written_as_a_directory_is_refused(
    service: MemoryService, tmp_path: Path
) -> None:
    # The library took "…/tonight/" as the file "…/tonight" (adversarial pass d61).
    with pytest.raises(ValidationError) as refused:
        service.backup(f"{tmp_path / 'tonight'}/")
    assert refused.value.field == "destination"
    assert not (tmp_path / "tonight").exists()
