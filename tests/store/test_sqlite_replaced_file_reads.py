"""A database file moved or replaced under a running process (a backup restored while a
server runs): the process answers no read from the old file either (adversarial pass c68)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
from tests.restore_support import restore_under

REPOSITORY = Path(__file__).resolve().parents[2]
# A process holding the database open, as a server does: it writes, says so, waits for the
# test to restore a backup in its place, then lists what it has.
RUNNING_PROCESS = """
import sys
from pathlib import Path
from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
settings = Settings(db=Path(sys.argv[1]), embedder="none", graph_extractor="none")
with MemoryService.open(settings) as server:
    server.remember("written after the backup")
    print("written", flush=True)
    sys.stdin.readline()
    try:
        listed = server.list_memories(limit=50).memories
    except StorageError as error:
        print("refused:", error, flush=True)
    else:
        print("listed:", sorted(memory.content for memory in listed), flush=True)
"""


def _settings(db: Path) -> Settings:
    return Settings(db=db, embedder="none", graph_extractor="none")


def test_a_read_after_the_database_was_restored_under_the_process_is_refused(
    tmp_path: Path,
) -> None:
    # Only writes were refused: the server went on listing, searching and recalling from
    # the moved file, what the restore was meant to take away included, for as long as it
    # ran; a thread whose connection opened afterwards read the restored file.
    db, backup = tmp_path / "live.db", tmp_path / "backup.db"
    with MemoryService.open(_settings(backup)) as copy:  # closed: one file, as a backup is
        copy.remember("before the backup")
    with MemoryService.open(_settings(db)) as service:
        service.remember("after the backup: the restore takes it away")
        restore_under(db, backup)
        with pytest.raises(StorageError, match="nothing was read or written"):
            service.list_memories(limit=50)
        with pytest.raises(StorageError, match="moved, deleted or replaced"):
            service.search("backup")
        answers: list[str] = []

        def read_from_a_new_thread() -> None:
            try:
                service.list_memories(limit=50)
            except StorageError as error:
                answers.append(str(error))
            else:
                answers.append("answered")

        reader = threading.Thread(target=read_from_a_new_thread)
        reader.start()
        reader.join()
        assert len(answers) == 1
        assert "moved, deleted or replaced" in answers[0]
    with MemoryService.open(_settings(db)) as restarted:
        assert [m.content for m in restarted.list_memories(limit=50).memories] == [
            "before the backup"
        ]


@pytest.mark.slow  # a Python process started (about 2 s of imports)
def test_another_process_answers_nothing_from_a_database_restored_under_it(
    tmp_path: Path,
) -> None:
    # The same with a real process holding the file, as `recalld serve` or `mcp` does.
    db = tmp_path / "live.db"
    with MemoryService.open(_settings(db)) as service:
        service.remember("before the backup")
        backup = service.backup(tmp_path / "backup.db").destination
    server = subprocess.Popen(
        [sys.executable, "-c", RUNNING_PROCESS, str(db)],
        cwd=REPOSITORY,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "written"
        restore_under(db, backup)
        output, errors = server.communicate("go\n", timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=60)
    assert server.returncode == 0, errors
    assert output.startswith("refused:"), output
    assert "moved, deleted or replaced" in output
    with MemoryService.open(_settings(db)) as restarted:
        assert [m.content for m in restarted.list_memories(limit=50).memories] == [
            "before the backup"
        ]
