"""The restore commands `recalld backup` prints keep the replaced database whole
(adversarial pass c63): they deleted its `-wal`, which after a crash (the usual reason to
restore) holds its newest acknowledged writes, so `<db>.old` lost them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.service import MemoryService

REPOSITORY = Path(__file__).resolve().parent.parent.parent
# A server that wrote and then died (kill -9, OOM, a power cut): no checkpoint on close.
CRASHED_WRITER = """
import os, sys
import recalld
service = recalld.open(sys.argv[1])
print(service.remember("acknowledged just before the crash").id, flush=True)
os._exit(0)
"""


def _backup_and_restore_commands(db: Path, copy: Path) -> list[str]:
    result = CliRunner().invoke(cli, ["--db", str(db), "backup", str(copy)])
    assert result.exit_code == 0, result.output
    # The restore "by hand" (the hint names `recalld restore` first): its `mv` and `cp` lines.
    return [
        line.strip() for line in result.output.splitlines() if line.startswith(("  mv ", "  cp "))
    ]


def _crash_after_a_write(db: Path) -> str:
    crashed = subprocess.run(
        [sys.executable, "-c", CRASHED_WRITER, str(db)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert Path(f"{db}-wal").stat().st_size > 0  # the crash left its write in the log
    return crashed.stdout.split()[-1]


def test_cli_restore_commands_keep_the_replaced_database_with_its_log(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("written before the backup")
    restore = _backup_and_restore_commands(db, tmp_path / "copy.db")
    last = _crash_after_a_write(db)
    subprocess.run(["sh", "-e", "-c", "\n".join(restore)], cwd=tmp_path, check=True)
    with MemoryService.open(Settings(db=db, embedder="none")) as restored:
        assert restored.stats().count == 1  # the backup, and nothing of the old log
    with MemoryService.open(Settings(db=Path(f"{db}.old"), embedder="none")) as old:
        assert old.get(last).content == "acknowledged just before the crash"


def test_a_second_restore_leaves_no_earlier_log_beside_the_replaced_database(
    tmp_path: Path,
) -> None:
    # Review of pass c63: the first restore (after a crash) kept `<db>.old-wal`; the second,
    # after a clean stop (no `-wal`), moved the database over `<db>.old` and left that
    # log beside it, which SQLite then applied to a file it was never written for:
    # `<db>.old` read "database disk image is malformed".
    db = tmp_path / "live.db"
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        service.remember("the first database")
    first = _backup_and_restore_commands(db, tmp_path / "first.db")
    _crash_after_a_write(db)
    subprocess.run(["sh", "-e", "-c", "\n".join(first)], cwd=tmp_path, check=True)
    assert Path(f"{db}.old-wal").exists()
    with MemoryService.open(Settings(db=db, embedder="none")) as service:
        kept = service.remember("written after the first restore").id
    assert not Path(f"{db}-wal").exists()  # stopped cleanly: nothing to keep beside it
    second = _backup_and_restore_commands(db, tmp_path / "second.db")
    subprocess.run(["sh", "-e", "-c", "\n".join(second)], cwd=tmp_path, check=True)
    assert not Path(f"{db}.old-wal").exists()
    with MemoryService.open(Settings(db=Path(f"{db}.old"), embedder="none")) as old:
        assert old.get(kept).content == "written after the first restore"
        assert old.stats().count == 2
