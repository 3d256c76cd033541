"""``recalld migrate`` refuses a target that is its source under another spelling."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.errors import ValidationError
from recalld.moving import copy_store
from recalld.service import MemoryService
from recalld.store.factory import open_store


def _settings(db: Path) -> Settings:
    return Settings(db=db, embedder="hashing", graph_extractor="none", recall_catch_up=0)


@pytest.mark.parametrize("spelling", ["absolute", "symlink", "directory symlink"])
def test_migrate_refuses_the_source_itself_spelled_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    source = tmp_path / "memories.db"
    with MemoryService.open(_settings(source)) as memory:
        memory.remember("Anna moved to Paris")
    monkeypatch.chdir(tmp_path)
    if spelling == "absolute":
        target = str(source)
    elif spelling == "symlink":
        (tmp_path / "alias.db").symlink_to(source)
        target = "alias.db"
    else:
        (tmp_path / "link").symlink_to(tmp_path)
        target = str(tmp_path / "link" / "memories.db")
    result = CliRunner().invoke(cli, ["--db", "memories.db", "migrate", "--to", target])
    assert result.exit_code != 0
    assert "to: the source and the target are the same database" in str(result.exception)
    with MemoryService.open(_settings(source)) as memory:
        # Nothing claimed as copied from itself.
        assert memory.store.tables.migrated(str(source.resolve())) == []
        assert memory.stats().count == 1


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_migrate_refuses_a_file_of_the_source_as_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    source = tmp_path / "memories.db"
    with MemoryService.open(_settings(source)) as memory:
        memory.remember("Anna moved to Paris")
    monkeypatch.chdir(tmp_path)
    target = f"memories.db{suffix}"
    result = CliRunner().invoke(cli, ["--db", "memories.db", "migrate", "--to", target])
    assert result.exit_code != 0
    assert "is the source or one of its own files" in str(result.exception)
    assert not (tmp_path / target).exists()


def test_copy_store_refuses_the_source_itself_under_another_path(tmp_path: Path) -> None:
    # The library's own check (the CLI refuses before it opens anything).
    source = tmp_path / "memories.db"
    with MemoryService.open(_settings(source)) as memory:
        memory.remember("Anna moved to Paris")
    alias = tmp_path / "alias.db"
    alias.symlink_to(source)
    source_store, target_store = open_store(_settings(source)), open_store(_settings(alias))
    try:
        with pytest.raises(ValidationError, match="the source and the target are the same"):
            copy_store(source_store, target_store)
    finally:
        source_store.close()
        target_store.close()
    with MemoryService.open(_settings(source)) as memory:
        assert memory.store.tables.migrated(str(source.resolve())) == []


def test_copy_store_between_two_in_memory_databases_copies() -> None:
    # Each ":memory:" store is a database of its own: not "the same database".
    settings = _settings(Path(":memory:"))
    source = MemoryService(open_store(settings), settings)
    target_store = open_store(settings)
    try:
        source.remember("Anna moved to Paris")
        report = copy_store(source.store, target_store)
        assert report.copied["memories"] == 1
        with pytest.raises(ValidationError, match="the source and the target are the same"):
            copy_store(source.store, source.store)
    finally:
        source.close()
        target_store.close()


@pytest.mark.parametrize("option", ["--to", "--from"])
def test_migrate_refuses_a_location_that_is_not_utf8_as_db_is(tmp_path: Path, option: str) -> None:
    # --db refused a non-UTF-8 name, but --to and --from were set on the settings without
    # their checks (model_copy): the copy failed with a UnicodeEncodeError traceback and
    # left a file of that name behind (integration read, stop 66).
    source = tmp_path / "memories.db"
    with MemoryService.open(_settings(source)) as memory:
        memory.remember("Anna moved to Paris")
    named = str(tmp_path / "b\udcffd.db")  # the byte 0xff of a Latin-1 argument
    other = ["--to", str(tmp_path / "copy.db")] if option == "--from" else []
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", option, named, *other])
    assert isinstance(result.exception, ValidationError)
    assert result.exception.field == option.removeprefix("--")
    assert "0xff, which is not UTF-8" in result.exception.message
    made = [path.name for path in tmp_path.iterdir() if not path.name.startswith("memories.db")]
    assert made == []
