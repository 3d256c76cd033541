"""Two ``recalld migrate --to`` runs into one new SQLite file: the one whose source fails
to open removes the target file it made only while it holds nothing another run (or any
client) wrote into it meanwhile (adversarial pass b67). It removed the file and its
``-wal`` whatever they held, so what the other wrote was gone, with the other run's own
copy into the unlinked file reported as finished."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

from recalld.adapters.cli import cli
from recalld.config import Settings
from recalld.errors import StorageError
from recalld.service import MemoryService
from recalld.store import sqlite as sqlite_store
from recalld.store.migrations import MIGRATIONS, Execute
from tests.test_moving_older_source import KNOWN, _source


def test_a_failed_run_leaves_a_target_another_wrote_into_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, target = tmp_path / "memories.db", tmp_path / "copy.db"
    _source(source, KNOWN - 1)
    last = MIGRATIONS[-1]

    def written_meanwhile(execute: Execute) -> None:
        row = execute("PRAGMA database_list").fetchone()
        if Path(str(row[2])).resolve() != source.resolve():
            last(execute)
            return
        # The target this run made is there now: another run (or client) writes into it
        # while this run's source fails to upgrade.
        settings = Settings(db=target, embedder="none", graph_extractor="none")
        with MemoryService.open(settings) as other:
            other.remember("written by the other run")
        raise StorageError(f"migration {KNOWN} cannot upgrade {source}")

    monkeypatch.setattr(sqlite_store, "MIGRATIONS", [*MIGRATIONS[:-1], written_meanwhile])
    result = CliRunner().invoke(cli, ["--db", str(source), "migrate", "--to", str(target)])
    assert result.exit_code != 0
    assert f"migration {KNOWN} cannot upgrade" in str(result.exception)
    assert target.exists()  # before: removed, with what the other run wrote
    connection = apsw.Connection(str(target))
    try:
        assert connection.execute("SELECT content FROM memories").fetchall() == [
            ("written by the other run",)
        ]
    finally:
        connection.close()
