"""Backups: a consistent copy while another process writes, holding every write acknowledged
before it began; and the refusals (an existing file, a missing directory)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService

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
