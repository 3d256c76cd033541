"""`recalld restore BACKUP` puts a backup in place of the database as the printed commands
do, and refuses while a process has it open (adversarial pass d69): copied by hand beside
the old database's `-wal`, a backup was read through that log, the restore silently undone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.sqlite_wal import committed_frames

REPOSITORY = Path(__file__).resolve().parent.parent.parent
# A process that has the database open (a server) until its stdin closes.
HOLDER = """
import sys
import recalld
service = recalld.open(sys.argv[1])
service.remember("written by the running process")
print("open", flush=True)
sys.stdin.read()
service.close()
"""


def _settings(db: Path) -> Settings:
    return Settings(db=db, embedder="none", graph_extractor="none")


def _invoke(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(arguments), env={"RECALLD_EMBEDDER": "none"})
    return result.exit_code, result.output


def _refused(*arguments: str) -> str:
    """The real entry point's refusal (one line on stderr, exit 1): its stderr."""
    completed = subprocess.run(
        [sys.executable, "-m", "recalld", *arguments],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    return completed.stderr


def test_cli_restore_puts_the_backup_in_place_and_keeps_the_old_database_with_its_log(
    tmp_path: Path,
) -> None:
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("written before the backup")
        service.backup(backup)
        last = service.remember("written after the backup").id
        # As a crash leaves it: the newest write only in the -wal.
        crashed_db, crashed_log = db.read_bytes(), Path(f"{db}-wal").read_bytes()
    db.write_bytes(crashed_db)
    Path(f"{db}-wal").write_bytes(crashed_log)
    assert committed_frames(Path(f"{db}-wal")) > 0
    code, output = _invoke("--db", str(db), "restore", str(backup), "--json")
    assert code == 0, output
    done = json.loads(output)
    assert (done["old"], done["old_log"]) == (f"{db}.old", f"{db}.old-wal")
    assert not Path(f"{db}-wal").exists()
    with MemoryService.open(_settings(db)) as restored:
        assert [memory.content for memory in restored.list_memories().memories] == [
            "written before the backup"
        ]
    with MemoryService.open(_settings(Path(f"{db}.old"))) as old:
        assert old.get(last).content == "written after the backup"  # read through its log


def test_cli_restore_refuses_while_a_process_has_the_database_open(tmp_path: Path) -> None:
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("written before the backup")
        service.backup(backup)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)],
        cwd=REPOSITORY,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "open"
        before = sorted(path.name for path in tmp_path.iterdir())
        refusal = _refused("--db", str(db), "restore", str(backup))
        assert "open in another process" in refusal
        assert "nothing was changed" in refusal
        assert sorted(path.name for path in tmp_path.iterdir()) == before
    finally:
        assert holder.stdin is not None
        assert holder.stdout is not None
        holder.stdin.close()
        holder.wait(timeout=60)
        holder.stdout.close()
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1


def test_cli_restore_refuses_what_is_not_a_recalld_database(tmp_path: Path) -> None:
    db, export = tmp_path / "memories.db", tmp_path / "memories.jsonl"
    with MemoryService.open(_settings(db)) as service:
        service.remember("kept")
    export.write_text('{"content": "an export, not a backup"}\n')
    assert "not a recalld database" in _refused("--db", str(db), "restore", str(export))
    assert "the database itself" in _refused("--db", str(db), "restore", str(db))
    assert not Path(f"{db}.old").exists()
    with MemoryService.open(_settings(db)) as untouched:
        assert untouched.stats().count == 1


def test_cli_restore_mends_a_backup_copied_by_hand_beside_the_old_log(tmp_path: Path) -> None:
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("written before the backup")
        service.backup(backup)
        service.remember("written after the backup")
        crashed_log = Path(f"{db}-wal").read_bytes()
    Path(f"{db}-wal").write_bytes(crashed_log)
    db.write_bytes(backup.read_bytes())  # `cp backup.db memories.db`, the log left beside it
    refusal = _refused("--db", str(db), "stats")
    assert "restore BACKUP" in refusal
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1


def test_cli_restore_refuses_a_backup_whose_newest_writes_are_in_its_own_log(
    tmp_path: Path,
) -> None:
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("kept")
        service.backup(backup)
    with MemoryService.open(_settings(backup)) as used:  # the backup opened as a database
        used.remember("written into the backup")
        crashed = backup.read_bytes(), Path(f"{backup}-wal").read_bytes()
    backup.write_bytes(crashed[0])
    Path(f"{backup}-wal").write_bytes(crashed[1])  # as a crash leaves them
    refusal = _refused("--db", str(db), "restore", str(backup))
    assert "backup.db-wal" in refusal
    assert "nothing was changed" in refusal
    assert not Path(f"{db}.old").exists()


class _Crash(BaseException):
    """The process killed at that step (nothing after it runs, no handler sees it)."""


