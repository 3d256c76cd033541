"""A worker and a reminder scheduler whose SQLite file was replaced under the process (a
backup restored while it ran) stop, said once, instead of failing every poll for as long
as the process runs (adversarial pass c68)."""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from pathlib import Path

import pytest

from recalld.config import Settings
from recalld.errors import DatabaseReplacedError, StorageError
from recalld.intentions.scheduler import Scheduler
from recalld.recollection.cue import Recollection
from recalld.service import MemoryService
from tests.restore_support import restore_under

# Bounded waits for threads that end within milliseconds; generous for a loaded CI machine.
THREAD_END_SECONDS = 60


def test_the_error_is_a_storage_error() -> None:
    # Caught as every database failure is (REST 503 storage_error, CLI exit 1).
    assert issubclass(DatabaseReplacedError, StorageError)


def test_a_worker_stops_once_its_database_was_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="hashing", graph_extractor="none")
    with MemoryService.open(settings) as service:
        service.remember("queued for the worker")
        worker = service.new_worker()
        restore_under(db)
        with caplog.at_level(logging.WARNING, logger="recalld"):
            runner = threading.Thread(target=worker.run_forever)
            runner.start()
            runner.join(THREAD_END_SECONDS)
            alive = runner.is_alive()
            if alive:
                worker.stop_soon()
                runner.join(THREAD_END_SECONDS)
        assert not alive, "the worker went on after its database was replaced"
        assert isinstance(worker.stopped_by, DatabaseReplacedError)
        said = [
            record for record in caplog.records if "moved, deleted or replaced" in record.message
        ]
        assert len(said) == 1
        assert said[0].levelno == logging.ERROR


def test_a_reminder_scheduler_stops_once_its_database_was_replaced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def replaced() -> datetime | None:
        raise DatabaseReplacedError("live.db was moved, deleted or replaced")

    def run_due(now: datetime) -> list[Recollection]:
        raise AssertionError("nothing is due")

    settings = Settings(embedder="none", graph_extractor="none", scheduler_poll_seconds=0.01)
    scheduler = Scheduler(run_due, replaced, settings, clock=lambda: datetime.now().astimezone())
    with caplog.at_level(logging.WARNING, logger="recalld"):
        runner = threading.Thread(target=scheduler.run_forever)
        runner.start()
        runner.join(THREAD_END_SECONDS)
        alive = runner.is_alive()
        if alive:
            scheduler.stop(THREAD_END_SECONDS)
    assert not alive, "the scheduler went on after its database was replaced"
    assert scheduler.gave_up.is_set()
    assert isinstance(scheduler.stopped_by, DatabaseReplacedError)
    said = [record for record in caplog.records if "moved, deleted or replaced" in record.message]
    assert [record.levelno for record in said] == [logging.ERROR]


def test_recalld_worker_exits_1_once_its_worker_stopped_on_a_replaced_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # So a supervisor (systemd's Restart=on-failure) starts it again on the restored file.
    from recalld.adapters.cli import main
    from recalld.worker import Worker

    def stopped_on_a_replaced_file(worker: Worker, **_: object) -> None:
        worker.stopped_by = DatabaseReplacedError("live.db was moved, deleted or replaced")

    monkeypatch.setattr(Worker, "run_forever", stopped_on_a_replaced_file)
    monkeypatch.setenv("RECALLD_EMBEDDER", "hashing")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    monkeypatch.setattr("sys.argv", ["recalld", "--db", str(tmp_path / "m.db"), "worker"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    assert "moved, deleted or replaced" in capsys.readouterr().err


def test_recalld_worker_with_only_a_scheduler_exits_1_once_it_stopped_on_a_replaced_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # No embedder nor extractor: `recalld worker` only waits while its scheduler runs.
    from recalld.adapters.cli import main

    def stopped_on_a_replaced_file(scheduler: Scheduler) -> None:
        scheduler.stopped_by = DatabaseReplacedError("live.db was moved, deleted or replaced")
        scheduler.gave_up.set()

    monkeypatch.setattr(Scheduler, "run_forever", stopped_on_a_replaced_file)
    monkeypatch.setenv("RECALLD_EMBEDDER", "none")
    monkeypatch.setenv("RECALLD_GRAPH_EXTRACTOR", "none")
    monkeypatch.setattr("sys.argv", ["recalld", "--db", str(tmp_path / "m.db"), "worker"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    assert "moved, deleted or replaced" in capsys.readouterr().err


def test_the_scrubber_stops_once_its_database_was_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A server's third background thread (review of pass c68): it logged "could not check
    # for pending scrubs ... moved, deleted or replaced" every second for as long as it ran.
    db = tmp_path / "live.db"
    settings = Settings(db=db, embedder="none", graph_extractor="none", scrub_poll_seconds=0.01)
    with MemoryService.open(settings) as service:
        scrubber = service.scrubber
        restore_under(db)
        with caplog.at_level(logging.WARNING, logger="recalld"):
            scrubber.watch()
            runner = scrubber._thread
            assert runner is not None
            runner.join(THREAD_END_SECONDS)
            alive = runner.is_alive()
        assert not alive, "the scrubber went on after its database was replaced"
        said = [
            record for record in caplog.records if "moved, deleted or replaced" in record.message
        ]
        assert [record.levelno for record in said] == [logging.ERROR]
