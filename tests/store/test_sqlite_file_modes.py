"""Memories on disk are their owner's alone: with the usual umask (022) every file recalld
creates that holds (or sits beside) memories is owner-only, and the data directory it
creates is 0700; a database its owner chose to share keeps its mode, and recalld's own
files beside it follow that mode."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore
from tests.conftest import FakeClock
from tests.semantic_support import semantic_settings


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    """The umask most systems give a user: files 0644 and directories 0755 unless asked."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_database_and_its_files_are_owner_only(tmp_path: Path) -> None:
    directory = tmp_path / "data" / "recalld"
    path = directory / "recalld.db"
    store = SQLiteStore(path, create_directory=True)
    try:
        with store.tables.copy_lock(lambda: None):
            pass
        # While it is open its write-ahead log and shared memory exist beside it.
        beside = sorted(
            entry.name
            for entry in directory.iterdir()
            if entry.name != path.name and _mode(entry) != 0o600
        )
        assert _mode(path) == 0o600
        assert Path(f"{path}-wal").exists()
        assert Path(f"{path}-reserve").exists()
        assert Path(f"{path}-migrate.lock").exists()
        assert beside == []
    finally:
        store.close()
    assert _mode(directory) == 0o700


def test_a_shared_database_keeps_its_mode_and_its_files_follow_it(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    SQLiteStore(path, reserve_bytes=0).close()
    path.chmod(0o640)  # its owner shares it with a group on purpose
    store = SQLiteStore(path)
    try:
        with store.tables.copy_lock(lambda: None):
            pass
        assert _mode(path) == 0o640
        assert _mode(Path(f"{path}-reserve")) == 0o640
        assert _mode(Path(f"{path}-migrate.lock")) == 0o640
    finally:
        store.close()


def test_an_existing_empty_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "touched.db"
    path.touch(mode=0o640)
    SQLiteStore(path, reserve_bytes=0).close()
    assert _mode(path) == 0o640


def test_a_new_export_is_owner_only(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    runner = CliRunner()
    remembered = runner.invoke(cli, ["--db", str(database), "remember", "my pin is 4321"])
    assert remembered.exit_code == 0, remembered.output
    dump = tmp_path / "dump.jsonl"
    exported = runner.invoke(cli, ["--db", str(database), "export", str(dump)])
    assert exported.exit_code == 0, exported.output
    assert "4321" in dump.read_text()
    assert _mode(dump) == 0o600
    assert sorted(entry.name for entry in tmp_path.iterdir() if "partial" in entry.name) == []


def test_the_saved_vector_graph_is_owner_only(db_path: Path, clock: FakeClock) -> None:
    settings = semantic_settings(db_path, vector_ann_threshold=10)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many(
            [{"content": f"entry{index} about the garden"} for index in range(30)]
        )
        service.new_worker().run_until_idle()
        service.search("entry1", mode="vector", min_score=0)  # builds the graph, saved on close
    graphs = list(db_path.parent.glob(f"{db_path.name}-vectors-*"))
    assert graphs
    assert {_mode(graph) for graph in graphs} == {0o600}
    assert list(db_path.parent.glob("*.tmp")) == []


@pytest.fixture
def open_directory() -> Iterator[Path]:
    """A directory every local user may enter, as ~/.local/share/recalld was (pytest's
    own temporary directories are private: nothing in them is readable by others)."""
    directory = Path(tempfile.mkdtemp(prefix="recalld-modes-", dir="/tmp"))
    directory.chmod(0o755)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


def test_a_database_every_user_can_read_is_named_in_a_warning(
    open_directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = open_directory / "old.db"
    SQLiteStore(path, reserve_bytes=0).close()
    path.chmod(0o640)  # shared with a group on purpose: no warning
    with caplog.at_level("WARNING", logger="recalld.store.file_modes"):
        SQLiteStore(path, reserve_bytes=0).close()
    assert caplog.records == []
    path.chmod(0o644)  # as an earlier recalld left it
    with caplog.at_level("WARNING", logger="recalld.store.file_modes"):
        SQLiteStore(path, reserve_bytes=0).close()
        SQLiteStore(path, reserve_bytes=0).close()  # once a process, not at every open
    assert [record.getMessage() for record in caplog.records] == [
        f"{path} can be read by every user of this machine (mode 0644); `chmod 600 {path}*`"
        " keeps its memories yours"
    ]


def test_a_readable_database_in_a_private_directory_is_not_warned_about(
    open_directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # `chmod 700` on the directory, as the README says, is enough: no other user can
    # reach the file. The warning went on naming it on every command.
    directory = open_directory / "recalld"
    directory.mkdir()
    path = directory / "old.db"
    SQLiteStore(path, reserve_bytes=0).close()
    path.chmod(0o644)
    directory.chmod(0o700)
    with caplog.at_level("WARNING", logger="recalld.store.file_modes"):
        SQLiteStore(path, reserve_bytes=0).close()
    assert caplog.records == []


def test_the_vector_graph_of_a_shared_database_is_shared_alike(
    db_path: Path, clock: FakeClock
) -> None:
    # Saved 0600 whatever the database's mode, a graph written by one user of a group
    # sharing the database was unreadable to the others: each rebuilt it, with a warning,
    # and saved it back unreadable to the first.
    settings = semantic_settings(db_path, vector_ann_threshold=10)
    with MemoryService.open(settings, clock=clock) as service:
        service.remember_many(
            [{"content": f"entry{index} about the garden"} for index in range(30)]
        )
        service.new_worker().run_until_idle()
    db_path.chmod(0o640)  # its owner shares it with a group on purpose
    with MemoryService.open(settings, clock=clock) as service:
        service.search("entry1", mode="vector", min_score=0)  # builds the graph, saved on close
    graphs = list(db_path.parent.glob(f"{db_path.name}-vectors-*"))
    assert graphs
    assert {_mode(graph) for graph in graphs} == {0o640}


def test_a_new_database_behind_a_symbolic_link_is_owner_only(tmp_path: Path) -> None:
    # The link made first, its target not yet there: created with the umask's mode.
    target = tmp_path / "elsewhere" / "memories.db"
    target.parent.mkdir()
    link = tmp_path / "link.db"
    link.symlink_to(target)
    SQLiteStore(link, reserve_bytes=0).close()
    assert _mode(target) == 0o600
    assert link.is_symlink()