def test_cli_restore_killed_before_the_copy_goes_in_leaves_the_database_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed just before the copy was put in place, a restore left no database at the
    path (moved to .old, its -wal too): the next start created an empty one (review of
    pass d69). Now the database and its log are where they were, and restore again works."""
    from recalld.store import sqlite_restore

    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("written before the backup")
        service.backup(backup)
        service.remember("written after the backup")
        crashed = db.read_bytes(), Path(f"{db}-wal").read_bytes()
    db.write_bytes(crashed[0])
    Path(f"{db}-wal").write_bytes(crashed[1])  # its newest write only in the log
    replace = os.replace

    def killed(source: object, target: object) -> None:
        if Path(str(target)) == db:
            raise _Crash
        replace(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(_Crash):
        sqlite_restore.restore_database(backup, db)
    monkeypatch.setattr(os, "replace", replace)
    assert db.exists()
    with MemoryService.open(_settings(db)) as after:
        assert after.stats().count == 2  # the database as it was, read through its log
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1
    with MemoryService.open(_settings(Path(f"{db}.old"))) as old:
        assert old.stats().count == 2


def test_cli_restore_refuses_to_overwrite_an_earlier_restores_old_database(
    tmp_path: Path,
) -> None:
    """A second restore silently replaced <db>.old, the database the first one replaced,
    perhaps the only copy of its memories (review of pass d69)."""
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("in the backup")
        service.backup(backup)
        service.remember("only in the database the first restore replaces")
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    kept = Path(f"{db}.old").read_bytes()
    refusal = _refused("--db", str(db), "restore", str(backup))
    assert "memories.db.old exists" in refusal
    assert Path(f"{db}.old").read_bytes() == kept
    with MemoryService.open(_settings(Path(f"{db}.old"))) as old:
        assert old.stats().count == 2


def test_cli_restore_gives_the_copy_the_mode_of_the_database_it_replaces(tmp_path: Path) -> None:
    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("kept")
        service.backup(backup)
    db.chmod(0o640)  # shared with a group (a reader process)
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    assert db.stat().st_mode & 0o777 == 0o640


def test_cli_restore_refuses_a_backup_a_newer_recalld_wrote(tmp_path: Path) -> None:
    """Restored, a newer recalld's backup could not be opened, and the database it
    replaced was moved aside (review of pass d69)."""
    import apsw

    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("kept")
        service.backup(backup)
    connection = apsw.Connection(str(backup))
    connection.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES (9999, '2030-01-01')"
    )
    connection.close()
    refusal = _refused("--db", str(db), "restore", str(backup))
    assert "written by a newer recalld (schema 9999" in refusal
    assert not Path(f"{db}.old").exists()
    with MemoryService.open(_settings(db)) as untouched:
        assert untouched.stats().count == 1


def test_cli_restore_killed_after_the_copy_goes_in_is_finished_by_a_second_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed once the copy is in place, before the old log beside it was unlinked: the
    copy is refused on opening (that log is the old database's), and a second restore
    unlinks it (it is kept at .old-wal) and says so, keeping <db>.old."""
    from recalld.store import sqlite_restore
    from recalld.store.sqlite_file import ForeignLogError

    db, backup = tmp_path / "memories.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("written before the backup")
        service.backup(backup)
        service.remember("written after the backup")
        crashed = db.read_bytes(), Path(f"{db}-wal").read_bytes()
    db.write_bytes(crashed[0])
    Path(f"{db}-wal").write_bytes(crashed[1])
    unlink = Path.unlink

    def killed(path: Path, missing_ok: bool = False) -> None:
        if path.name == "memories.db-wal":
            raise _Crash
        unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", killed)
    with pytest.raises(_Crash):
        sqlite_restore.restore_database(backup, db)
    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(ForeignLogError):
        MemoryService.open(_settings(db))
    refusal = _refused("--db", str(db), "restore", str(backup))
    assert "the earlier restore was finished" in refusal
    with MemoryService.open(_settings(db)) as restored:
        assert restored.stats().count == 1
    with MemoryService.open(_settings(Path(f"{db}.old"))) as old:
        assert old.stats().count == 2


def test_cli_restore_undoes_a_restore_from_the_old_database_moved_away(tmp_path: Path) -> None:
    """Undoing a restore (its <db>.old given as the backup) was refused, and the refused
    attempt left an empty <db>.old-wal (SQLite opened the file to check it), so restoring
    from the moved <db>.old was refused too (review of pass d69)."""
    db, backup, undo = tmp_path / "memories.db", tmp_path / "backup.db", tmp_path / "undo.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("in the backup")
        service.backup(backup)
        service.remember("only in the database the restore replaces")
    code, output = _invoke("--db", str(db), "restore", str(backup))
    assert code == 0, output
    refusal = _refused("--db", str(db), "restore", f"{db}.old")
    assert "memories.db.old exists" in refusal
    assert not Path(f"{db}.old-wal").exists()  # the refusal read nothing
    Path(f"{db}.old").rename(undo)
    code, output = _invoke("--db", str(db), "restore", str(undo))
    assert code == 0, output
    with MemoryService.open(_settings(db)) as undone:
        assert undone.stats().count == 2
