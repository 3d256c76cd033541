"""``recalld migrate --to`` from a SQLite file an older recalld wrote: a target that is
refused leaves the source as it was, so the older recalld still opens it; and a source a
newer recalld wrote is refused before any target is made (adversarial pass b66)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from recalld import moving
from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
from recalld.store import sqlite as sqlite_store
from recalld.store.migrations import MIGRATIONS, Execute
from recalld.tokens import TokenRegistry
from tests.conftest import FakeClock

KNOWN = len(MIGRATIONS)


def _source(path: Path, version: int) -> None:
    """A database with one memory, recorded at schema ``version`` (older or newer)."""
    settings = Settings(db=path, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as memory:
        memory.remember("Anna moved to Paris")
    connection = apsw.Connection(str(path))
    connection.execute("DELETE FROM schema_migrations WHERE version > ?", (version,))
    for number in range(KNOWN + 1, version + 1):
        connection.execute(
            "INSERT INTO schema_migrations VALUES (?, '2027-01-01T00:00:00Z')", (number,)
        )
    connection.execute(f"PRAGMA user_version = {version}")
    connection.close()


def _newest(path: Path) -> int:
    connection = apsw.Connection(str(path))
    try:
        row = connection.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return 0 if row is None else int(str(row[0]))
    finally:
        connection.close()


def test_a_refused_target_leaves_an_older_source_unmigrated(tmp_path: Path) -> None:
    source = tmp_path / "memories.db"
    _source(source, KNOWN - 1)
    target = tmp_path / "notes.db"
    target.write_text("my notes, not a database\n")
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert "is not a recalld database" in str(result.exception)
    assert _newest(source) == KNOWN - 1  # the recalld that wrote it still opens it
    assert target.read_text() == "my notes, not a database\n"


def test_a_source_a_newer_recalld_wrote_is_refused_before_a_target_is_made(
    tmp_path: Path,
) -> None:
    source = tmp_path / "memories.db"
    _source(source, KNOWN + 1)
    target = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert f"schema {KNOWN + 1}; this one knows up to {KNOWN}" in str(result.exception)
    assert not target.exists()
    assert _newest(source) == KNOWN + 1


def _older_copy(tmp_path: Path) -> tuple[Path, Path, Settings, str, str]:
    """A source with two memories and a copy of it as a recalld before schema 25 left it
    (no ledger); the source then forgot the second: (source, target, settings, kept id,
    forgotten id)."""
    source, target = tmp_path / "memories.db", tmp_path / "copy.db"
    settings = Settings(db=source, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as memory:
        kept = memory.remember("Anna moved to Paris").id
        secret = memory.remember("the door code is 4711").id
    first = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert first.exit_code == 0, first.output
    assert "note:" not in first.output  # a first copy adopts nothing
    # As a recalld before schema 25 left its copy: no ledger of what it wrote.
    connection = apsw.Connection(str(target))
    connection.execute("DELETE FROM migrated_memories")
    connection.close()
    with MemoryService.open(settings) as memory:
        memory.forget(secret)
    return source, target, settings, kept, secret


def test_a_copy_an_older_recalld_made_is_adopted_and_what_it_cannot_remove_is_said(
    tmp_path: Path,
) -> None:
    source, target, settings, kept, secret = _older_copy(tmp_path)
    again = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target), "--json"])
    assert again.exit_code == 0, again.output
    assert '"adopted":1' in again.stdout.replace(" ", "")
    said = " ".join(again.stderr.split())
    assert "note: 1 memory the target already held under the source's ids" in said
    assert "forget it in the target" in said
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")) as copy:
        assert copy.get(kept).content == "Anna moved to Paris"
        assert copy.get(secret).content == "the door code is 4711"  # what the note says
    # Adopted: a memory the source forgets from now on goes from the target too.
    with MemoryService.open(settings) as memory:
        memory.forget(kept)
    last = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert last.exit_code == 0, last.output
    assert "removed 1 memory the source no longer holds" in " ".join(last.stdout.split())
    assert "note:" not in last.stderr


def _failing_on(source: Path) -> Callable[[Execute], None]:
    """The last migration, failing on ``source`` alone: a file that passes the read-only
    check and then cannot be upgraded (a migration refusing what it finds, a lock another
    process holds), after the target was opened."""
    last = MIGRATIONS[-1]

    def migration(execute: Execute) -> None:
        row = execute("PRAGMA database_list").fetchone()
        if Path(str(row[2])).resolve() == source.resolve():
            raise StorageError(f"migration {KNOWN} cannot upgrade {source}")
        last(execute)

    return migration


def test_a_source_that_fails_to_open_leaves_no_target_file_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "memories.db"
    _source(source, KNOWN - 1)
    monkeypatch.setattr(sqlite_store, "MIGRATIONS", [*MIGRATIONS[:-1], _failing_on(source)])
    target = tmp_path / "copy.db"
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert f"migration {KNOWN} cannot upgrade" in str(result.exception)
    assert not [path.name for path in tmp_path.iterdir() if path.name.startswith("copy")]
    assert _newest(source) == KNOWN - 1


def test_a_source_that_fails_to_open_leaves_a_target_file_that_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "memories.db", tmp_path / "copy.db"
    _source(source, KNOWN - 1)
    _source(target, KNOWN)
    monkeypatch.setattr(sqlite_store, "MIGRATIONS", [*MIGRATIONS[:-1], _failing_on(source)])
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert _newest(target) == KNOWN
    connection = apsw.Connection(str(target))
    try:
        assert connection.execute("SELECT content FROM memories").fetchall() == [
            ("Anna moved to Paris",)
        ]
    finally:
        connection.close()


def _adopted(output: str) -> int:
    return int(json.loads(output)["adopted"])


def test_a_copy_this_recalld_made_adopts_nothing_when_run_again(
    tmp_path: Path, clock: FakeClock
) -> None:
    source, target = tmp_path / "memories.db", tmp_path / "copy.db"
    settings = Settings(db=source, embedder="none", graph_extractor="none")
    with MemoryService.open(settings, clock=clock) as memory:
        ids = [memory.remember(f"note {index}").id for index in range(4)]
    first = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target), "--json"])
    assert first.exit_code == 0, first.output
    assert _adopted(first.stdout) == 0
    clock.advance(60)
    with MemoryService.open(settings, clock=clock) as memory:  # changed in the source since
        memory.update(ids[0], content="note 0, edited in the source")
        memory.forget(ids[1])
        memory.remember("note 4")
    target_settings = Settings(db=target, embedder="none", graph_extractor="none")
    clock.advance(60)
    with MemoryService.open(target_settings, clock=clock) as copy:  # and in the target
        copy.update(ids[2], content="note 2, edited in the target")
    again = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target), "--json"])
    assert again.exit_code == 0, again.output
    assert _adopted(again.stdout) == 0
    assert "note:" not in again.stderr
    assert json.loads(again.stdout)["removed"]["memories"] == 1


def test_a_run_that_fails_after_adopting_still_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target, _, _, _ = _older_copy(tmp_path)

    def failing(copier: object, table: object) -> None:
        raise StorageError("the disk is full")

    # The memories' batches are committed, then a later table fails: the adoption holds.
    monkeypatch.setattr(moving._Copier, "table", failing)
    failed = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert failed.exit_code != 0
    said = " ".join(failed.stderr.split())
    assert "note: 1 memory the target already held under the source's ids" in said
    monkeypatch.undo()
    again = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target), "--json"])
    assert again.exit_code == 0, again.output
    assert _adopted(again.stdout) == 0  # adopted by the failed run already


def test_a_batch_rolled_back_adopts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target, _, kept, _ = _older_copy(tmp_path)
    settings = Settings(db=source, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as memory:
        clash = memory.remember("a memory the target holds another of").id
    connection = apsw.Connection(str(target))
    connection.execute(
        "INSERT INTO memories(id, namespace, content, kind, created_at, updated_at)"
        " SELECT ?, namespace, 'the target''s own', kind, '2020-01-01T00:00:00.000000Z',"
        " updated_at FROM memories WHERE id = ?",
        (clash, kept),
    )
    connection.close()
    failed = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert failed.exit_code != 0
    assert f"memory {clash!r}" in str(failed.exception)
    assert "note:" not in failed.stderr  # the batch that adopted was rolled back


def test_a_target_whose_core_memory_conflicts_leaves_an_older_source_unmigrated(
    tmp_path: Path,
) -> None:
    # Refused once the source was open (adversarial pass b67): the source was upgraded
    # by then, so the older recalld could no longer open it, and nothing was copied.
    source, target = tmp_path / "memories.db", tmp_path / "team.db"
    with MemoryService.open(Settings(db=source, embedder="none", graph_extractor="none")) as memory:
        memory.core.apply("user", [{"action": "add", "content": "likes tea"}])
    _source(source, KNOWN - 1)
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")) as memory:
        memory.core.apply("user", [{"action": "add", "content": "likes coffee"}])
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert "holds 1 other entries in the target" in str(result.exception)
    assert _newest(source) == KNOWN - 1  # before: KNOWN
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")) as memory:
        assert memory.core.state("user").entries == ["likes coffee"]


def test_a_target_core_memory_holding_the_same_entries_is_no_conflict(tmp_path: Path) -> None:
    # The same entries, reached at another version (a change counter of its own): refused
    # as "1 other entries" though they were the source's, after the older source's
    # upgrade, which the check before the upgrade lets by (review of pass b67).
    source, target = tmp_path / "memories.db", tmp_path / "team.db"
    with MemoryService.open(Settings(db=source, embedder="none", graph_extractor="none")) as memory:
        memory.core.apply("user", [{"action": "add", "content": "likes tea"}])
    _source(source, KNOWN - 1)
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")) as memory:
        memory.core.apply("user", [{"action": "add", "content": "likes coffee"}])
        memory.core.apply("user", [{"action": "remove", "old_text": "likes coffee"}])
        memory.core.apply("user", [{"action": "add", "content": "likes tea"}])
        version = memory.core.version()
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code == 0, result.output  # before: 1, "holds 1 other entries"
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")) as memory:
        assert memory.core.state("user").entries == ["likes tea"]
        assert memory.core.version() == version  # the target's own: none went back


def test_a_target_whose_api_token_conflicts_leaves_an_older_source_unmigrated(
    tmp_path: Path,
) -> None:
    # The other refusal b67 checks before the upgrade: a token of the same id with
    # another hash in the target (review of pass b67: only the core memory one was tested).
    source, target = tmp_path / "memories.db", tmp_path / "team.db"
    with MemoryService.open(Settings(db=source, embedder="none", graph_extractor="none")) as memory:
        token_id = TokenRegistry.for_store(memory.store).create("ci", {"*": "read"}).info.id
    _source(source, KNOWN - 1)
    with MemoryService.open(Settings(db=target, embedder="none", graph_extractor="none")):
        pass
    held = apsw.Connection(str(source))
    try:
        row = held.execute("SELECT * FROM tokens WHERE id = ?", (token_id,)).fetchone()
    finally:
        held.close()
    assert row is not None
    written = apsw.Connection(str(target))
    try:
        written.execute(
            "INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?, ?)", (*row[:2], "0" * 64, *row[3:])
        )
    finally:
        written.close()
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert f"API token {token_id!r} is another token in the target" in str(result.exception)
    assert _newest(source) == KNOWN - 1
