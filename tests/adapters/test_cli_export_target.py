"""``recalld export FILE`` never replaces the database it exports, under any spelling."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.service import MemoryService


@pytest.mark.parametrize(
    "spelling", ["itself", "relative", "symlink", "hard link", "directory symlink", "wal"]
)
def test_export_refuses_to_write_over_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    database = tmp_path / "memories.db"
    settings = Settings(db=database, embedder="hashing", graph_extractor="none")
    with MemoryService.open(settings) as memory:
        memory.remember("Anna moved to Paris")
    monkeypatch.chdir(tmp_path)
    target = {
        "itself": str(database),
        "relative": "./memories.db",
        "symlink": "alias.db",
        "hard link": "twin.db",
        "directory symlink": str(tmp_path / "link" / "memories.db"),
        "wal": "memories.db-wal",
    }[spelling]
    if spelling == "symlink":
        (tmp_path / "alias.db").symlink_to(database)
    elif spelling == "hard link":
        os.link(database, tmp_path / "twin.db")
    elif spelling == "directory symlink":
        (tmp_path / "link").symlink_to(tmp_path)
    result = CliRunner().invoke(cli, ["--db", str(database), "export", target])
    assert result.exit_code == 2, result.output
    assert "Invalid value for FILE" in result.output
    assert "is the database itself or one of its own files" in result.output
    with MemoryService.open(settings) as memory:
        assert [item.content for item in memory.list_memories().memories] == ["Anna moved to Paris"]


def test_export_beside_the_database_still_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=database, embedder="hashing")) as memory:
        memory.remember("Anna moved to Paris")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--db", str(database), "export", "memories.db.jsonl"])
    assert result.exit_code == 0, result.output
    assert "Anna moved to Paris" in (tmp_path / "memories.db.jsonl").read_text()


def test_export_of_a_missing_database_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "mistyped.db"
    result = CliRunner().invoke(cli, ["--db", str(missing), "export", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 1
    assert f"there is no database at {missing} to export" in result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == []
