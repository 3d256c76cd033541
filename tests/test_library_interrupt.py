"""A KeyboardInterrupt during a write leaves no transaction open behind it.

An interrupt that landed just after a write's ``BEGIN IMMEDIATE`` (before its
rollback handler was in place) left the thread's connection inside that
transaction: the file's write lock stayed held, so every other writer waited,
and every later write of the thread failed with "cannot start a transaction
within a transaction" until the process ended.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import pytest

from recalld.config import Settings
from recalld.service import MemoryService
from recalld.store.sqlite import SQLiteStore
from recalld.store.sqlite_connection import SQLiteDatabase


def _database(service: MemoryService) -> SQLiteDatabase:
    store = service.store
    assert isinstance(store, SQLiteStore)
    database: SQLiteDatabase = store._database
    return database


def test_an_interrupt_just_after_begin_rolls_the_write_back(
    service: MemoryService, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.remember("before the interrupt")
    database = _database(service)
    leave = SQLiteDatabase._leave
    fired: list[bool] = []

    def interrupted(self: SQLiteDatabase, local: Any) -> None:
        leave(self, local)
        # The first operation that returns with a transaction open is the write's BEGIN:
        # the interrupt arrives there, as Ctrl-C can.
        if not fired and not self.connection().get_autocommit():
            fired.append(True)
            raise KeyboardInterrupt

    monkeypatch.setattr(SQLiteDatabase, "_leave", interrupted)
    with pytest.raises(KeyboardInterrupt):
        service.remember("interrupted")
    assert fired
    monkeypatch.setattr(SQLiteDatabase, "_leave", leave)
    assert database.connection().get_autocommit()  # no transaction left open
    # This thread writes again, and so does another connection (no write lock held).
    assert service.remember("after the interrupt").status == "created"
    with MemoryService.open(settings) as other:
        assert other.remember("from another connection").status == "created"
    contents = {memory.content for memory in service.list_memories().memories}
    assert contents == {"before the interrupt", "after the interrupt", "from another connection"}


def test_a_transaction_left_open_is_rolled_back_before_the_next_write(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    database = _database(service)
    connection = database.connection()
    # As an interrupt between a write's BEGIN and its rollback handler leaves it.
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("DELETE FROM memory_tags")
    with caplog.at_level(logging.WARNING, logger="recalld.store.sqlite_connection"):
        receipt = service.remember("after the interrupted write", tags=["kept"])
    assert receipt.status == "created"
    assert "interrupted write left open" in caplog.text
    assert connection.get_autocommit()
    assert service.get(receipt.id).tags == ["kept"]
    assert service.core.apply("user", [{"action": "add", "content": "a fact"}])


@contextmanager
def _interrupt_after_begin() -> Iterator[list[bool]]:
    """A KeyboardInterrupt as the first statement that leaves a transaction open returns
    (a ``BEGIN``), where Ctrl-C can land: a profiler sees every return from C."""
    fired: list[bool] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "c_return" or fired or getattr(arg, "__name__", "") != "execute":
            return
        connection = getattr(arg, "__self__", None)
        if isinstance(connection, apsw.Connection) and not connection.get_autocommit():
            fired.append(True)
            sys.setprofile(None)
            raise KeyboardInterrupt

    sys.setprofile(profile)
    try:
        yield fired
    finally:
        sys.setprofile(None)


def _writable(path: Path) -> bool:
    """Whether another connection can take the file's write lock at once."""
    other = apsw.Connection(str(path))
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return True
    except apsw.BusyError:
        return False
    finally:
        other.close()


def test_an_interrupt_just_after_a_snapshot_read_begins_ends_it(service: MemoryService) -> None:
    # The signal features' read opened its snapshot (BEGIN) before its try: a Ctrl-C
    # there left the thread reading that snapshot, and holding back checkpoints, for ever.
    connection = _database(service).connection()
    with _interrupt_after_begin() as fired, pytest.raises(KeyboardInterrupt):
        service.store.context.with_channel("default", "image", datetime.now(UTC))
    assert fired
    assert connection.get_autocommit()


def test_an_interrupt_just_after_a_migration_begins_leaves_no_lock(db_path: Path) -> None:
    # Opening ran each migration's BEGIN IMMEDIATE before its try: the interrupted open's
    # connection (kept alive by the traceback, as a REPL keeps the last one) held the
    # file's write lock, so no other process could write it.
    with _interrupt_after_begin() as fired, pytest.raises(KeyboardInterrupt) as interrupted:
        MemoryService.open(Settings(db=db_path, embedder="none", graph_extractor="none"))
    assert fired
    assert interrupted.traceback  # still holding the interrupted frames
    assert _writable(db_path)


def test_an_interrupt_just_after_the_keyword_index_begins_leaves_no_lock(db_path: Path) -> None:
    # As above, for the FTS5 index made on open when it is missing.
    settings = Settings(db=db_path, embedder="none", graph_extractor="none")
    MemoryService.open(settings).close()
    with apsw.Connection(str(db_path)) as connection:
        connection.execute("DROP TABLE memories_fts")
    with _interrupt_after_begin() as fired, pytest.raises(KeyboardInterrupt) as interrupted:
        MemoryService.open(settings)
    assert fired
    assert interrupted.traceback
    assert _writable(db_path)
