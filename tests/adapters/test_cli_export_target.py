"""``recalld export FILE`` never replaces the database it exports, under any spelling."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
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


class _KilledTooEarlyError(Exception):
    """SIGTERM reached the test's own handler: the command installed none."""


def test_export_ended_by_sigterm_leaves_no_partial_file_and_exits_143(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed mid-way (a service stop, `timeout`), it left `.memories.jsonl.<pid>.partial`:
    # a hidden copy of the memories exported so far, which no `forget` reaches.
    database = tmp_path / "memories.db"
    settings = Settings(db=database, embedder="none", graph_extractor="none")
    with MemoryService.open(settings) as memory:
        memory.remember("Anna moved to Paris")
    target = tmp_path / "memories.jsonl"
    target.write_text("the previous export\n")

    def export(self: MemoryService, *args: object, **kwargs: object) -> Iterator[str]:
        yield '{"content": "written before the signal"}'
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before the next line
        yield '{"content": "never written"}'

    def guard(number: int, frame: object) -> None:
        raise _KilledTooEarlyError  # without the command's handler: fail, do not kill pytest

    previous = signal.signal(signal.SIGTERM, guard)
    try:
        monkeypatch.setattr(MemoryService, "export", export)
        result = CliRunner().invoke(
            cli, ["--db", str(database), "export", str(target)], env={"RECALLD_EMBEDDER": "none"}
        )
        assert signal.getsignal(signal.SIGTERM) is guard  # put back after the export
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not isinstance(result.exception, _KilledTooEarlyError)
    assert result.exit_code == 143
    assert target.read_text() == "the previous export\n"
    assert [path.name for path in tmp_path.iterdir() if "partial" in path.name] == []


def test_backup_ended_by_sigterm_leaves_no_partial_file_and_exits_143(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It left `.recalld-backup-*.partial` (and its -journal) beside DEST.
    import recalld.store.sqlite_file as sqlite_file

    database = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=database, embedder="none", graph_extractor="none")) as m:
        m.remember("Anna moved to Paris")
    copies = tmp_path / "copies"
    copies.mkdir()
    match_mode = sqlite_file._match_mode

    def copied(*args: object) -> None:
        match_mode(*args)  # type: ignore[arg-type]
        os.kill(os.getpid(), signal.SIGTERM)  # the whole copy made, not yet published

    def guard(number: int, frame: object) -> None:
        raise _KilledTooEarlyError

    previous = signal.signal(signal.SIGTERM, guard)
    try:
        monkeypatch.setattr(sqlite_file, "_match_mode", copied)
        result = CliRunner().invoke(
            cli, ["--db", str(database), "backup", str(copies)], env={"RECALLD_EMBEDDER": "none"}
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not isinstance(result.exception, _KilledTooEarlyError)
    assert result.exit_code == 143
    assert list(copies.iterdir()) == []


def test_shell_ended_by_sigterm_during_an_export_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shell took the export's exit for a line's own and went on to the next line.
    database = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=database, embedder="none", graph_extractor="none")) as m:
        m.remember("Anna moved to Paris")

    def export(self: MemoryService, *args: object, **kwargs: object) -> Iterator[str]:
        yield '{"content": "written before the signal"}'
        os.kill(os.getpid(), signal.SIGTERM)
        yield '{"content": "never written"}'

    def guard(number: int, frame: object) -> None:
        raise _KilledTooEarlyError

    previous = signal.signal(signal.SIGTERM, guard)
    try:
        monkeypatch.setattr(MemoryService, "export", export)
        result = CliRunner().invoke(
            cli,
            ["--db", str(database), "shell"],
            input=f"export {tmp_path / 'out.jsonl'}\nremember 'after the signal'\n",
            env={"RECALLD_EMBEDDER": "none"},
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert result.exit_code == 143
    with MemoryService.open(Settings(db=database, embedder="none", graph_extractor="none")) as m:
        assert m.stats().count == 1  # the line after the signal never ran


def test_export_keeps_a_sigterm_handler_installed_outside_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # signal.signal() answers None for a handler a host program installed in C; putting
    # that None back after the write was a TypeError, a finished export a traceback.
    database = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=database, embedder="none", graph_extractor="none")) as m:
        m.remember("Anna moved to Paris")
    installed: list[object] = []
    real_signal = signal.signal

    def from_c(number: int) -> object:
        return None if number == signal.SIGTERM else signal.default_int_handler

    def record(number: int, handler: object) -> object:
        if number != signal.SIGTERM:
            return real_signal(number, handler)  # type: ignore[arg-type]
        installed.append(handler)
        if handler is None:
            raise TypeError("signal handler must be signal.SIG_IGN, signal.SIG_DFL, or a callable")
        return None  # what was there came from C

    monkeypatch.setattr(signal, "getsignal", from_c)
    monkeypatch.setattr(signal, "signal", record)
    target = tmp_path / "memories.jsonl"
    result = CliRunner().invoke(
        cli, ["--db", str(database), "export", str(target)], env={"RECALLD_EMBEDDER": "none"}
    )
    assert result.exit_code == 0, result.output
    assert "Anna moved to Paris" in target.read_text()
    assert installed == []  # the host's handler was left in place


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("backup", ""), "'DESTINATION'"),
        (("export", " "), "'[FILE]'"),
        (("migrate", "--to", ""), "'--to'"),
        (("migrate", "--to", "copy.db", "--from", ""), "'--from'"),
    ],
)
def test_an_empty_path_is_a_usage_error_that_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, arguments: tuple[str, ...], named: str
) -> None:
    # Adversarial pass a65: `recalld backup ""` ("$BACKUP_DIR" unset) wrote the copy into
    # the current directory and exited 0, as if "." had been given.
    database = tmp_path / "memories.db"
    with MemoryService.open(Settings(db=database, embedder="none")) as memory:
        memory.remember("Anna moved to Paris")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = CliRunner().invoke(cli, ["--db", str(database), *arguments])
    assert result.exit_code == 2
    assert f"Invalid value for {named}: is empty" in result.stderr
    assert list(work.iterdir()) == []
