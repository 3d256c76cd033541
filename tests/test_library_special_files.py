"""A database path naming a device, pipe or socket is refused by name; a damaged file is named.

Before, ``recalld.open("/dev/null")`` or a named pipe failed inside SQLite with
``StorageError: IOError: disk I/O error``, naming neither the path nor why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import recalld
from recalld.errors import StorageError, ValidationError
from tests.store.sqlite_damage import damage_a_memories_leaf


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_no_database(tmp_path: Path) -> None:
    pipe = tmp_path / "memories.db"
    os.mkfifo(pipe)
    with pytest.raises(StorageError, match="is not a regular file") as refused:
        recalld.open(pipe, embedder="none")
    assert str(pipe) in str(refused.value)


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_a_device_is_no_database() -> None:
    with pytest.raises(StorageError, match=r"/dev/null is not a regular file"):
        recalld.open("/dev/null", embedder="none")


def test_open_a_database_damaged_inside_names_the_file(tmp_path: Path) -> None:
    # Its header intact, its pages overwritten: SQLite finds the damage on a later read,
    # and the error was "StorageError: CorruptError: database disk image is malformed".
    path = tmp_path / "damaged.db"
    with recalld.open(path, embedder="none", graph_extractor="none") as memory:
        for index in range(400):
            memory.remember(f"memory number {index} " + "filler words " * 40)
    size = path.stat().st_size
    with path.open("r+b") as damaged:
        for offset in range(size // 2, size - 8192, 3 * 4096):
            damaged.seek(offset)
            damaged.write(b"\xde\xad\xbe\xef" * 256)
    with (
        pytest.raises(StorageError) as caught,
        recalld.open(path, embedder="none", graph_extractor="none") as memory,
    ):
        memory.list_memories(limit=1000)
    assert str(caught.value).startswith(f"{path} is damaged (database disk image is malformed)")
    assert "restore a backup" in str(caught.value)


def test_open_a_truncated_database_names_the_file_and_what_to_do(tmp_path: Path) -> None:
    # Cut short (a copy interrupted, a full disk when it was copied): SQLite finds it at
    # the first read, made before opening, which said "cannot read PATH: database disk
    # image is malformed" and nothing of what to do (adversarial pass c63).
    path = tmp_path / "truncated.db"
    with recalld.open(path, embedder="none", graph_extractor="none") as memory:
        for index in range(400):
            memory.remember(f"memory number {index} " + "filler words " * 40)
    with path.open("r+b") as cut:
        cut.truncate(path.stat().st_size // 2)
    with pytest.raises(StorageError) as caught:
        recalld.open(path, embedder="none", graph_extractor="none")
    assert str(caught.value).startswith(f"{path} is damaged (database disk image is malformed)")
    assert "restore a backup" in str(caught.value)
    assert path.stat().st_size > 0  # nothing was written to it


def test_a_database_found_damaged_takes_no_more_writes(tmp_path: Path) -> None:
    # A server kept writing into a file it had found damaged (the browser showed the
    # error, and the next edit or `remember` went in as if nothing were wrong), spreading
    # the damage a restore or `.recover` must undo (adversarial pass c63).
    path = tmp_path / "damaged.db"
    with recalld.open(path, embedder="none", graph_extractor="none") as memory:
        secret = memory.remember("a secret to forget").id
        for index in range(300):
            memory.remember(f"memory {index} " + "x" * 500)
    damage_a_memories_leaf(path)
    with recalld.open(path, embedder="none", graph_extractor="none") as memory:
        with pytest.raises(StorageError, match="is damaged"):
            memory.list_memories(limit=1000)
        with pytest.raises(StorageError) as refused:
            memory.remember("written into a file known to be damaged")
        assert str(refused.value).startswith(f"{path} is damaged")
        assert str(refused.value).endswith("nothing was written")
        assert "restore a backup" in str(refused.value)
        assert memory.search("known to be damaged") == []
        # Forget too (README, "How it behaves": forget it in a repaired copy).
        with pytest.raises(StorageError, match="is damaged"):
            memory.forget(secret)


def test_a_backup_or_import_path_holding_nul_is_refused_naming_it(tmp_path: Path) -> None:
    # memory.backup("copy\x00.db") purged, then failed with a bare "ValueError: embedded
    # null byte" naming nothing; import_file likewise (review of pass a66).
    with recalld.open(tmp_path / "memories.db", embedder="none") as memory:
        memory.remember("kept", ttl_seconds=3600)
        with pytest.raises(ValidationError, match="NUL") as refused:
            memory.backup(tmp_path / "copy\x00.db")
        assert refused.value.field == "destination"
        with pytest.raises(ValidationError, match="NUL") as refused:
            memory.import_file(str(tmp_path / "export\x00.jsonl"))
        assert refused.value.field == "path"
        assert memory.stats().count == 1
    assert sorted(path.name for path in tmp_path.iterdir() if "copy" in path.name) == []
